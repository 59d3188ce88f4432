"""``cluster delete``: destroy shared clusters, refused while a run uses one."""

from __future__ import annotations

from typing import Annotated

import typer

from tfcli.cli.console import out
from tfcli.cli.context import CliContext


def delete(
    cluster: Annotated[list[str] | None, typer.Option("--cluster", "-c", help="Cluster name (repeatable).")] = None,
    all_: Annotated[bool, typer.Option("--all", "-A", help="Every shared cluster of the project.")] = False,
) -> None:
    """Destroy shared clusters and remove their stacks; refused while an experiment or a sweep runs on one."""
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.gke.clusters import delete_clusters
    from tfcli.stackfiles.files import cluster_names
    from trainer.kernel.errors import InvalidInput

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
