"""An environment worker: the environments of one env-worker process served to one learner (distributed mode).

``python -m trainer env-worker --spec SPEC --port PORT [--host HOST]`` calls :func:`serve`. The process imports
gymnasium, never TensorFlow (unless the spec names one of TensorForce's own environments). It steps the
experiment's ``environments_per_worker`` environments (E): environment ``k`` of worker ``i`` is the run's
environment ``i * E + k``, seeded as that environment of a multi-threaded run is. Several environments per worker
let one message carry several steps, so the learner acts for more environments per round trip and per batched act.

Requests and replies are msgpack lists (numpy arrays ride as raw buffers, see :mod:`trainer.transport`)::

    ["hello"]                 -> ["ok", {"states", "actions", "max_episode_timesteps", "repeat_actions",
                                         "environments", ...}]
    ["reset", [k, ...]]       -> ["ok", [states, ...]]                  (a new episode in each environment k)
    ["step", [[k, action], ...]]
                              -> ["ok", [[states, terminal, reward], ...]]  (one agent step each: repeat_actions
                                                                       times, rewards summed, stopping at a terminal)
    ["close", stop_worker]    -> ["ok", null], then the connection ends (and the worker too when stop_worker)

An environment that raises answers ``["error", message]`` and keeps the connection. A learner that disconnects
is simply waited for again, and every new connection starts fresh episodes; a newly authenticated connection
replaces the current one (the learner reconnecting after a failure it noticed before this side did).

How it ends decides the exit code of ``python -m trainer env-worker``: 0 only when the learner said the run is over
(``["close", true]``, sent when the run completes), 143 on SIGTERM or SIGINT (a pause, a spot reclaim, a node
drain, upgrade or repair). The env-worker Job is Indexed: an index whose pod exits 0 is done for good and never
runs again, so a worker that was merely evicted must not exit 0; its Job's podFailurePolicy ignores 143 and pod
disruptions and starts it again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from trainer.kernel.spec import Experiment
from trainer.pools.base import RUNNING
from trainer.pools.recipe import EnvironmentRecipe
from trainer.transport import (
    DEFAULT_MAX_FRAME,
    MESSAGE_TIMEOUT,
    Connection,
    ConnectionClosed,
    Server,
    TransportError,
)

log = logging.getLogger(__name__)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class _Terminated(BaseException):
    """SIGTERM or SIGINT arrived (raised from the signal handler, so it unwinds whatever the worker was doing)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are delivered to the main thread only; a worker in a thread is stopped by its owner
        return
    stopping = False

    def handler(signum: int, frame: Any) -> None:
        nonlocal stopping
        if not stopping:  # once: a second signal must not interrupt the clean-up
            stopping = True
            raise _Terminated(signum)

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)


class _Environments:
    """The served environments (made and stepped as every pool does, see EnvironmentRecipe) and their episodes."""

    def __init__(self, experiment: Experiment, worker_index: int) -> None:
        self.recipe = EnvironmentRecipe.of(experiment)
        self.worker_index = worker_index
        count = experiment.environments_per_worker
        self.envs: list[Any] = []
        try:
            for slot in range(count):
                self.envs.append(self.recipe.make(worker_index * count + slot))
        except BaseException:
            self.close()
            raise
        self.in_episode = [False] * count

    def hello(self) -> dict[str, Any]:
        first = self.envs[0]
        return {
            "states": first.states(),
            "actions": first.actions(),
            "max_episode_timesteps": self.recipe.agent_limit(first),
            "repeat_actions": self.recipe.repeat_actions,
            "environments": len(self.envs),
            "worker_index": self.worker_index,
        }

    def _slot(self, slot: Any) -> int:
        if isinstance(slot, bool) or not isinstance(slot, int) or not 0 <= slot < len(self.envs):
            raise ValueError(f"no environment {slot!r} here (this worker has {len(self.envs)})")
        return slot

    def reset(self, slots: list[Any]) -> list[Any]:
        states = []
        for slot in map(self._slot, slots):
            self.in_episode[slot] = False
            states.append(self.envs[slot].reset())
            self.in_episode[slot] = True
        return states

    def step(self, actions: list[Any]) -> list[list[Any]]:
        replies = []
        for slot, action in actions:
            slot = self._slot(slot)
            if not self.in_episode[slot]:
                raise RuntimeError(f"environment {slot}: step before reset (or after the episode ended): reset first")
            self.in_episode[slot] = False  # until the step went through
            step = self.recipe.step(self.envs[slot], action)
            self.in_episode[slot] = step.terminal == RUNNING
            replies.append([step.states, step.terminal, step.reward])
        return replies

    def restart_episodes(self) -> None:
        self.in_episode = [False] * len(self.envs)

    def close(self) -> None:
        while self.envs:
            self.envs.pop().close()


