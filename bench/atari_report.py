"""The rows of ``bench.atari``'s first two tables, and the notes on DQN's update counts.

``mode_row``: one run mode's agent steps per second (whole process, trainer, before and after ``start_updating``),
updates, episodes, peak memory and load. ``curve_rows``: the learning curve's mean return per 100k-frame bin beside
the epsilon schedules and the published scores. ``update_notes``: what the measured update counts say against
those the agent spec implies.
"""

from __future__ import annotations

import math
import os
from typing import Any

from bench.atari_reference import DOPAMINE_DQN, RANDOM_SCORE, epsilon_dopamine, epsilon_ours, frames_per_step
from bench.atari_run import Run

FRAMES_PER_BIN = 100_000


def window_rate(lines: list[dict[str, Any]]) -> float | None:
    """Timesteps per second between the first and the last of these finished episodes."""
    if len(lines) < 2 or lines[-1]["wall_seconds"] <= lines[0]["wall_seconds"]:
        return None
    return (lines[-1]["timesteps"] - lines[0]["timesteps"]) / (lines[-1]["wall_seconds"] - lines[0]["wall_seconds"])


def rate_text(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def gib(value: int) -> str:
    return f"{value / 2**30:.2f}"


def mode_row(mode: str, run: Run) -> list[str]:
    result = run.result()
    lines = run.progress()
    start_updating = int(run.spec()["agent"].get("start_updating") or 0)
    before = [line for line in lines if line["timesteps"] <= start_updating]
    after = [line for line in lines if line["timesteps"] > start_updating]
    timesteps = int(result.get("timesteps", 0))
    status = result.get("status", f"no result (exit {run.exit_code})")
    load = sum(run.loads) / len(run.loads) if run.loads else os.getloadavg()[0]
    return [
        mode,
        f"{timesteps:,}",
        f"{run.seconds:,.0f}",
        rate_text(timesteps / run.seconds if run.seconds else None),
        rate_text(result.get("timesteps_per_second")),
        rate_text(window_rate(before)),
        rate_text(window_rate(after)),
        f"{result.get('updates', 0):,} ({expected_updates(run.spec(), timesteps):,})",
        str(len(lines)),
        f"{gib(run.peak_rss_largest)} / {gib(run.peak_rss_total)}",
        f"{load:.2f}",
        status,
    ]


def expected_updates(spec: dict[str, Any], timesteps: int) -> int:
    """Updates the agent spec implies: one every ``update_frequency`` agent steps from ``start_updating`` on."""
    agent = spec["agent"]
    frequency, start = agent.get("update_frequency"), int(agent.get("start_updating") or 0)
    if not isinstance(frequency, int) or frequency <= 0:
        return 0
    return max(0, (timesteps - start) // frequency)


def update_notes(spec: dict[str, Any], runs: list[tuple[str, int, int, int | None]]) -> list[str]:
    """What the measured update counts say, per run: (label, timesteps, updates, first episode's end timestep)."""
    agent = spec["agent"]
    start = int(agent.get("start_updating") or 0)
    frequency = agent.get("update_frequency")
    notes = []
    for label, timesteps, updates, first in runs:
        expected = expected_updates(spec, timesteps)
        if updates > 0 and updates > expected * 1.1:
            notes.append(
                f"{label}: {updates:,} updates, more than the {expected:,} that start_updating={start:,} implies: "
                "TensorForce 0.6.5 drops start_updating once the first episode has ended "
                "(core/models/tensorforce.py: start = where(episodes > 0, 0, start + 2 * horizon))"
            )
        if not isinstance(frequency, int) or frequency <= 0 or first is None or timesteps - first < 100 * frequency:
            continue
        scheduled = (timesteps - first) // frequency  # one every update_frequency from the first episode's end
        if updates < scheduled / 10:
            notes.append(
                f"{label}: {updates:,} updates where one every {frequency} steps from the first episode's end would "
                f"give {scheduled:,}: with parallel_interactions > 1 TensorForce 0.6.5 defaults config.buffer_observe "
                "to 'episode', so the model observes, and updates at most once, per finished episode"
            )
        elif updates < 0.9 * scheduled:
            notes.append(
                f"{label}: {updates:,} updates, {updates / scheduled:.0%} of one every {frequency} steps from the "
                f"first episode's end ({scheduled:,}): TensorForce counts timesteps when it acts and checks for one "
                "update per observe call, so environments whose observe calls fall on the same timestep share one"
            )
    return notes


def update_counts(label: str, run: Run) -> tuple[str, int, int, int | None]:
    result, lines = run.result(), run.progress()
    first = int(lines[0]["timesteps"]) if lines else None
    return label, int(result.get("timesteps", 0)), int(result.get("updates", 0)), first


def curve_rows(run: Run, budget: int) -> tuple[list[list[str]], int]:
    spec = run.spec()
    skip = frames_per_step(spec)
    bin_steps = FRAMES_PER_BIN // skip
    lines = run.progress()
    reached = int(run.result().get("timesteps", lines[-1]["timesteps"] if lines else 0))
    exploration = spec["agent"].get("exploration")
    rows = []
    for index in range(math.ceil(budget / bin_steps)):
        low, high = index * bin_steps, min((index + 1) * bin_steps, budget)
        inside = [line["return"] for line in lines if low < line["timesteps"] <= high]
        frames = high * skip
        ours = epsilon_ours(exploration, high)
        if reached <= low:
            mean = "not reached"
        elif not inside:
            mean = "no episode ended"
        else:
            mean = f"{sum(inside) / len(inside):.1f}" + ("" if reached >= high else f" (to step {reached:,})")
        rows.append(
            [
                f"{low * skip / 1e6:g}-{frames / 1e6:g}M",
                f"{low:,}-{high:,}",
                str(len(inside)),
                mean,
                "—" if ours is None else f"{ours:.3f}",
                f"{epsilon_dopamine(high):.3f}",
                DOPAMINE_DQN.get(frames, "—"),
                f"{RANDOM_SCORE:.0f}",
            ]
        )
    last_frames = math.ceil(budget / bin_steps) * bin_steps * skip
    for frames, reference in sorted(DOPAMINE_DQN.items()):
        if frames > last_frames:
            rows.append([f"{frames / 1e6:.0f}M", f"{frames // skip:,}", "", "not run", "", "", reference, ""])
    return rows, bin_steps
