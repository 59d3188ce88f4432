"""A hand-edited ``sweep.yaml`` does not relabel results (issue 29's risks): ``list -s`` and ``status -s`` label each
trial with its combination as ``sweep.yaml`` expands, so a file whose axes no longer say what the trials were made
with is refused, exit 2, naming the trial, the key and both values; ``--restart`` makes the sweep again."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_kit import invoke, tiny_sweep

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")


def test_a_hand_edited_sweep_yaml_is_refused_naming_the_trial_and_the_key(lab: Path) -> None:
    (lab / "tiny.yaml").write_text(tiny_sweep())
    code, stdout, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")
    assert code == 0, stdout + stderr
    stored = lab / "experiments" / "tiny" / "sweep.yaml"
    stored.write_text(stored.read_text().replace("- 0.001\n  - 0.003", "- 0.003\n  - 0.001"))  # values swapped
    for command in (["list", "-s", "tiny"], ["status", "-s", "tiny"], ["start", "-s", "tiny"]):
        code, stdout, stderr = invoke("experiment", *command)
        assert code == 2, (command, stdout + stderr)
        said = " ".join(stderr.split())
        assert "experiments/tiny/sweep.yaml: trial tiny-0 was made with agent.learning_rate=0.001" in said, said
        assert "now gives it agent.learning_rate=0.003" in said and "--restart" in said
        assert "Traceback" not in stderr
    assert not (lab / "experiments" / "tiny" / "run.json").exists()  # nothing started

    code, stdout, stderr = invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build", "--restart")
    assert code == 0, stdout + stderr
    assert invoke("experiment", "list", "-s", "tiny")[0] == 0
