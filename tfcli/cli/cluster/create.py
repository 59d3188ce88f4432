"""``cluster create``: a shared cluster's stack, then ``pulumi up``."""

from __future__ import annotations

from typing import Annotated

import typer

from tfcli.cli.console import out
from tfcli.cli.context import CliContext


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
