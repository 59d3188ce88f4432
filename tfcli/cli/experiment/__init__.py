"""``tfcli experiment ...``: create, run, watch, pause, stop and plot experiments and sweeps.

A command parses its flags, makes one call to the library (a run's backend through ``tfcli.backends``) and shows
the result with :mod:`tfcli.cli.views`. One module per kind of command, as pypa/hatch lays out its command groups.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from tfcli.cli.errors import TfcliGroup
from tfcli.cli.experiment import create, lifecycle, offline, reap, results, watch

app = typer.Typer(
    cls=TfcliGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Create, run, watch, pause, stop and plot experiments.",
)

COMMANDS: dict[str, Callable[..., None]] = {
    "new": create.new,
    "sweep": create.sweep,
    "start": lifecycle.start,
    "resume": lifecycle.resume,
    "list": watch.list_,
    "status": watch.status,
    "compare": watch.compare,
    "logs": watch.logs,
    "pause": lifecycle.pause,
    "stop": lifecycle.stop,
    "reap": reap.reap,
    "download": results.download,
    "play": results.play,
    "plan": offline.plan,
    "render": offline.render,
    "plot": results.plot,
}
for name, command in COMMANDS.items():
    app.command(name)(command)
