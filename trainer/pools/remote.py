"""A pool of remote environments: env-worker processes, each serving E environments, over the trainer's transport.

Index ``i`` of the pool is environment ``i % E`` of worker ``i // E`` (E, the experiment's
``environments_per_worker``, is what every worker's hello says). ``step`` and ``reset`` send one request per worker
(carrying all of its environments that take part) first and then gather the replies, so the workers step in
parallel and the learner pays one round trip per call, not one per worker or environment. A worker that dies, or
whose connection breaks or times out, costs only its own indices: their steps come back aborted, ``reset`` answers
None for them, and a background
thread reconnects with exponential backoff (re-resolving the host each time, as a restarted pod has a new
address); ``reset`` takes the new connection up once it is there. The other workers keep going throughout.
"""

from __future__ import annotations

import contextlib
import logging
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.pools.base import TRUNCATED, Step
from trainer.transport import DEFAULT_MAX_FRAME, Connection, HandshakeRefused, TransportError, connect

log = logging.getLogger(__name__)

ABORTED = Step(states=None, terminal=TRUNCATED, reward=0.0, aborted=True)
_FIRST_RETRY = 0.05  # seconds before the first reconnection attempt; doubles up to max_backoff
_SPEC_KEYS = ("states", "actions", "max_episode_timesteps", "repeat_actions", "environments")
_LOST = object()


