"""``tfcli tensorboard [LOGDIR]``: TensorBoard over a project's runs, from tfcli's own environment.

A ``uv tool install``-ed tfcli puts only ``tfcli`` on PATH, and a ``tfcli init`` project has no Python environment of
its own, so ``tensorboard`` or ``uv run tensorboard`` there finds none, or one without the ``pkg_resources`` that
TensorBoard 2.12 imports. TensorBoard comes with tfcli's TensorFlow (and setuptools with tfcli, pinned below 81 for
``pkg_resources``), so running it with tfcli's interpreter works wherever ``tfcli`` does.
"""

from __future__ import annotations

from typing import Annotated

import typer


def tensorboard(
    logdir: Annotated[str, typer.Argument(help="The folder of event files (default: all runs of the project).")] = (
        "experiments"
    ),
    port: Annotated[int, typer.Option("--port", help="The port to serve on.")] = 6006,
    host: Annotated[str, typer.Option("--host", help="The address to serve on.")] = "localhost",
) -> None:
    """Start TensorBoard on LOGDIR (scalars, and the HParams dashboard of every experiment and sweep trial)."""
    import os
    import sys
    from pathlib import Path

    from trainer.kernel.errors import InvalidInput

    if not Path(logdir).is_dir():
        raise InvalidInput(f"LOGDIR: no folder {logdir} here", hint="run it in a tfcli project, or name the folder")
    command = [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--port", str(port), "--host", host]
    sys.stdout.flush()
    os.execv(sys.executable, command)  # TensorBoard in this process's place: Ctrl-C and its exit code are its own
