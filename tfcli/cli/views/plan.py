"""``tfcli experiment plan``'s table: the declared resources with their key inputs, then the hourly estimate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.markup import escape

from tfcli.cli.console import out

if TYPE_CHECKING:
    from infra.plan import Plan
    from tfcli.gke.planning import Planned
    from tfcli.local.backend import LocalPlan


def _inputs(inputs: dict[str, Any]) -> str:
    parts = []
    for key, value in inputs.items():
        if value is None or value == {}:
            continue
        if isinstance(value, dict):
            value = next(iter(value.values())) if len(value) == 1 else ", ".join(f"{k}={v}" for k, v in value.items())
        parts.append(f"{key}={value}")
    return "  ".join(parts)


def short_type(type_: str) -> str:
    """``gcp:container/nodePool:NodePool`` -> ``gcp:NodePool`` (the provider and the kind)."""
    if type_.startswith("pulumi:providers:"):
        return f"provider:{type_.removeprefix('pulumi:providers:')}"
    parts = type_.split(":")
    return f"{parts[0]}:{parts[-1]}" if len(parts) > 2 else type_


def _usd(value: float) -> str:
    return f"${value:,.2f}/h"


def _node_time(usd_per_hour: float, what: str) -> str:
    """``max_cost``'s node-time line: the allowance per start (trainer/kernel/budget.py) and what it costs at this
    price."""
    from trainer.kernel.budget import NODE_START_SECONDS, SCALE_DOWN_SECONDS, START_ALLOWANCE_SECONDS, counted_usd

    usd = counted_usd(usd_per_hour, 0.0, 1, START_ALLOWANCE_SECONDS)
    return (
        f"max_cost also counts node time: {START_ALLOWANCE_SECONDS // 60} min per start of {what} "
        f"({NODE_START_SECONDS // 60} min node start-up and image pull, {SCALE_DOWN_SECONDS // 60} min autoscaler "
        f"scale-down after it ends), ${usd:,.2f} a start at its {_usd(usd_per_hour)}"
    )


def show_plan(target: Planned, result: Plan) -> None:
    from tfcli.gke.planning import spot_alternative

    console = out()
    console.print(f"[bold]Stack {escape(result.stack)}[/]: {len(result.resources)} resources")
    if note := target.note():
        console.print(f"[yellow]note:[/] {escape(note)}")
    for row in result.summary():  # one line per resource (the terminal wraps long ones), children indented
        indent = "  " if row["parent"] else ""
        inputs = _inputs(row["inputs"])
        console.print(
            f"{indent}[bold]{escape(short_type(row['type']))}[/] {escape(row['name'])}  {escape(inputs)}".rstrip()
        )
    cost = result.cost
    console.print(
        f"\n[bold]Estimated cost[/] ({cost.region} list prices of {cost.as_of}, from {escape(cost.source)}; an "
        "estimate, not a bill): "
        f"[bold]{_usd(cost.usd_per_hour)}[/] running (~${cost.usd_per_month:,.0f}/month), "
        f"{_usd(cost.idle_usd_per_hour)} idle, {_usd(cost.max_usd_per_hour)} at most"
    )
    for line in cost.lines:
        unit = "not in the price table" if line.unit_usd_per_hour is None else _usd(line.unit_usd_per_hour)
        console.print(f"  {line.count:g} x {escape(line.item)}: {unit}")
    if (alternative := spot_alternative(result)) is not None:
        now, other = alternative
        then = "on-demand" if now == "spot" else "spot"
        console.print(
            f"  learner nodes are {now}; as {then}: {_usd(other.usd_per_hour)} running, "
            f"{_usd(other.max_usd_per_hour)} at most"
        )
    for note in cost.notes:
        console.print(f"  note: {escape(note)}")
    if target.run_usd_per_hour is not None:
        console.print(f"  {_node_time(target.run_usd_per_hour, 'the run')}")
    if target.trials is not None:
        parallelism = int(result.outputs.get("parallelism", 1))
        waves = -(-target.trials // parallelism)
        console.print(
            f"\n[bold]Sweep[/] {escape(target.name)}: {target.trials} trials in one Indexed Job, {parallelism} at a "
            f"time ({waves} wave(s)); the whole sweep costs about {waves} x one trial's duration x the running price "
            "above."
        )
        if target.trial_usd_per_hour is not None:
            console.print(
                f"  per trial: [bold]{_usd(target.trial_usd_per_hour)}[/] (its share of a learner node — of a GPU "
                "where the pool shares them — and of the CPU node and fee)"
            )
            console.print(f"  {_node_time(target.trial_usd_per_hour, 'a trial')}")


def show_local_plan(plan: LocalPlan) -> None:
    """``plan --local``: what one experiment runs here, and a sweep's trials at a time on this machine's cores."""
    workers = f" and {plan.env_workers} env-worker process(es)" if plan.env_workers else ""
    out().print(
        f"[bold]{escape(plan.name)}[/] on this machine ({plan.run_mode}): a supervisor, its trainer{workers}; "
        f"{plan.cores} core(s) busy per run"
    )
    if plan.parallel is not None:
        out().print(
            f"  {plan.parallel} trial(s) at a time ({plan.parallel * plan.cores} of this machine's "
            f"{plan.machine_cores} cores); `start -s --parallel N` chooses another number"
        )
    out().print("  cost: nothing beyond this machine's own")