def _same(a: Any, b: Any) -> bool:
    """Equality for specs: dicts, sequences (tuple == list), numpy arrays element-wise."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.shape(a) == np.shape(b) and np.all(np.asarray(a) == np.asarray(b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _is_answer(reply: Any, kind: str) -> bool:
    return isinstance(reply, list) and len(reply) == 2 and reply[0] == kind


@dataclass(eq=False)
class _Worker:
    index: int
    address: tuple[str, int]
    connection: Connection | None = None  # in use; touched by the caller's thread only
    ready: tuple[Connection, dict[str, Any]] | None = None  # made by the reconnect thread, taken by the caller's
    thread: threading.Thread | None = None
    failure: str = "not connected yet"
    refused: str | None = None

    @property
    def name(self) -> str:
        return f"env-worker {self.index} ({self.address[0]}:{self.address[1]})"


class RemotePool:
    """``len(addresses)`` environments, index ``i`` served by the env-worker at ``addresses[i]``.

    The constructor waits up to ``startup_timeout`` seconds for every worker (they may still be starting) and
    takes the specs from the first; it raises TfcliError if none answers, if one refuses the token, or if their
    specs disagree. A worker still missing then is left to the background reconnection (its reset answers None).
    ``connect_timeout`` bounds a connection attempt and its handshake, ``io_timeout`` any one read or write
    (an environment step must answer within it), ``max_backoff`` the wait between reconnection attempts.
    """

    def __init__(
        self,
        addresses: Sequence[tuple[str, int]],
        *,
        token: str | None,
        connect_timeout: float = 5.0,
        io_timeout: float = 60.0,
        max_backoff: float = 30.0,
        startup_timeout: float = 300.0,
        max_frame: int = DEFAULT_MAX_FRAME,
    ) -> None:
        if not addresses:
            raise InvalidInput("a remote pool needs at least one env-worker address")
        self._token = token
        self._connect_timeout = connect_timeout
        self._io_timeout = io_timeout
        self._max_backoff = max_backoff
        self._max_frame = max_frame
        self._lock = threading.Condition()
        self._closing = threading.Event()
        self._workers = [_Worker(index, (host, int(port))) for index, (host, port) in enumerate(addresses)]
        self._hello: dict[str, Any] = {}  # the first worker's specs, which every worker must match
        self._reference = ""
        for worker in self._workers:
            self._reconnect_later(worker, delay=0.0)
        try:
            self._start(time.monotonic() + startup_timeout, startup_timeout)
        except BaseException:
            self.close()
            raise

    def _start(self, deadline: float, startup_timeout: float) -> None:
        with self._lock:
            while not all(w.ready for w in self._workers) and not any(w.refused for w in self._workers):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            refused = [w.refused for w in self._workers if w.refused]
            connected = [w for w in self._workers if w.ready]
        if refused:
            raise TfcliError(refused[0])
        if not connected:
            lines = "\n".join(f"  {w.name}: {w.failure}" for w in self._workers)
            raise TfcliError(f"no env-worker answered within {startup_timeout:g}s:\n{lines}")
        reference = connected[0]
        assert reference.ready is not None
        self._hello, self._reference = reference.ready[1], reference.name
        for worker in connected:
            if not self._take_ready(worker):
                raise TfcliError(f"{worker.name} serves a different environment: {worker.failure}")
        for worker in self._workers:
            if worker.connection is None:
                log.warning(
                    "%s is not up after %gs (%s); going on without it", worker.name, startup_timeout, worker.failure
                )

    # -- connecting (background threads) ------------------------------------------------------------------------

    def _reconnect_later(self, worker: _Worker, *, delay: float) -> None:
        with self._lock:
            if self._closing.is_set() or worker.thread is not None:
                return
            worker.thread = threading.Thread(
                target=self._reconnect, args=(worker, delay), name=f"reconnect-{worker.index}", daemon=True
            )
            worker.thread.start()

    def _reconnect(self, worker: _Worker, delay: float) -> None:
        backoff = _FIRST_RETRY
        host, port = worker.address
        while not self._closing.wait(delay * random.uniform(0.8, 1.2)):
            try:
                connection = connect(
                    host,
                    port,
                    token=self._token,
                    connect_timeout=self._connect_timeout,
                    io_timeout=self._connect_timeout,
                    max_frame=self._max_frame,
                )
            except HandshakeRefused as error:
                with self._lock:
                    worker.refused = worker.failure = str(error)
                    self._lock.notify_all()
                log.error("%s", error)
                delay = self._max_backoff
                continue
            except TransportError as error:
                worker.failure = str(error)
                log.debug("%s: %s", worker.name, error)
                delay, backoff = backoff, min(self._max_backoff, backoff * 2)
                continue
            try:
                connection.send(["hello"])
                hello = connection.recv()
                if not _is_answer(hello, "ok"):
                    raise TransportError(f"unexpected answer to hello: {str(hello)[:200]}")
                connection.timeout = self._io_timeout
            except TransportError as error:
                connection.close()
                worker.failure = str(error)
                delay, backoff = backoff, min(self._max_backoff, backoff * 2)
                continue
            with self._lock:
                worker.thread = None
                worker.refused = None
                if self._closing.is_set():
                    connection.close()
                else:
                    worker.ready = (connection, dict(hello[1]))
                    self._lock.notify_all()
                return
        with self._lock:
            worker.thread = None

    def _take_ready(self, worker: _Worker) -> bool:
        """Put a connection the reconnect thread made to use, if its specs agree with the pool's."""
        with self._lock:
            ready, worker.ready = worker.ready, None
        if ready is None:
            return False
        connection, hello = ready
        different = [key for key in _SPEC_KEYS if not _same(hello.get(key), self._hello.get(key))]
        if different:
            connection.close()
            worker.failure = "; ".join(
                f"{key} {hello.get(key)!r} where {self._reference} has {self._hello.get(key)!r}" for key in different
            )
            log.error("%s serves a different environment: %s", worker.name, worker.failure)
            self._reconnect_later(worker, delay=self._max_backoff)
            return False
        worker.connection = connection
        log.info("%s connected", worker.name)
        return True

    def _lose(self, worker: _Worker, reason: object) -> None:
        if worker.connection is not None:
            worker.connection.close()
            worker.connection = None
        worker.failure = str(reason)
        log.warning("%s lost: %s; reconnecting", worker.name, reason)
        self._reconnect_later(worker, delay=_FIRST_RETRY)

    # -- the pool ---------------------------------------------------------------------------------------------------

    @property
    def per_worker(self) -> int:
        """Environments per worker (E), as the workers said."""
        return int(self._hello.get("environments", 1))

    @property
    def size(self) -> int:
        return len(self._workers) * self.per_worker

    def states(self) -> dict[str, Any]:
        return dict(self._hello["states"])

    def actions(self) -> dict[str, Any]:
        return dict(self._hello["actions"])

    def max_episode_timesteps(self) -> int | None:
        limit = self._hello.get("max_episode_timesteps")
        return None if limit is None else int(limit)

    def _exchange(self, operation: str, indices: Sequence[int], payloads: Sequence[Any]) -> list[Any]:
        """Send each worker one ``[operation, [its payloads]]`` request, then gather the replies, one answer per
        index; ``_LOST`` for the indices of a worker that is not (or no longer) there."""
        per_worker = self.per_worker
        groups: dict[int, list[int]] = {}  # worker -> positions in ``indices``
        for k, index in enumerate(indices):
            groups.setdefault(index // per_worker, []).append(k)
        replies: list[Any] = [_LOST] * len(indices)
        sent: list[tuple[list[int], _Worker]] = []
        for number, positions in groups.items():
            worker = self._workers[number]
            if worker.connection is None:
                continue
            try:
                worker.connection.send([operation, [payloads[k] for k in positions]])
                sent.append((positions, worker))
            except TransportError as error:
                self._lose(worker, error)
        errors = []
        for positions, worker in sent:
            connection = worker.connection
            if connection is None:
                continue
            try:
                reply = connection.recv()
            except TransportError as error:
                self._lose(worker, error)
                continue
            if _is_answer(reply, "ok") and isinstance(reply[1], list) and len(reply[1]) == len(positions):
                for k, answer in zip(positions, reply[1], strict=True):
                    replies[k] = answer
            elif _is_answer(reply, "error"):
                errors.append(f"{worker.name}: {reply[1]}")
            else:
                self._lose(worker, f"unexpected reply {str(reply)[:200]}")
        if errors:
            raise TfcliError("; ".join(errors))  # one line, for result.json and the CLI
        return replies

    def reset(self, indices: Sequence[int]) -> list[Any | None]:
        for number in {index // self.per_worker for index in indices}:
            worker = self._workers[number]
            if worker.connection is None and worker.ready is not None:
                self._take_ready(worker)
        replies = self._exchange("reset", indices, [index % self.per_worker for index in indices])
        return [None if reply is _LOST else reply for reply in replies]

    def step(self, indices: Sequence[int], actions: Sequence[Any]) -> list[Step]:
        per_worker = self.per_worker
        payloads = [[index % per_worker, action] for index, action in zip(indices, actions, strict=True)]
        replies = self._exchange("step", indices, payloads)
        steps = []
        lost: set[int] = set()
        for index, reply in zip(indices, replies, strict=True):
            if reply is _LOST or index // per_worker in lost:
                steps.append(ABORTED)
            elif isinstance(reply, list) and len(reply) == 3:
                steps.append(Step(states=reply[0], terminal=int(reply[1]), reward=float(reply[2])))
            else:
                lost.add(index // per_worker)
                self._lose(self._workers[index // per_worker], f"unexpected step reply {str(reply)[:200]}")
                steps.append(ABORTED)
        return steps

    def close(self, *, stop_workers: bool = False) -> None:
        """Disconnect from every worker; ``stop_workers`` also asks them to exit (the run is over for good).

        Without it the workers wait for the next learner (a resumed run).
        """
        self._closing.set()
        connections = [w.connection for w in self._workers if w.connection is not None]
        with self._lock:
            for worker in self._workers:
                if worker.ready is not None:
                    connections.append(worker.ready[0])
                    worker.ready = None
            threads = [w.thread for w in self._workers if w.thread is not None]
        for connection in connections:
            with contextlib.suppress(TransportError):
                connection.send(["close", stop_workers])
        for connection in connections:
            try:
                connection.timeout = min(self._io_timeout, 1.0)
                connection.recv()
            except TransportError:
                pass
            connection.close()
        for worker in self._workers:
            worker.connection = None
        for thread in threads:
            thread.join(timeout=self._connect_timeout + 1.0)
