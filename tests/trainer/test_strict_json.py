"""Strict JSON everywhere (issue 29 row 10): NaN and infinities never reach a file or ``--json`` output — they are
null, and the mapping that held them says which keys and what they were (docs/design.md §6.3)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_kit import invoke

from trainer.kernel.files import atomic_write_json, finite_json, strict_json_dumps


def _strict(text: str) -> object:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON: {text[:200]}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_values_become_null_with_a_flag() -> None:
    data = {"a": math.nan, "b": 1.5, "c": {"d": -math.inf}, "e": [1.0, math.inf], "f": "nan"}
    assert finite_json(data) == {
        "a": None,
        "b": 1.5,
        "c": {"d": None, "non_finite": {"d": "-inf"}},
        "e": [1.0, None],
        "f": "nan",
        "non_finite": {"a": "nan", "e": "some entries"},
    }
    assert finite_json({"x": 1}) == {"x": 1}
    assert finite_json([math.nan]) == [None]
    _strict(strict_json_dumps(data))


def test_result_files_are_strict_json(tmp_path: Path) -> None:
    atomic_write_json(tmp_path / "result.json", {"status": "completed", "mean_return_last_100": math.nan})
    assert _strict((tmp_path / "result.json").read_text()) == {
        "status": "completed",
        "mean_return_last_100": None,
        "non_finite": {"mean_return_last_100": "nan"},
    }


@pytest.mark.parametrize("command", [["experiment", "status", "-e", "old", "--json"], ["experiment", "list", "--json"]])
def test_json_output_of_a_result_written_with_nan_is_strict(lab: Path, command: list[str]) -> None:
    """A result.json written before this rule (Python's json writes NaN) is shown as strict JSON."""
    (lab / "old.yaml").write_text("name: old\nenvironment: cartpole\nagent: ppo\ntotal_timesteps: 100\n")
    assert invoke("experiment", "new", "-f", "old.yaml")[0] == 0
    results = lab / "experiments" / "old" / "results"
    results.mkdir(parents=True, exist_ok=True)
    result = {"status": "completed", "timesteps": 100, "episodes": 2, "wall_seconds": 1.0}
    result |= {"timesteps_per_second": 100.0, "mean_return_last_100": math.nan, "updates": 1}
    (results / "result.json").write_text(json.dumps(result))
    code, stdout, stderr = invoke(*command)
    assert code == 0, stderr
    _strict(stdout)
