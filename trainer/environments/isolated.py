"""Run code that steps the user's environment in a child process, so that nothing it does can end the command
silently (``tfcli validate``, ``tfcli experiment play``).

An environment may call ``sys.exit`` or ``os._exit`` (directly, or through a library that does), or never return
from ``step()``. In the CLI's own process ``os._exit(0)`` would end the command with exit code 0 and no word. Here
the work runs in a fresh process (multiprocessing's ``spawn``: no TensorFlow threads are forked), sends what it
reports back over a pipe, and ends with its result or its error; a child that ends without either is the
environment's doing, reported in one line naming its file (``InvalidInput``, exit 2). Hangs are the child's stall
watch's to end (:mod:`trainer.stall`, ``step_timeout``); the parent waits as long again plus a margin and then kills
it, should even that not help.

``function(*args, report=callback)`` must be a module-level function (the child imports it by name) whose
arguments and results pickle.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from trainer.kernel.errors import InvalidInput, TfcliError

BUILD_SECONDS = 300.0  # beyond the stall timeout: importing TensorFlow and building an agent on a busy machine


def _child(connection: Connection, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
    def report(item: Any) -> None:
        connection.send(("report", item))

    try:
        connection.send(("done", function(*args, report=report)))
    except InvalidInput as error:
        connection.send(("invalid", (error.problems, error.hint)))
    except TfcliError as error:
        connection.send(("error", (error.message, error.hint)))
    except (SystemExit, KeyboardInterrupt) as error:  # the environment's code ended the process its own way
        text = " ".join(str(error).split())
        connection.send(("exit", f"{type(error).__name__}({text})"))
    except BaseException:  # a bug of tfcli's: the parent reports it as one (``internal error``)
        connection.send(("bug", traceback.format_exc()))
    finally:
        connection.close()


def run_isolated(
    function: Callable[..., Any],
    args: tuple[Any, ...],
    *,
    environment: str | Callable[[], str],
    timeout: float,
    on_report: Callable[[Any], None] | None = None,
) -> Any:
    """``function(*args, report=...)`` in a child process; its result, or its error raised here.

    ``environment`` (the environment's name and file, or what says it when asked) words the error when the child
    dies without an answer;
    ``timeout`` is the stall timeout, after which (plus :data:`BUILD_SECONDS`) a child that is still silent is
    killed. ``SystemExit`` in the child is the environment's code ending the process: ``InvalidInput`` too; any other
    exception is a bug of tfcli's, raised here as a ``RuntimeError`` with the child's traceback.
    """
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, function, args), name="isolated", daemon=True)
    process.start()
    sender.close()
    try:
        while True:
            if not receiver.poll(timeout + BUILD_SECONDS):
                raise InvalidInput(
                    f"environment: {_named(environment)} did not answer within {timeout:g} s (step_timeout)"
                )
            try:
                kind, payload = receiver.recv()
            except EOFError:
                process.join(5)
                raise InvalidInput(
                    f"environment: {_named(environment)} ended the process (exit code {process.exitcode}) before it "
                    "answered: an environment must not call sys.exit or os._exit"
                ) from None
            if kind == "report":
                if on_report is not None:
                    on_report(payload)
                continue
            return _answer(kind, payload, _named(environment))
    finally:
        receiver.close()
        if process.is_alive():
            process.kill()
        process.join(5)


def _named(environment: str | Callable[[], str]) -> str:
    return environment if isinstance(environment, str) else environment()


def _answer(kind: str, payload: Any, environment: str) -> Any:
    if kind == "done":
        return payload
    if kind == "invalid":
        raise InvalidInput(payload[0], hint=payload[1])
    if kind == "error":
        raise TfcliError(payload[0], hint=payload[1])
    if kind == "exit":
        raise InvalidInput(f"environment: {environment} raised {payload}: an environment must not end the process")
    raise RuntimeError(f"the isolated child failed:\n{payload}")
