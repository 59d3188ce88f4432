"""``experiment plan / render``: what a run's stack would deploy, offline (no Pulumi CLI, no cloud account)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated

import typer

from tfcli.cli.console import err, out
from tfcli.cli.context import CliContext
from tfcli.cli.experiment.options import BackendName, Cluster, Json, OptionalName, Spec, SweepName, chosen_backend


def plan(
    experiment: OptionalName = None,
    file: Spec = None,
    cluster: Cluster = None,
    as_json: Json = False,
    sweep: SweepName = None,
    local: Annotated[
        bool, typer.Option("--local", help="The processes `start --local` would run on this machine instead.")
    ] = False,
    backend: BackendName = None,
) -> None:
    """Offline: the resources the experiment's (-s: sweep's) stack declares, key inputs and estimated hourly cost;
    --backend NAME (--local): what `start --backend NAME` would make there instead."""
    from tfcli.cli.views.plan import show_plan
    from tfcli.gke.planning import plan as make_plan
    from tfcli.gke.planning import plan_data, planned, prices_for

    ctx = CliContext()
    chosen = chosen_backend(local, backend)
    if chosen not in (None, "gke"):  # the stack is the default plan, whichever backend trains the run
        show_backend_plan(ctx.backends.plan_on(ctx.run(experiment=experiment, sweep=sweep), chosen, cluster), as_json)
        return
    if sweep is not None or (experiment is not None and file is None):
        target = ctx.backends.plan(ctx.run(experiment=experiment, sweep=sweep), cluster)
    else:
        target = planned(ctx.store, experiment=experiment, file=file, cluster=cluster)
    from tfcli.gke.image_plan import image_plan

    result = make_plan(target, prices_for(ctx.store.project, target))
    image = image_plan(target.config)  # the trainer image the run pulls, when the project builds it
    if as_json:
        out().print_json(json.dumps(plan_data(target, result) | ({"image": image.to_data()} if image else {})))
        return
    show_plan(target, result)
    if image is not None:
        from tfcli.cli.views.image_plan import show_image_plan

        show_image_plan(image)


def show_backend_plan(found: object, as_json: bool) -> None:
    """A backend's own plan: the local one's table, any other's fields (a plan is a dataclass)."""
    from tfcli.cli.views.plan import show_local_plan
    from tfcli.local.backend import LocalPlan

    if isinstance(found, LocalPlan):
        if as_json:
            out().print_json(json.dumps(dataclasses.asdict(found) | {"processes": found.processes}))
        else:
            show_local_plan(found)
        return
    fields = dataclasses.asdict(found) if dataclasses.is_dataclass(found) and not isinstance(found, type) else {}
    if as_json:
        out().print_json(json.dumps(fields, default=str))
    else:
        out().print("\n".join(f"{key}: {value}" for key, value in fields.items()) or str(found), markup=False)


def render(
    experiment: OptionalName = None,
    file: Spec = None,
    cluster: Cluster = None,
    sweep: SweepName = None,
    parallel: Annotated[
        int | None,
        typer.Option(
            "--parallel", "-p", help="With -s: trials at a time (default: as `start -s` chooses, the file's parallel)."
        ),
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the YAML to this file.")] = None,
) -> None:
    """Offline: the Kubernetes objects (YAML) the experiment's (-s: sweep's) stack would apply."""
    from tfcli.gke.planning import planned, planned_sweep
    from tfcli.gke.planning import render as render_yaml
    from trainer.kernel.errors import InvalidInput

    ctx = CliContext()
    if sweep is not None:
        if experiment is not None or file is not None:
            raise InvalidInput("give exactly one of -e NAME, -f SPEC or -s SWEEP")
        run = ctx.run(sweep=sweep)
        target = planned_sweep(run.project, run.sweep(), shared_cluster=cluster, parallelism=parallel)
    elif parallel is not None:
        raise InvalidInput("--parallel: only with -s SWEEP (a sweep's trials at a time)")
    else:
        target = planned(ctx.store, experiment=experiment, file=file, cluster=cluster)
    text = render_yaml(target)
    if note := target.note():
        from rich.markup import escape

        err().print(f"[yellow]note:[/] {escape(note)}")
    if output is None:
        typer.echo(text, nl=False)
        return
    from trainer.kernel.files import atomic_write_text
    from trainer.kernel.spec.documents import display_path

    atomic_write_text(output, text)
    err().print(f"Wrote {display_path(output)}")
