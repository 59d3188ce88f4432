"""``tfcli cluster ...``: shared GKE clusters, each a Pulumi stack of its own, that experiments run on (`-c NAME`).

Commands parse options, call one function of :mod:`tfcli.gke.clusters` and render the result.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from tfcli.cli.console import out
from tfcli.cli.context import CliContext
from tfcli.cli.errors import TfcliGroup

app = typer.Typer(
    cls=TfcliGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Create, list and delete shared GKE clusters (one Pulumi stack each).",
)


@app.command()
def create(
    file: Annotated[
        str | None,
        typer.Option("--file", "-f", help="Cluster spec: a path or a config-library name (optional: flags alone do)."),
    ] = None,
    cluster: Annotated[
        str | None,
        typer.Option("--cluster", "-c", "--name", "-n", help="Name (default: the spec's; required without -f)."),
    ] = None,
    num_nodes: Annotated[
        int | None, typer.Option("--num-nodes", "--size", "-s", help="Nodes to start with (default 3).")
    ] = None,
    machine_type: Annotated[
        str | None, typer.Option("--machine-type", "-m", help="GCE machine type (required without -f).")
    ] = None,
    disk_size: Annotated[
        int | None, typer.Option("--disk-size", "-d", help="Boot disk per node, GB (default 100).")
    ] = None,
    gpu_type: Annotated[
        str | None, typer.Option("--gpu-type", help="GPU type (nvidia-tesla-t4, nvidia-l4, ...).")
    ] = None,
    gpus_per_node: Annotated[int | None, typer.Option("--gpus-per-node", help="GPUs per node.")] = None,
    spot: Annotated[bool | None, typer.Option("--spot/--on-demand", help="Spot VMs (cheaper, reclaimable).")] = None,
) -> None:
    """Create (or repair) a shared cluster from a spec (-f), flags overriding its keys, or from flags alone
    (-n NAME -m MACHINE_TYPE [-s SIZE] [-d DISK_SIZE], as the original client's `cluster create`): its stack,
    then `pulumi up`."""
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.gke.clusters import create_cluster

    overrides = {
        "name": cluster, "num_nodes": num_nodes, "machine_type": machine_type, "disk_size": disk_size,
        "gpu_type": gpu_type, "gpus_per_node": gpus_per_node, "spot": spot,
    }  # fmt: skip
    ctx = CliContext()
    created = create_cluster(ctx.store, file, overrides, observer=RichUpdateObserver(), stacks=ctx.stacks())
    cost = f" (about ${created.usd_per_hour:,.2f}/h while its nodes run)" if created.usd_per_hour is not None else ""
    out().print(f"Cluster '{created.name}' is up{cost}.")
    out().print(f"Run an experiment on it with `tfcli experiment start -e NAME -c {created.name}`")


@app.command("list")
def list_(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
    """The project's shared clusters: location, nodes, GPUs, spot, status and hourly cost."""
    from tfcli.gke.clusters import list_clusters

    ctx = CliContext()
    rows = list_clusters(ctx.project, stacks=ctx.stacks())
    if as_json:
        out().print_json(json.dumps([row.as_json() for row in rows]))
        return
    if not rows:
        out().print("No shared clusters yet: `tfcli cluster create -f single-node-gpu -c shared-t4` makes one.")
        return
    from rich.markup import escape
    from rich.table import Table

    from tfcli.cli.console import err

    table = Table(box=None, pad_edge=False)
    for column in ("name", "location", "nodes", "GPUs/node", "spot", "status", "$/hour"):
        table.add_column(column, no_wrap=True)
    table.add_column("used by", overflow="fold", min_width=7)
    for row in rows:
        cost = f"{row.usd_per_hour:,.2f}" if row.usd_per_hour is not None else "-"
        table.add_row(
            row.name,
            row.location,
            row.nodes,
            row.gpus.replace("nvidia-", ""),
            "yes" if row.spot else "no",
            row.status,
            cost,
            ", ".join(row.experiments) or "-",
        )
    out().print(table)
    for row in rows:
        if row.detail:
            err().print(f"[yellow]warning:[/] {row.name}: {escape(row.detail)}")


@app.command()
def delete(
    cluster: Annotated[list[str] | None, typer.Option("--cluster", "-c", help="Cluster name (repeatable).")] = None,
    all_: Annotated[bool, typer.Option("--all", "-A", help="Every shared cluster of the project.")] = False,
) -> None:
    """Destroy shared clusters and remove their stacks; refused while an experiment runs on one."""
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.errors import InvalidInput
    from tfcli.gke.clusters import delete_clusters
    from tfcli.stackfiles.files import cluster_names

    if bool(cluster) == all_:
        raise InvalidInput("give -c NAME (one or more) or --all")
    ctx = CliContext()
    store = ctx.store
    names = cluster_names(store.project) if all_ else list(cluster or [])
    if not names:
        out().print("No shared clusters to delete.")
        return
    deleted = delete_clusters(store, names, observer=RichUpdateObserver(), stacks=ctx.stacks())
    out().print(f"Deleted {', '.join(deleted)}.")
