"""The order the suite's tests run in: the longest first, from each test's seconds recorded in ``tests/costs.json``.

Why: pytest-xdist's ``worksteal`` hands the first half of the collection to one process and the second half to the
other, and a process that runs dry takes the tail half of the other's queue. In collection order a 200-second
trainer journey could start last and leave one core idle for minutes at the end. Run longest first, each queue ends
in short tests, so that what is stolen last is short and both processes end together.

A module's tests stay together, so that a module-scoped fixture (``trainer_testkit.finished_run`` trains once per
module) is still set up once per process: the module with the longest test first (a one-test module of 100 s must
not wait behind a module of many short tests that sum to more: stealing can split the second, not the first), and
within a module its tests longest first. A test not recorded
yet counts :data:`UNRECORDED_SLOW` seconds when it is marked ``slow`` and :data:`UNRECORDED` otherwise.

``uv run pytest --record-costs`` (a whole run, or one file) writes what it measured back into the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path

import pytest

COSTS_FILE = Path(__file__).with_name("costs.json")
UNRECORDED_SLOW = 10.0  # about a trainer process's start with TensorFlow, plus a short training
UNRECORDED = 0.1
RECORDED_FROM = 0.5  # faster tests are left out of the file: their order does not matter


def read_costs(path: Path = COSTS_FILE) -> dict[str, float]:
    """The recorded seconds by test id; none when the file is missing."""
    return {str(k): float(v) for k, v in json.loads(path.read_text()).items()} if path.exists() else {}


def cost_of(test: str, *, slow: bool, costs: Mapping[str, float]) -> float:
    """The test's recorded seconds, or a guess by its marker."""
    return costs.get(test, UNRECORDED_SLOW if slow else UNRECORDED)


def module_of(test: str) -> str:
    return test.split("::", 1)[0]


def longest_first(tests: Iterable[str], cost: Callable[[str], float]) -> list[str]:
    """The tests with each module's kept together: modules by their longest test, then by their summed cost, the most
    first, and within a module its tests by their own cost, the most first (ties keep the collection's order)."""
    modules: dict[str, list[str]] = {}
    for test in tests:
        modules.setdefault(module_of(test), []).append(test)
    costs = [[cost(test) for test in group] for group in modules.values()]
    ranked = sorted(zip(costs, modules.values(), strict=True), key=lambda pair: (-max(pair[0]), -sum(pair[0])))
    order = [group for _, group in ranked]
    return [test for group in order for test in sorted(group, key=lambda test: -cost(test))]


def merged(costs: Mapping[str, float], measured: Mapping[str, float], slow: Collection[str] = ()) -> dict[str, float]:
    """The recorded costs with this run's measurements in place of the old ones (a test now under
    :data:`RECORDED_FROM` seconds leaves the file, unless it is ``slow``: unrecorded, it would count
    :data:`UNRECORDED_SLOW`), sorted by test id so that the file's diffs stay small."""
    result = dict(costs)
    for test, seconds in measured.items():
        if seconds >= RECORDED_FROM or test in slow:
            result[test] = round(seconds, 1)
        else:
            result.pop(test, None)
    return dict(sorted(result.items()))


def write_costs(costs: Mapping[str, float], path: Path = COSTS_FILE) -> None:
    path.write_text(json.dumps(costs, indent=0) + "\n")


class CostOrder:
    """The pytest plugin (tests/conftest.py registers it): orders the collection longest first, after pytest's own
    ordering and the ``-m``/``-k`` deselection (``trylast``); with ``--record-costs`` it sums each test's setup, call
    and teardown as the reports arrive (in the controller under xdist) and writes them into the file at the end."""

    def __init__(self, *, record: bool, path: Path = COSTS_FILE) -> None:
        self.path = path
        self.record = record
        self.measured: dict[str, float] = {}
        self.slow: set[str] = set()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        costs = read_costs(self.path)
        by_id = {item.nodeid: item for item in items}

        def cost(test: str) -> float:
            return cost_of(test, slow=by_id[test].get_closest_marker("slow") is not None, costs=costs)

        items[:] = [by_id[test] for test in longest_first(by_id, cost)]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.record:
            self.measured[report.nodeid] = self.measured.get(report.nodeid, 0.0) + report.duration
            if "slow" in report.keywords:
                self.slow.add(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.record and self.measured and not hasattr(session.config, "workerinput"):
            write_costs(merged(read_costs(self.path), self.measured, self.slow), self.path)
