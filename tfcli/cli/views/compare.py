"""``list -s``: a sweep's combinations, one row each, the best marked, with what each figure means; ``compare``:
runs side by side by the spec keys that differ."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from tfcli.cli.console import out, print_json

if TYPE_CHECKING:  # numpy (the aggregate's) stays out of `tfcli --help`
    from tfcli.runs.comparison import ComparedRun, Comparison
    from tfcli.sweeps.aggregate import Row


def number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def show_comparison(rows: list[Row], target: float | None, *, as_json: bool = False) -> None:
    if as_json:
        print_json([row.as_json() for row in rows])
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
        if row.pruned and not row.completed:
            final += " (pruned)"
        elif row.partial:
            final += " (partial)"
        cells = ["*" if row.best else "", row.label, f"{row.completed}/{row.runs}", final]
        if target is not None:
            cells += [f"{row.target_reached}/{row.completed or row.runs}", number(row.target_timesteps_iqm, 0)]
        cells += [number(row.wall_seconds_mean, 0)]
        table.add_row(*(escape(cell) for cell in cells))
    print_wide(table)  # piped at 80 columns, rich dropped the best's `*` first
    notes = [
        "final: each seed's mean return over the last 10% of its timesteps; IQM over seeds, 95% stratified-bootstrap CI"
    ]
    if target is not None:
        notes.append(
            f"reached / to target: seeds whose 20-episode moving average reached {target:g}; IQM of their timesteps"
        )
    if any(row.pruned for row in rows):
        notes.append("pruned: early stopping ended its trials at a rung; scored where they stopped, never the best")
    notes.append("wall s: mean per trial" + ("; * best" if any(row.best for row in rows) else ""))
    for note in notes:
        out().print(note, highlight=False)


def value_text(row: ComparedRun, key: str) -> str:
    """A spec value as the spec would say it; ``-`` where the run has no such key."""
    if key not in row.values:
        return "-"
    value = row.values[key]
    return json.dumps(value) if isinstance(value, list | dict | bool) or value is None else str(value)


def final_text(row: ComparedRun) -> str:
    if row.final_return is None:
        return "-"
    text = f"{row.final_return:.1f}"
    if row.ci_low is not None and row.ci_high is not None:
        text += f" [{row.ci_low:.1f}, {row.ci_high:.1f}]"
    return text + (" ~" if row.final_kind == "mean_last_100" else "")


def show_run_comparison(comparison: Comparison) -> None:
    """One table: a row per run (or combination), a column per differing key, then what each run reached."""
    sweep = comparison.kind == "sweep"
    costs = any(row.cost_usd is not None for row in comparison.rows)
    table = Table(box=None, pad_edge=False)
    if sweep:
        table.add_column("")
    table.add_column("combination" if sweep else "experiment", no_wrap=True)
    for key in comparison.keys:
        table.add_column(key, no_wrap=True)
    table.add_column("seeds" if sweep else "state", no_wrap=True)
    table.add_column("final IQM [95% CI]" if sweep else "final return", no_wrap=True)
    table.add_column("timesteps", no_wrap=True, justify="right")
    table.add_column("wall s", no_wrap=True, justify="right")
    if costs:
        table.add_column("cost $", no_wrap=True, justify="right")
    for row in comparison.rows:
        cells = (["*" if row.best else ""] if sweep else []) + [row.name]
        cells += [value_text(row, key) for key in comparison.keys]
        cells += [row.state, final_text(row), number(row.timesteps, 0), number(row.wall_seconds, 1)]
        if costs:
            cells.append(number(row.cost_usd, 2))
        table.add_row(*(escape(cell) for cell in cells))
    print_wide(table)
    for note in comparison.notes:
        out().print(note, highlight=False, markup=False)


def print_wide(table: Table) -> None:
    """A table at its natural width: piped, a console is 80 columns, which would cut a wide one's numbers off, so
    it is rendered at its width and written as text (the console never wraps). On a terminal, as the terminal is."""
    console = out()
    natural = console.measure(table, options=console.options.update_width(10_000)).maximum
    if console.is_terminal or natural <= console.width:
        console.print(table)
        return
    import io

    from rich.console import Console

    buffer = io.StringIO()
    Console(file=buffer, width=natural, highlight=False, color_system=None).print(table)
    console.print(buffer.getvalue(), end="", markup=False, highlight=False)
