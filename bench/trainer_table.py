"""The table ``bench.trainer`` prints: one ``Row`` per case, both sides' measurements, the ratios and the goals.

Columns (the module ``bench.trainer`` says what each measures): whole seconds min / median and the peer's median
over ours; CPU seconds, their ratio and per 1,000 timesteps; the steady rates and their ratio; peak memory (summed
PSS) and its ratio against ``MEMORY_GOAL``; the mean return of the last 20 episodes; the case's goals and whether
they were met.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.report import print_table
from bench.trainer_measure import Measurement

if TYPE_CHECKING:
    from bench.trainer import Case

MEMORY_GOAL = 1.5  # at most this many times the peer's peak memory


def _mib(value: float) -> str:
    return f"{value / 2**20:,.0f}"


@dataclass(frozen=True)
class Row:
    case: Case
    budget: int
    ours: list[Measurement]
    theirs: list[Measurement]

    def whole(self, side: list[Measurement]) -> list[float]:
        return [measurement.seconds for measurement in side]

    def steady(self, side: list[Measurement]) -> float:
        return statistics.median([measurement.timeline.steady_rate(self.budget) for measurement in side])

    @property
    def whole_ratio(self) -> float:
        return statistics.median(self.whole(self.theirs)) / statistics.median(self.whole(self.ours))

    def cpu(self, side: list[Measurement]) -> float:
        return statistics.median(measurement.cpu_seconds for measurement in side)

    @property
    def cpu_ratio(self) -> float:
        return self.cpu(self.theirs) / self.cpu(self.ours)

    def cpu_per_thousand(self, side: list[Measurement]) -> str:
        return f"{1000 * self.cpu(side) / self.budget:.2f}"

    @property
    def steady_ratio(self) -> float:
        return self.steady(self.ours) / self.steady(self.theirs)

    @property
    def memory_ratio(self) -> float:
        return max(m.peak_memory for m in self.ours) / max(m.peak_memory for m in self.theirs)

    def verdict(self) -> str:
        misses = []
        if self.case.whole_goal is not None and self.whole_ratio < self.case.whole_goal:
            misses.append("whole")
        if self.case.steady_goal is not None and self.steady_ratio < self.case.steady_goal:
            misses.append("steady")
        if self.case.runner is not None and self.memory_ratio > MEMORY_GOAL:
            misses.append("memory")
        return "ok" if not misses else "MISS " + "+".join(misses)

    def cells(self) -> list[str]:
        def min_median(values: list[float]) -> str:
            return f"{min(values):.1f} / {statistics.median(values):.1f}"

        goals = []
        if self.case.whole_goal is not None:
            goals.append(f"whole >= {self.case.whole_goal:g}x")
        if self.case.steady_goal is not None:
            goals.append(f"steady >= {self.case.steady_goal:g}x")
        if self.case.runner is not None:
            goals.append(f"memory <= {MEMORY_GOAL:g}x")
        return [
            self.case.label,
            self.case.versus_label,
            min_median(self.whole(self.theirs)),
            min_median(self.whole(self.ours)),
            f"{self.whole_ratio:.2f}x",
            f"{self.cpu(self.theirs):.1f} / {self.cpu(self.ours):.1f}",
            f"{self.cpu_ratio:.2f}x",
            f"{self.cpu_per_thousand(self.theirs)} / {self.cpu_per_thousand(self.ours)}",
            f"{self.steady(self.theirs):,.0f}",
            f"{self.steady(self.ours):,.0f}",
            f"{self.steady_ratio:.2f}x",
            f"{_mib(max(m.peak_memory for m in self.theirs))} / {_mib(max(m.peak_memory for m in self.ours))}",
            f"{self.memory_ratio:.2f}x",
            f"{statistics.median(m.timeline.mean_return() for m in self.theirs):.0f} / "
            f"{statistics.median(m.timeline.mean_return() for m in self.ours):.0f}",
            ", ".join(goals),
            self.verdict(),
        ]


HEADER = [
    "case",
    "peer",
    "peer whole s min/med",
    "ours whole s min/med",
    "whole",
    "CPU s peer/ours",
    "CPU",
    "CPU s/1k t peer/ours",
    "peer steady t/s",
    "ours steady t/s",
    "steady",
    "memory MiB peer/ours",
    "memory",
    "return(20) peer/ours",
    "goal",
    "",
]


def print_rows(rows: list[Row]) -> None:
    print_table(HEADER, [row.cells() for row in rows], left={0, 1, 14, 15})
