"""The CLI edge: the only place that turns a ``TfcliError`` into a message and an exit code.

I/O errors (``OSError`` with an errno, TensorFlow's file errors) are not bugs: they get one line too
(:func:`trainer.kernel.errors.io_failure`: what failed, where, the space left), exit 1; anything else is an internal
error.
"""

from __future__ import annotations

import os
from typing import Any

import typer
from typer.core import TyperGroup

from tfcli.cli.console import err
from trainer.kernel.errors import TfcliError, io_failure


def debug_enabled() -> bool:
    """``--debug`` (which sets ``TFCLI_DEBUG``) shows tracebacks instead of one-line messages."""
    return os.environ.get("TFCLI_DEBUG", "").lower() in ("1", "true", "yes")


def report(error: TfcliError) -> None:
    """Print the error's lines to stderr, prefixed so they stand out from normal output."""
    from rich.markup import escape

    for index, line in enumerate(error.lines()):
        prefix = "[bold red]error:[/] " if index == 0 else "       "
        err().print(prefix + escape(line))


class TfcliGroup(TyperGroup):
    """A command group that reports project errors and unexpected ones without a traceback (unless debugging)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except TfcliError as error:
            if debug_enabled():
                raise
            report(error)
            raise SystemExit(error.exit_code) from None
        except (typer.Exit, typer.Abort, typer.TyperException, SystemExit):
            raise
        except KeyboardInterrupt:
            err().print("[yellow]interrupted[/]")
            raise SystemExit(130) from None
        except Exception as error:  # a bug: say so briefly, the traceback is one flag away
            if debug_enabled():
                raise
            failure = io_failure(error)  # not a bug: a full disk, a folder it may not write (what, where, space left)
            if failure is not None:
                report(failure)
                raise SystemExit(failure.exit_code) from None
            from rich.markup import escape

            err().print(f"[bold red]internal error:[/] {escape(type(error).__name__)}: {escape(str(error))}")
            err().print("       run again with --debug (or TFCLI_DEBUG=1) for the traceback, and please report it")
            raise SystemExit(1) from None
