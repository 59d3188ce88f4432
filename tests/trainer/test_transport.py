"""The learner <-> env-worker transport: large arrays cross intact, strangers are refused, bad frames cost only
their own connection. Everything binds to 127.0.0.1."""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from trainer.env_worker import serve
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import Experiment
from trainer.transport import (
    Connection,
    FrameError,
    HandshakeRefused,
    Server,
    TransportError,
    connect,
)
from trainer.transport.codec import decode, encode

TOKEN = "s3cret-token"


class EchoServer:
    """A transport server in a thread that sends every message back (to the newest client)."""

    def __init__(self, token: str | None, **options: Any) -> None:
        self.server = Server("127.0.0.1", 0, token=token, **options)
        self.port = self.server.address[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        clients: list[Connection] = []
        while not self._stop.is_set():
            accepted, readable = self.server.poll(clients[-1] if clients else None, 0.05)
            clients += accepted
            if readable and not accepted:
                try:
                    clients[-1].send(clients[-1].recv())
                except TransportError:
                    clients.pop().close()
        for client in clients:
            client.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.server.close()


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer(TOKEN)
    yield server
    server.close()


def test_an_atari_frame_and_a_multi_megabyte_array_cross_intact(echo: EchoServer) -> None:
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 256, size=(210, 160, 3), dtype=np.uint8)  # ~100 KB, 25 times TensorForce's limit
    big = rng.standard_normal((1000, 1000)).astype(np.float64)  # 8 MB
    message = {
        "frame": frame,
        "big": big,
        "stacked": rng.integers(0, 256, size=(84, 84, 4), dtype=np.uint8)[:, ::-1],  # not contiguous
        "spec": {"type": "float", "shape": (84, 84, 4), "min_value": np.float32(-1.5)},
        "flags": np.array([True, False]),
        "empty": np.zeros((0, 3), np.int16),
        "scalar": np.int64(7),
        "text": "é",
        "raw": b"\x00\x01",
        "nothing": None,
    }
    client = connect("127.0.0.1", echo.port, token=TOKEN)
    client.send(message)
    back = client.recv()
    client.close()

    assert back.keys() == message.keys()
    for key in ("frame", "big", "stacked", "flags", "empty"):
        assert back[key].dtype == message[key].dtype and back[key].shape == message[key].shape
        np.testing.assert_array_equal(back[key], message[key])
    assert back["frame"].flags.writeable  # observations arrive as ordinary arrays the learner may modify
    assert back["spec"] == {"type": "float", "shape": (84, 84, 4), "min_value": np.float32(-1.5)}
    assert isinstance(back["spec"]["shape"], tuple) and isinstance(back["spec"]["min_value"], np.float32)
    assert isinstance(back["scalar"], np.int64) and back["scalar"] == 7
    assert (back["text"], back["raw"], back["nothing"]) == ("é", b"\x00\x01", None)


def test_a_message_over_the_frame_limit_is_not_sent() -> None:
    server = EchoServer(TOKEN, max_frame=1 << 20)
    try:
        client = connect("127.0.0.1", server.port, token=TOKEN, max_frame=1 << 20)
        with pytest.raises(FrameError, match="frame limit"):
            client.send(np.zeros(2 << 20, np.uint8))
        client.send("still fine")  # nothing was sent, so the connection is still in step
        assert client.recv() == "still fine"
        client.close()
    finally:
        server.close()


def test_object_arrays_are_refused_both_ways() -> None:
    with pytest.raises(TypeError, match="dtype object"):
        encode(np.array([{"a": 1}], dtype=object))
    # A frame that claims an object array (which would need pickle) does not decode.
    body = b"".join(encode(np.zeros(2, np.int64)))
    forged = body.replace(b"<i8", b"|O8")
    with pytest.raises(FrameError, match="malformed"):
        decode(bytearray(forged))


