"""``status`` and ``list``: an experiment's state in lines, a sweep's trials in a table, every experiment in a table."""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from rich.markup import escape
from rich.table import Table

from tfcli.cli.console import err, out
from tfcli.cli.views.compare import number
from tfcli.experiments.status import Status
from tfcli.sweeps.status import SweepStatus


def _warn(text: str) -> None:
    err().print(f"[yellow]warning:[/] {escape(text)}")


def _budget_warning(cost: dict[str, Any] | None) -> str | None:
    if not cost:
        return None
    from tfcli.gke.cost import budget_warning

    counted = cost.get("counted_usd")  # the trainer's own figure, when the learner was handed a price
    return budget_warning(cost["usd"] if counted is None else counted, cost.get("max_cost"))


# States in which the run no longer trains, though its stack (and a cluster of its own) may still be up.
ENDED = ("completed", "paused", "failed", "pruned")


def _still_billing(name: str, state: str, cost: dict[str, Any] | None) -> str | None:
    """The loud line for a run that ended on a cluster of its own that still bills (None while it trains)."""
    rate = (cost or {}).get("billing_usd_per_hour")
    if not rate or state not in ENDED:
        return None
    lines = ", ".join(f"{line['item']} ${line['usd_per_hour']:,.2f}/h" for line in (cost or {})["billing"])
    return (
        f"{name} is {state} but its cluster still bills ${rate:,.2f}/h ({lines}) until "
        f"`tfcli experiment stop -e {name}` downloads the results and destroys it"
    )


@singledispatch
def show_status(status: object) -> None:
    raise TypeError(f"no view for {type(status).__name__}")


@show_status.register
def _experiment(current: Status) -> None:
    out().print(f"[bold]{current.name}[/] ({current.run_mode}, {current.backend}): {current.state}")
    progress = f" ({current.progress:.0%} of {current.budget})" if current.progress is not None else ""
    out().print(f"  {current.timesteps:,} timesteps, {current.episodes:,} episodes{progress}")
    if current.mean_return is not None:
        out().print(f"  mean return (last 100 episodes): {current.mean_return:.1f}")
    if current.wall_seconds:
        speed = current.timesteps_per_second
        recent = ", recent episodes" if current.state == "running" else ""
        rate = f" ({speed:,.0f} timesteps/s{recent})" if speed else ""
        out().print(f"  wall time: {current.wall_seconds:.1f} s{rate}")
    if current.pid:
        out().print(f"  process: {current.pid}")
    if current.detail:
        label = "reason" if current.state in ("paused", "pruned", "waiting") else "error"
        out().print(f"  {label}: {current.detail}", markup=False)
    _show_cluster(current)


def _show_cluster(current: Status) -> None:
    """GKE: the pods' state and the cost so far, with the max_cost warning from 80 %."""
    cluster = current.cluster or {}
    if cluster.get("error"):
        _warn(f"cannot read the cluster: {cluster['error']}")
    elif cluster.get("summary"):
        out().print(f"  pods: {cluster['summary']}", markup=False)
    if current.cost is None:
        return
    cost = current.cost
    limit = f" of max_cost ${cost['max_cost']:,.2f}" if cost.get("max_cost") else ""
    out().print(f"  cost so far: ${cost['usd']:,.2f}{limit} (list prices of {cost['prices_as_of']}; nodes now up)")
    for item in cost["items"]:
        out().print(f"    {item['item']}: {item['hours']:,.2f} h, ${item['usd']:,.2f}", markup=False)
    if cost.get("counted_usd") is not None:
        out().print(
            f"  counted against max_cost: ${cost['counted_usd']:,.2f} "
            f"(the run's ${cost['hourly_price']:,.4f}/h x its training wall time and node time)"
        )
        if cost.get("start_allowance_seconds"):
            out().print(
                f"    node time (start-up, image pull, scale-down): {cost['starts']} start(s) x "
                f"{cost['start_allowance_seconds'] / 60:g} min, ${cost['node_time_usd']:,.2f}"
            )
    if cost.get("billing_usd_per_hour") is not None:
        out().print(f"  billing now: ${cost['billing_usd_per_hour']:,.2f}/h (the cluster's fee and nodes up)")
    if warning := _budget_warning(cost):
        _warn(f"{current.name}: {warning}")
    if loud := _still_billing(current.name, current.state, cost):
        _warn(loud)


@show_status.register
def _sweep(status: SweepStatus) -> None:
    counts = ", ".join(f"{count} {state}" for state, count in sorted(status.counts.items()))
    parallel = f", {status.parallel} at a time" if status.parallel else ""
    out().print(f"[bold]{status.name}[/] (sweep, {status.backend}{parallel}): {status.state} — {counts}")
    if status.detail:
        out().print(f"  {status.detail}", markup=False)
    table = Table("trial", "combination", "seed", "status", "progress", "mean return", box=None, pad_edge=False)
    pods = [current.cluster or {} for _, current in status.trials]
    with_pods = any("pod" in pod for pod in pods)
    if with_pods:
        table.add_column("pod")
    for (trial, current), pod in zip(status.trials, pods, strict=True):
        progress = f"{current.progress:.0%}" if current.progress is not None else "-"
        row = [trial.name, escape(trial.label), str(trial.seed), current.state, progress, number(current.mean_return)]
        if with_pods:
            row.append(escape(pod["pod"] + (f": {pod['reason']}" if pod.get("reason") else "")) if pod else "-")
        table.add_row(*row)
    out().print(table)
    for trial, current in status.trials:  # why a trial ended as it did (the pod column is gone once it is stopped)
        if current.detail and current.state in ("failed", "paused", "pruned", "waiting"):
            out().print(f"  {trial.name} {current.state}: {current.detail}", markup=False)
    if unreadable := next((pod["error"] for pod in pods if "error" in pod), None):
        _warn(f"cannot read the cluster: {unreadable}")


def show_list(statuses: list[Status]) -> None:
    """``list``: one row per experiment; on GKE also its cost so far and its pods."""
    if not statuses:
        out().print("No experiments yet: `tfcli experiment start -f cartpole-ppo` runs the quick-start one.")
        return
    table = Table("name", "backend", "run mode", "status", "progress", "mean return", box=None, pad_edge=False)
    watched = any(s.cluster or s.cost for s in statuses)  # GKE: the pods' state and the cost so far
    if watched:
        table.add_column("cost")
        table.add_column("pods")
    for s in statuses:
        progress = f"{s.progress:.0%}" if s.progress is not None else "-"
        mean = f"{s.mean_return:.1f}" if s.mean_return is not None else "-"
        row = [s.name, s.backend, s.run_mode, s.state, progress, mean]
        if watched:
            row += [f"${s.cost['usd']:,.2f}" if s.cost else "-", (s.cluster or {}).get("brief") or "-"]
        table.add_row(*row)
    out().print(table)
    for s in statuses:
        if s.state == "unknown":
            _warn(f"{s.name}: {s.detail}")
        if unreadable := (s.cluster or {}).get("error"):
            _warn(f"{s.name}: cannot read its cluster: {unreadable}")
        if warning := _budget_warning(s.cost):
            _warn(f"{s.name}: {warning}")
        if loud := _still_billing(s.name, s.state, s.cost):
            _warn(loud)
