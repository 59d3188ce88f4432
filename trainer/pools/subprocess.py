"""Subprocess pool: one process per environment, over multiprocessing pipes, stepping in parallel.

For environments whose step costs more than the pipe round trip (Atari with frame skipping, ~0.5 ms a step against
~0.1 ms for a round trip): a batched step sends every action first and then collects every result, so the
environments step at the same time on other cores while the trainer waits.

Processes are started with ``spawn``, never ``fork``: forking a process that has TensorFlow loaded copies its
thread pools in an unusable state, and a spawned worker imports only gymnasium and the environment adapter —
never TensorFlow (``tests/trainer/test_pools.py`` checks it). Workers ignore SIGINT and SIGTERM: the trainer
decides when to stop (a Ctrl-C reaches the whole process group) and closes them; if the trainer dies, the pipe
breaks and they exit.

An environment whose process dies (killed, out of memory) is restarted and its episode reported aborted, up to
``max_restarts`` times; an exception inside the environment is a real failure and is raised in the trainer.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.pools.base import Step
from trainer.pools.recipe import EnvironmentRecipe

log = logging.getLogger(__name__)

_CONTEXT = multiprocessing.get_context("spawn")


def _failure(error: BaseException) -> tuple[str, str]:
    if isinstance(error, InvalidInput):
        return "invalid", error.message
    return "error", f"{type(error).__name__}: {error}\n{traceback.format_exc()}"


def _serve(connection: Connection, recipe: EnvironmentRecipe, index: int) -> None:
    """The worker process: make environment ``index``, then answer reset/step/close until told or orphaned."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        environment = recipe.make(index)
        ready = {
            "states": environment.states(),
            "actions": environment.actions(),
            "limit": recipe.agent_limit(environment),
        }
    except BaseException as error:
        connection.send(_failure(error))
        return
    connection.send(("ready", ready))
    try:
        while True:
            try:
                command, payload = connection.recv()
            except (EOFError, OSError):
                return  # the trainer is gone
            if command == "close":
                return
            try:
                result = environment.reset() if command == "reset" else recipe.step(environment, payload)
            except BaseException as error:
                connection.send(_failure(error))
                return
            connection.send(("ok", result))
    finally:
        environment.close()


class _Lost(Exception):
    """The worker process died or its pipe broke."""


@dataclass
class _Worker:
    process: Any  # multiprocessing's SpawnProcess
    connection: Connection
    restarts: int = 0


class SubprocessPool:
    def __init__(
        self, recipe: EnvironmentRecipe, size: int, *, start_timeout: float = 300.0, max_restarts: int = 3
    ) -> None:
        self._recipe = recipe
        self._start_timeout = start_timeout
        self._max_restarts = max_restarts
        self._workers: list[_Worker] = []
        self._ready: dict[str, Any] = {}
        try:
            self._workers = [self._spawn(index) for index in range(size)]
            for index in range(size):
                self._ready = self._wait_ready(index)
        except BaseException:
            self.close()
            raise

    def _spawn(self, index: int) -> _Worker:
        ours, theirs = _CONTEXT.Pipe()
        process = _CONTEXT.Process(
            target=_serve, args=(theirs, self._recipe, index), name=f"trainer-env-{index}", daemon=True
        )
        process.start()
        theirs.close()  # only the worker holds its end, so its death reads as EOF here
        return _Worker(process, ours)

    def _wait_ready(self, index: int) -> dict[str, Any]:
        worker = self._workers[index]
        if not worker.connection.poll(self._start_timeout):
            raise TfcliError(f"environment {index}: its process did not start within {self._start_timeout:.0f} s")
        ready: dict[str, Any] = self._receive(index)
        return ready

    def _receive(self, index: int) -> Any:
        worker = self._workers[index]
        try:
            kind, payload = worker.connection.recv()
        except (EOFError, OSError) as error:
            worker.process.join(timeout=1)
            raise _Lost(f"environment {index}: its process exited (code {worker.process.exitcode})") from error
        if kind == "invalid":
            raise InvalidInput(payload)
        if kind == "error":
            raise TfcliError(f"environment {index} failed: {payload}")
        return payload

    def _send(self, index: int, message: tuple[str, Any]) -> bool:
        try:
            self._workers[index].connection.send(message)
            return True
        except (BrokenPipeError, EOFError, OSError):
            return False

    def _restart(self, index: int, reason: str) -> None:
        worker = self._workers[index]
        if worker.restarts >= self._max_restarts:
            raise TfcliError(f"{reason}; it died {worker.restarts + 1} times, giving up")
        log.warning("%s; restarting it (the episode under way is aborted)", reason)
        worker.connection.close()
        if worker.process.is_alive():
            worker.process.kill()
        worker.process.join(timeout=5)
        fresh = self._spawn(index)
        fresh.restarts = worker.restarts + 1
        self._workers[index] = fresh
        self._wait_ready(index)

    @property
    def size(self) -> int:
        return len(self._workers)

    def states(self) -> dict[str, Any]:
        return dict(self._ready["states"])

    def actions(self) -> dict[str, Any]:
        return dict(self._ready["actions"])

    def max_episode_timesteps(self) -> int | None:
        limit: int | None = self._ready["limit"]
        return limit

    def _exchange(self, indices: Sequence[int], messages: Sequence[tuple[str, Any]]) -> list[Any]:
        """Send every message, then collect every answer; a lost worker's answer is a ``_Lost``."""
        sent = [self._send(index, message) for index, message in zip(indices, messages, strict=True)]
        answers: list[Any] = []
        for index, was_sent in zip(indices, sent, strict=True):
            try:
                if not was_sent:
                    raise _Lost(f"environment {index}: its process is gone")
                answers.append(self._receive(index))
            except _Lost as lost:
                answers.append(lost)
        return answers

    def reset(self, indices: Sequence[int]) -> list[Any | None]:
        answers = self._exchange(indices, [("reset", None)] * len(indices))
        for position, (index, answer) in enumerate(zip(indices, answers, strict=True)):
            while isinstance(answer, _Lost):
                self._restart(index, str(answer))
                answer = self._exchange([index], [("reset", None)])[0]
            answers[position] = answer
        return answers

    def step(self, indices: Sequence[int], actions: Sequence[Any]) -> list[Step]:
        answers = self._exchange(indices, [("step", action) for action in actions])
        steps: list[Step] = []
        for index, answer in zip(indices, answers, strict=True):
            if isinstance(answer, _Lost):
                self._restart(index, str(answer))
                steps.append(Step(states=None, terminal=0, reward=0.0, aborted=True))
            else:
                steps.append(answer)
        return steps

    def close(self) -> None:
        for index in range(len(self._workers)):
            self._send(index, ("close", None))
        for worker in self._workers:
            worker.process.join(timeout=5)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(timeout=5)
            worker.connection.close()
        self._workers = []
