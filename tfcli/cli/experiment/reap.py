"""``tfcli experiment reap``: stop the GKE experiments that ended or outlived their ``ttl``, results downloaded, so
nothing bills after the work is done — what the scheduled CI job runs (.github/workflows/reap.yml)."""

from __future__ import annotations

import typer

from tfcli.cli.console import err, out
from tfcli.cli.context import CliContext


def reap() -> None:
    """Stop (download, then destroy) every GKE experiment that completed, paused at max_cost or is past its ttl;
    then destroy every idle shared cluster past its ttl.

    Exit 1 when one could not be stopped (the others still are)."""
    from datetime import UTC, datetime

    ctx = CliContext()
    reaped = ctx.backends.reap(ctx.store, now=datetime.now(UTC))
    if not reaped:
        out().print("Nothing to reap: no GKE experiment has ended or outlived its ttl, no idle cluster its ttl.")
    for one in reaped:
        (err() if one.error else out()).print(one.summary(), markup=False)
    if any(one.error for one in reaped):
        raise typer.Exit(1)
