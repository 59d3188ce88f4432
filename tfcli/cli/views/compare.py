"""``list -s``: a sweep's combinations, one row each, the best marked, with what each figure means."""

from __future__ import annotations

import json

from rich.markup import escape
from rich.table import Table

from tfcli.cli.console import out
from tfcli.sweeps.aggregate import Row


def number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def show_comparison(rows: list[Row], target: float | None, *, as_json: bool = False) -> None:
    if as_json:
        out().print_json(json.dumps([row.as_json() for row in rows]))
        return
    table = Table(box=None, pad_edge=False)
    table.add_column("")
    table.add_column("combination", no_wrap=True)
    table.add_column("seeds", no_wrap=True)
    table.add_column("final IQM [95% CI]", no_wrap=True)
    if target is not None:
        table.add_column("reached", no_wrap=True)
        table.add_column("to target", no_wrap=True)
    table.add_column("wall s", no_wrap=True)
    for row in rows:
        final = "-" if row.iqm is None else f"{row.iqm:.1f} [{row.ci_low:.1f}, {row.ci_high:.1f}]"
        if row.partial:
            final += " (partial)"
        cells = ["*" if row.best else "", row.label, f"{row.completed}/{row.runs}", final]
        if target is not None:
            cells += [f"{row.target_reached}/{row.completed or row.runs}", number(row.target_timesteps_iqm, 0)]
        cells += [number(row.wall_seconds_mean, 0)]
        table.add_row(*(escape(cell) for cell in cells))
    out().print(table)
    notes = [
        "final: each seed's mean return over the last 10% of its timesteps; IQM over seeds, 95% stratified-bootstrap CI"
    ]
    if target is not None:
        notes.append(
            f"reached / to target: seeds whose 20-episode moving average reached {target:g}; IQM of their timesteps"
        )
    notes.append("wall s: mean per trial" + ("; * best" if any(row.best for row in rows) else ""))
    for note in notes:
        out().print(note, highlight=False)
