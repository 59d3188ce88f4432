"""``cluster list``: the project's shared clusters, their shape, status and hourly cost."""

from __future__ import annotations

from typing import Annotated

import typer

from tfcli.cli.console import out, print_json
from tfcli.cli.context import CliContext


def list_(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
    """The project's shared clusters: location, nodes, GPUs, spot, status and hourly cost."""
    from tfcli.gke.clusters import list_clusters

    ctx = CliContext()
    rows = list_clusters(ctx.project, stacks=ctx.stacks())
    if as_json:
        print_json([row.as_json() for row in rows])
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
