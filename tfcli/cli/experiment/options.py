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
BackendName = Annotated[
    str | None,
    typer.Option(
        "--backend",
        metavar="NAME",
        help="Train there: a registered backend (local, gke); default: tfcli.yaml's backend, else gke with a GCP "
        "project, else local.",
    ),
]


def chosen_backend(local: bool, backend: str | None) -> str | None:
    """``--local`` is ``--backend local``; None: neither was given (the project's default)."""
    if local and backend not in (None, "local"):
        from trainer.kernel.errors import InvalidInput

        raise InvalidInput(f"--local and --backend {backend} contradict each other (--local is --backend local)")
    return "local" if local else backend