def _answer(environments: _Environments, request: Any) -> tuple[list[Any], str | None]:
    """The reply to one request and what to do after sending it: None, "close" or "stop"."""
    if not (isinstance(request, list) and request and isinstance(request[0], str)):
        raise ValueError("a request must be a list [operation, ...]")
    operation, arguments = request[0], request[1:]
    if operation == "close":
        return ["ok", None], ("stop" if arguments and arguments[0] is True else "close")
    try:
        if operation == "hello":
            return ["ok", environments.hello()], None
        if operation == "reset" and len(arguments) == 1 and isinstance(arguments[0], list):
            return ["ok", environments.reset(arguments[0])], None
        if operation == "step" and len(arguments) == 1 and isinstance(arguments[0], list):
            if not all(isinstance(pair, list) and len(pair) == 2 for pair in arguments[0]):
                raise ValueError("a step request is a list of [environment, action] pairs")
            return ["ok", environments.step(arguments[0])], None
    except Exception as error:  # the environment's own failure: tell the learner, keep serving
        log.exception("env-worker: %s failed", operation)
        return ["error", f"{operation} failed: {type(error).__name__}: {error}"], None
    return ["error", f"unknown request {operation!r} with {len(arguments)} argument(s)"], None


def _serve_forever(server: Server, environments: _Environments) -> None:
    """Serve learners until one says the run is over (returns); a signal ends it by raising ``_Terminated``."""
    active: Connection | None = None
    try:
        while True:
            accepted, readable = server.poll(active, None)
            for connection in accepted:
                if active is not None:
                    log.info("env-worker: learner %s replaces %s", connection.peer, active.peer)
                    active.close()
                else:
                    log.info("env-worker: learner connected from %s", connection.peer)
                active, readable = connection, False
                environments.restart_episodes()  # a new connection starts fresh episodes
            if active is None or not readable:
                continue
            try:
                # Never waits: a learner stalling mid-request is dropped once the message is past its deadline
                # (Connection.message_timeout), and a new connection replaces it at once.
                received = active.try_recv()
                if received is None:
                    continue
                reply, then = _answer(environments, received[0])
                active.send(reply)
            except ConnectionClosed:
                log.info("env-worker: learner %s disconnected; waiting for the next connection", active.peer)
                then = "close"
            except (TransportError, ValueError) as error:
                log.warning("env-worker: dropped learner %s: %s", active.peer, error)
                then = "close"
            if then is not None:
                active.close()
                active = None
                if then == "stop":
                    log.info("env-worker: the learner asked this worker to stop")
                    return
    finally:
        if active is not None:
            active.close()


def serve(
    experiment: Experiment,
    *,
    host: str,
    port: int,
    token: str | None,
    ready: Callable[[str, int], None] | None = None,
    worker_index: int | None = None,
    message_timeout: float = MESSAGE_TIMEOUT,
    max_frame: int = DEFAULT_MAX_FRAME,
) -> bool:
    """Serve the environments of ``experiment`` (its ``environments_per_worker``) on ``host:port`` until a signal or
    a learner's ``close`` with stop.

    Returns True when the learner said the run is over, False when SIGTERM or SIGINT stopped the worker (only
    handled in the main thread: a worker in another thread is stopped by its owner).

    ``token`` is the shared secret (``TRAINER_TOKEN``); without one only a loopback ``host`` is accepted
    (InvalidInput otherwise, exit code 2). ``port`` 0 picks a free port. Once listening, prints
    ``env-worker listening on HOST:PORT`` and calls ``ready(host, port)``. ``worker_index`` (default: the indexed
    Job's ``JOB_COMPLETION_INDEX``, else the port) is the environment's index: it is seeded with seed + index,
    as environment ``index`` of a multi-threaded run is. ``message_timeout``: seconds a request may take to arrive
    once its first byte has, and a reply to go out (plus a second per MiB); a learner slower than that is dropped.
    """
    run_over = False
    with _stop_on_signals():
        try:
            server = Server(host, port, token=token, max_frame=max_frame, message_timeout=message_timeout)
            try:
                if worker_index is None:
                    index = os.environ.get("JOB_COMPLETION_INDEX", "")
                    worker_index = int(index) if index.isdigit() else server.address[1]
                environments = _Environments(experiment, worker_index)
                try:
                    bound_host, bound_port = server.address
                    print(f"env-worker listening on {bound_host}:{bound_port}", flush=True)
                    if ready is not None:
                        ready(bound_host, bound_port)
                    _serve_forever(server, environments)
                    run_over = True  # a signal during the clean-up below does not change that
                finally:
                    environments.close()
            finally:
                server.close()
        except _Terminated as signalled:
            if not run_over:
                log.warning("env-worker: %s received: stopping (not the end of the run: exit 143)", signalled)
    return run_over
