"""The options several ``tfcli experiment`` commands share, spelled once."""

from __future__ import annotations

from typing import Annotated

import typer

Name = Annotated[str, typer.Option("--experiment", "-e", help="Experiment name (a folder under experiments/).")]
OptionalName = Annotated[str | None, typer.Option("--experiment", "-e", help="Experiment name.")]
Spec = Annotated[str | None, typer.Option("--file", "-f", help="Experiment spec: a path or a config-library name.")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
SweepName = Annotated[str | None, typer.Option("--sweep", "-s", help="A sweep: act on all its trials.")]
Cluster = Annotated[
    str | None, typer.Option("--cluster", "-c", help="As on this shared cluster (`start -c`); default: its own.")
]
Wait = Annotated[
    bool | None,
    typer.Option("--wait/--detach", help="Wait for the end (default locally) or return at once (default on GKE)."),
]
