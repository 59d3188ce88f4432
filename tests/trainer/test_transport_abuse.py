"""Strangers and stalling learners cannot keep an env-worker from its learner (issue 21, the transport rows).

In a pod the env-worker listens on 0.0.0.0, so anyone who can reach the port may open connections. Before the fix,
40 silent TCP connections filled its 32 handshake slots and the learner was refused until they timed out (5 s, and
again as soon as they were reopened); an authenticated peer stalling mid-frame held the worker in ``recv`` for 60 s.
Everything binds to 127.0.0.1; a second source address on loopback (127.0.0.2) stands for another pod.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from trainer_testkit import free_port, trainer_process

from trainer.env_worker import serve
from trainer.kernel.spec import Experiment
from trainer.transport import Connection, Server, TransportError, connect

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

TOKEN = "abuse-test-token"
SERVED_WITHIN = 2.0  # seconds: a learner on loopback is served in milliseconds when nothing holds it up
SILENT = 40


@pytest.fixture(scope="module")
def worker_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A real ``python -m trainer env-worker`` (CartPole, default limits and timeouts) on 127.0.0.1."""
    spec = tmp_path_factory.mktemp("abuse") / "experiment.yaml"
    spec.write_text(
        "name: abuse\nenvironment: {level: CartPole-v1}\nagent: {agent: ppo}\ntotal_timesteps: 100\n"
        "run_mode: distributed\nnum_workers: 1\n"
    )
    port = free_port()
    process = trainer_process(
        *("env-worker", "--spec", str(spec), "--host", "127.0.0.1", "--port", str(port)), token=TOKEN
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip() == f"env-worker listening on 127.0.0.1:{port}", (line, process.poll())
        yield port
    finally:
        process.kill()
        process.communicate()


def _open(port: int, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))


def _exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count and (chunk := sock.recv(count - len(data))):
        data += chunk
    return data


def _frame(sock: socket.socket) -> bytes:
    """One whole frame as it came (its length too), or b"" where the server closed the connection first."""
    with contextlib.suppress(ConnectionResetError):
        head = _exactly(sock, 4)
        if len(head) == 4:
            (size,) = struct.unpack(">I", head)
            body = _exactly(sock, size)
            if len(body) == size:
                return head + body
    return b""


def _seen(sock: socket.socket) -> bytes:
    """Wait until the server has dealt with this connection: its greeting, or its close (b"") if it refused it."""
    return _frame(sock)


def _served(port: int) -> float:
    """Connect as the learner does, say hello, and return how long it took until the answer."""
    start = time.monotonic()
    client = connect("127.0.0.1", port, token=TOKEN, connect_timeout=SERVED_WITHIN)
    try:
        client.send(["hello"])
        status, hello = client.recv()
    finally:
        client.close()
    assert status == "ok" and hello["actions"] == {"type": "int", "shape": (), "num_values": 2}
    return time.monotonic() - start


def test_forty_silent_connections_do_not_keep_the_learner_out(worker_port: int) -> None:
    silent = [_open(worker_port) for _ in range(SILENT)]
    try:
        for sock in silent:
            _seen(sock)  # the worker has accepted (or refused) every one of them before the learner comes
        assert _served(worker_port) < SERVED_WITHIN
    finally:
        for sock in silent:
            sock.close()


