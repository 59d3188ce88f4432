"""``tfcli validate FILE...``: check experiment and cluster specs and print them fully resolved."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tfcli.cli.console import err, out


def validate(
    files: Annotated[list[Path], typer.Argument(help="Spec files (YAML or JSON), or names from the config library.")],
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="Only report problems: nothing for a valid file (no resolved spec, no valid: line)."
        ),
    ] = False,
    build: Annotated[
        bool,
        typer.Option(
            "--build/--no-build",
            help="Build each experiment's environment and agent and step them once, as the trainer does "
            "(seconds each; --no-build checks the schema only, which does not prove the trainer can run it).",
        ),
    ] = True,
) -> None:
    """Validate experiment and cluster specs; print each fully resolved (YAML), or every problem found.

    A file with an agent or an environment is an experiment spec; any other is a cluster spec. An experiment is
    valid when the trainer can build and step it: its environment and agent are built and stepped once.
    Exit code 0 when all are valid, 2 when any is not.
    """
    from rich.markup import escape

    from tfcli.experiments.preflight import build_experiment
    from trainer.kernel.errors import InvalidInput
    from trainer.kernel.spec import ConfigLibrary, Experiment, load_any, to_yaml
    from trainer.kernel.spec.documents import display_path
    from trainer.kernel.spec.translation import collect_notes

    library = ConfigLibrary.for_project()
    invalid = 0
    for index, file in enumerate(files):
        try:
            with collect_notes() as notes:
                loaded = load_any(file, library=library)
        except InvalidInput as error:
            invalid += 1
            for line in error.problems:
                err().print(f"[bold red]invalid:[/] {escape(line)}")
            continue
        for note in [] if quiet else notes:  # quiet: a valid file says nothing, only problems are reported
            err().print(f"note: {note}", markup=False, highlight=False)
        kind = "experiment" if isinstance(loaded.spec, Experiment) else "cluster"
        built = ""
        if build and isinstance(loaded.spec, Experiment):
            try:
                built = build_experiment(loaded.spec, shown=display_path(loaded.path) if loaded.path else str(file))
            except InvalidInput as error:
                invalid += 1
                for line in error.problems:
                    err().print(f"[bold red]invalid:[/] {escape(line)}")
                continue
        if quiet:
            continue
        err().print(f"[green]valid:[/] {escape(str(file))} ({kind} '{escape(loaded.spec.name)}')")
        if built:
            err().print(f"  {escape(built)}")
        if index:
            out().print("---")
        out().print(f"# {kind} spec resolved from {file}", markup=False)
        out().print(to_yaml(loaded.spec), markup=False, end="")
    if invalid:
        err().print(f"{invalid} of {len(files)} spec file(s) invalid")
        raise typer.Exit(2)
