"""The suite's longest-first order (tests/order_kit.py): what xdist's two processes are handed decides whether they end
together, so the rule is tested like product code."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from order_kit import (
    COSTS_FILE,
    UNRECORDED,
    UNRECORDED_SLOW,
    CostOrder,
    cost_of,
    longest_first,
    merged,
    module_of,
    read_costs,
)

COSTS = {"a.py::x": 1.0, "a.py::y": 5.0, "b.py::z": 4.0, "c.py::w": 2.0, "c.py::v": 2.0}


def test_modules_run_by_their_longest_test_and_their_tests_by_their_own() -> None:
    tests = ["c.py::w", "a.py::x", "b.py::z", "a.py::y", "c.py::v"]
    # longest tests: a 5 s, b 4 s, c 2 s (c sums to 4 s, as b); a's 5-second test before its 1-second one
    assert longest_first(tests, COSTS.__getitem__) == ["a.py::y", "a.py::x", "b.py::z", "c.py::w", "c.py::v"]


def test_modules_with_the_same_longest_test_run_by_their_sum_then_as_collected() -> None:
    costs = {"a.py::1": 3.0, "b.py::1": 3.0, "b.py::2": 1.0, "c.py::1": 3.0}
    assert longest_first(["a.py::1", "c.py::1", "b.py::1", "b.py::2"], costs.__getitem__) == [
        "b.py::1",
        "b.py::2",
        "a.py::1",
        "c.py::1",
    ]


def test_a_module_stays_together_even_when_another_module_has_tests_between_its_costs() -> None:
    costs = {"a.py::big": 9.0, "a.py::tiny": 0.1, "b.py::mid": 5.0}
    assert longest_first(["b.py::mid", "a.py::tiny", "a.py::big"], costs.__getitem__) == [
        "a.py::big",
        "a.py::tiny",
        "b.py::mid",
    ]


def test_an_unrecorded_test_counts_by_its_marker() -> None:
    assert cost_of("a.py::x", slow=True, costs=COSTS) == 1.0
    assert cost_of("new.py::t", slow=True, costs=COSTS) == UNRECORDED_SLOW
    assert cost_of("new.py::t", slow=False, costs=COSTS) == UNRECORDED


def test_measurements_replace_the_record_and_fast_tests_leave_it() -> None:
    assert merged({"b::1": 3.0, "a::2": 9.0, "c::3": 1.0}, {"a::2": 4.04, "c::3": 0.2, "d::4": 0.7}) == {
        "a::2": 4.0,
        "b::1": 3.0,
        "d::4": 0.7,
    }


def test_a_fast_slow_test_stays_recorded_so_that_it_does_not_count_as_an_unrecorded_slow_one() -> None:
    assert merged({}, {"a::1": 0.2, "b::2": 0.2}, slow={"a::1"}) == {"a::1": 0.2}


@dataclass
class Item:
    """What the plugin reads of a pytest item."""

    nodeid: str
    marks: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> Any:
        return name if name in self.marks else None


CONTROLLER: Any = SimpleNamespace(config=SimpleNamespace())  # a session without xdist's ``workerinput``


@dataclass
class Report:
    nodeid: str
    duration: float
    keywords: dict[str, Any] = field(default_factory=dict)


def test_the_plugin_orders_the_collection_and_records_what_it_measured(tmp_path: Path) -> None:
    path = tmp_path / "costs.json"
    path.write_text(json.dumps({"fast.py::a": 3.0}))
    plugin = CostOrder(record=True, path=path)
    items: list[Any] = [Item("fast.py::a"), Item("new.py::b", {"slow"}), Item("new.py::c")]
    plugin.pytest_collection_modifyitems(items)
    assert [item.nodeid for item in items] == ["new.py::b", "new.py::c", "fast.py::a"]  # unrecorded slow: 10 s

    for phase in (0.5, 11.0, 0.5):  # setup, call, teardown
        plugin.pytest_runtest_logreport(Report("new.py::b", phase))  # type: ignore[arg-type]
    plugin.pytest_runtest_logreport(Report("new.py::c", 0.1, {"slow": 1}))  # type: ignore[arg-type]
    plugin.pytest_sessionfinish(CONTROLLER)
    assert read_costs(path) == {"fast.py::a": 3.0, "new.py::b": 12.0, "new.py::c": 0.1}


def test_without_record_costs_the_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "costs.json"
    plugin = CostOrder(record=False, path=path)
    plugin.pytest_runtest_logreport(Report("new.py::b", 2.0))  # type: ignore[arg-type]
    plugin.pytest_sessionfinish(CONTROLLER)
    assert not path.exists()


def test_the_recorded_costs_name_only_test_files_that_exist() -> None:
    """A moved or deleted test file leaves stale keys behind (``--record-costs`` adds, it never drops a file it did
    not run): its tests would count as unrecorded and the order would drift. Files only: cheap, no collection."""
    root = COSTS_FILE.parents[1]  # the keys are node ids from the repository root
    missing = sorted(
        {module_of(test) for test in read_costs()} - {str(p.relative_to(root)) for p in root.glob("tests/**/*.py")}
    )
    assert missing == [], f"tests/costs.json names test files that do not exist: {missing}"