def test_a_flood_from_another_address_never_costs_the_learner_its_handshake(worker_port: int) -> None:
    stop = threading.Event()
    opened: list[int] = []

    def flood() -> None:  # keeps opening silent connections from 127.0.0.2 (up to 500), never closing one
        held: list[socket.socket] = []
        while not stop.is_set() and len(held) < 500:
            with contextlib.suppress(OSError):
                held.append(_open(worker_port, "127.0.0.2"))
                opened.append(1)
        stop.wait()
        for sock in held:
            sock.close()

    thread = threading.Thread(target=flood, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while len(opened) < 2 * SILENT:  # the flood is well under way (more than every limit) first
            assert time.monotonic() < deadline and thread.is_alive()
            time.sleep(0.01)
        times = [_served(worker_port) for _ in range(5)]
    finally:
        stop.set()
        thread.join(10)
    assert max(times) < SERVED_WITHIN, times


def test_a_learner_stalling_mid_request_does_not_keep_the_next_one_waiting(worker_port: int) -> None:
    stalled = connect("127.0.0.1", worker_port, token=TOKEN)
    sock: socket.socket = stalled._sock
    sock.sendall(struct.pack(">I", 100) + b"\x00" * 10)  # 10 bytes of a 100-byte request, then nothing
    try:
        assert _served(worker_port) < SERVED_WITHIN  # 60 s before: the worker sat in recv on the stalled one
        sock.settimeout(5)
        with contextlib.suppress(ConnectionResetError):
            assert sock.recv(1) == b""  # and the stalled one was let go (replaced by the newer learner)
    finally:
        stalled.close()


def test_one_address_holds_at_most_eight_handshakes_and_the_oldest_go_first() -> None:
    server = Server("127.0.0.1", 0, token=TOKEN, handshake_timeout=30)
    port = server.address[1]
    try:
        flood = [_open(port, "127.0.0.2") for _ in range(SILENT)]
        greetings = [_seen(sock) for sock in flood]
        assert all(greetings), "every newcomer gets its nonce: none is refused for the ones before it"
        for sock in flood[:-8]:  # evicted, oldest first, each told why
            assert b"more than 8 handshakes in progress from 127.0.0.2" in _frame(sock)
            assert _frame(sock) == b""
        for sock in flood[-8:]:  # the newest eight are still waiting for their answer
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):
                sock.recv(1)
        learner = connect("127.0.0.1", port, token=TOKEN, connect_timeout=SERVED_WITHIN)
        accepted: list[Connection] = []
        deadline = time.monotonic() + 5
        while not accepted and time.monotonic() < deadline:
            accepted += server.poll(None, 0.5)[0]
        assert [c.peer.split(":")[0] for c in accepted] == ["127.0.0.1"]
        for connection in (learner, *accepted):
            connection.close()
        for sock in flood:
            sock.close()
    finally:
        server.close()


CARTPOLE = Experiment(
    name="abuse-test",
    environment={"level": "CartPole-v1"},
    agent={"agent": "ppo"},
    total_timesteps=100,
    run_mode="distributed",
    num_workers=1,
)


@pytest.fixture
def quick_worker() -> Iterator[int]:
    """A CartPole env-worker served from a thread, whose messages must be whole within 0.5 s; yields its port."""
    ready = threading.Event()
    ports: list[int] = []

    def on_ready(host: str, port: int) -> None:
        ports.append(port)
        ready.set()

    options: dict[str, Any] = {"host": "127.0.0.1", "port": 0, "token": TOKEN, "ready": on_ready}
    thread = threading.Thread(target=serve, args=(CARTPOLE,), kwargs={**options, "message_timeout": 0.5}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not ready.wait(0.05):
        assert thread.is_alive() and time.monotonic() < deadline, "the worker did not start"
    yield ports[0]
    stopper = connect("127.0.0.1", ports[0], token=TOKEN)
    stopper.send(["close", True])
    stopper.recv()
    stopper.close()
    thread.join(10)
    assert not thread.is_alive()


def test_a_learner_stalling_mid_request_is_dropped_after_the_message_timeout(
    quick_worker: int, caplog: pytest.LogCaptureFixture
) -> None:
    stalled = connect("127.0.0.1", quick_worker, token=TOKEN)
    sock: socket.socket = stalled._sock
    start = time.monotonic()
    sock.sendall(struct.pack(">I", 100) + b"\x00" * 10)
    sock.settimeout(10)
    with contextlib.suppress(ConnectionResetError):
        assert sock.recv(1) == b""
    waited = time.monotonic() - start
    stalled.close()
    assert 0.4 < waited < 5, waited  # the message's deadline (0.5 s for 100 bytes), not a minute
    assert any("stalled" in record.getMessage() for record in caplog.records)
    assert _served(quick_worker) < SERVED_WITHIN


def test_a_send_to_a_peer_that_does_not_read_ends_at_the_message_deadline() -> None:
    ours, theirs = socket.socketpair()
    try:
        for sock in (ours, theirs):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        connection = Connection(ours, peer="stalled", timeout=5.0)
        connection.message_timeout = 0.2
        start = time.monotonic()
        with pytest.raises(TransportError, match="took over"):
            connection.send(b"\x00" * (256 * 1024))  # 0.2 s + 0.25 s for its quarter MiB; nobody reads it
        assert time.monotonic() - start < 2.0
    finally:
        ours.close()
        theirs.close()