def test_only_a_client_with_the_token_gets_in(echo: EchoServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with pytest.raises(HandshakeRefused, match="TRAINER_TOKEN"):
        connect("127.0.0.1", echo.port, token=None)
    with pytest.raises(HandshakeRefused, match="TRAINER_TOKEN"):
        connect("127.0.0.1", echo.port, token="not-the-token")
    client = connect("127.0.0.1", echo.port, token=TOKEN)
    client.send("hello")
    assert client.recv() == "hello"
    client.close()
    refusals = [r.getMessage() for r in caplog.records if "refused connection" in r.getMessage()]
    assert len(refusals) == 2 and all("authentication failed" in line for line in refusals)


def test_a_client_that_does_not_answer_is_dropped_after_the_handshake_timeout() -> None:
    server = EchoServer(TOKEN, handshake_timeout=0.3)
    try:
        silent = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        silent.recv(4096)  # the greeting
        silent.settimeout(5)
        assert b"no handshake answer" in silent.recv(4096)  # told why, then closed
        assert silent.recv(4096) == b""
        silent.close()
        client = connect("127.0.0.1", server.port, token=TOKEN)
        client.close()
    finally:
        server.close()


CARTPOLE = Experiment(
    name="transport-test",
    environment={"level": "CartPole-v1"},
    agent={"agent": "ppo"},
    total_timesteps=100,
    run_mode="distributed",
    num_workers=1,
)


def test_a_worker_without_a_token_refuses_to_listen_on_every_interface() -> None:
    with pytest.raises(InvalidInput, match="without a token: set TRAINER_TOKEN") as raised:
        serve(CARTPOLE, host="0.0.0.0", port=0, token=None)
    assert raised.value.exit_code == 2


@pytest.fixture
def worker() -> Iterator[int]:
    """A CartPole env-worker (token: TOKEN, frames up to 1 MiB) served from a thread; yields its port."""
    ready = threading.Event()
    ports: list[int] = []

    def on_ready(host: str, port: int) -> None:
        ports.append(port)
        ready.set()

    thread = threading.Thread(
        target=serve,
        args=(CARTPOLE,),
        kwargs={"host": "127.0.0.1", "port": 0, "token": TOKEN, "ready": on_ready, "max_frame": 1 << 20},
        daemon=True,
    )
    thread.start()
    assert ready.wait(30)
    yield ports[0]
    stopper = connect("127.0.0.1", ports[0], token=TOKEN)
    stopper.send(["close", True])
    stopper.recv()
    stopper.close()
    thread.join(10)
    assert not thread.is_alive()


def _raw_authenticated(port: int) -> socket.socket:
    """A plain socket past the handshake, to write bytes no Connection would."""
    connection = connect("127.0.0.1", port, token=TOKEN)
    sock: socket.socket = connection._sock
    return sock


def _hello(port: int) -> dict[str, Any]:
    client = connect("127.0.0.1", port, token=TOKEN)
    client.send(["hello"])
    status, hello = client.recv()
    client.close()
    assert status == "ok"
    return dict(hello)


def _assert_closed_by_peer(sock: socket.socket) -> None:
    sock.settimeout(5)
    with contextlib.suppress(ConnectionResetError):  # closed with our bytes unread: a reset
        assert sock.recv(1) == b""
    sock.close()


@pytest.mark.parametrize(
    "junk",
    [
        struct.pack(">I", 9) + b"\xff" * 9,  # a body that is not a frame
        struct.pack(">I", 6) + struct.pack(">I", 1) + b"\xc1\x00",  # msgpack's never-used byte
        struct.pack(">I", 1 << 30),  # announces 1 GiB: over the worker's 1 MiB limit, refused before reading
    ],
    ids=["garbage", "bad-msgpack", "oversized"],
)
def test_a_bad_frame_closes_its_connection_and_the_worker_serves_the_next_client(
    worker: int, junk: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    sock = _raw_authenticated(worker)
    sock.sendall(junk)
    _assert_closed_by_peer(sock)
    assert any("dropped learner" in record.getMessage() for record in caplog.records)
    assert _hello(worker)["actions"] == {"type": "int", "shape": (), "num_values": 2}


def test_a_real_message_over_the_workers_limit_closes_only_that_connection(worker: int) -> None:
    client = connect("127.0.0.1", worker, token=TOKEN)  # the client's own limit is 64 MiB: it sends
    with pytest.raises(TransportError):  # the worker hangs up on the send (reset) or before answering
        client.send(["step", np.zeros(2 << 20, np.uint8)])
        client.recv()
    client.close()
    assert _hello(worker)["max_episode_timesteps"] == 500


def test_a_bad_handshake_does_not_stop_the_worker(worker: int) -> None:
    sock = socket.create_connection(("127.0.0.1", worker), timeout=5)
    sock.recv(4096)
    sock.sendall(struct.pack(">I", 1 << 20))  # a 1 MiB "answer" to the nonce: over the 4 KiB handshake limit
    assert b"handshake frame" in sock.recv(4096)
    _assert_closed_by_peer(sock)
    with pytest.raises(HandshakeRefused):
        connect("127.0.0.1", worker, token="wrong")
    assert _hello(worker)["repeat_actions"] == 1
