"""Budgets have an upper bound (issue 29's risks): a typo such as an extra 0 or ``1e15`` is refused with exit 2 naming
the file and the field (or ``resume``'s flag), before anything is written, instead of a run that never ends."""

from __future__ import annotations

from pathlib import Path

from cli_kit import invoke

MAX_BUDGET = 10**12  # trainer.kernel.spec.experiment.MAX_BUDGET, written out: the test says the number users see
SPEC = "name: huge\nenvironment: cartpole\nagent: ppo\n{budget}\n"


def test_a_budget_over_the_bound_is_one_line_exit_2_naming_file_and_field(lab: Path) -> None:
    for budget in (f"total_timesteps: {MAX_BUDGET * 10}", "episodes: 1000000000000000"):
        (lab / "huge.yaml").write_text(SPEC.format(budget=budget))
        code, stdout, stderr = invoke("experiment", "new", "-f", "huge.yaml")
        field = budget.split(":")[0]
        assert code == 2, stdout + stderr
        assert f"huge.yaml: {field}: got " in stderr and "at most 1,000,000,000,000" in stderr, stderr
        assert "Traceback" not in stderr
        assert not (lab / "experiments" / "huge").exists()
    (lab / "huge.yaml").write_text(SPEC.format(budget=f"total_timesteps: {MAX_BUDGET}"))
    assert invoke("experiment", "new", "-f", "huge.yaml")[0] == 0  # the bound itself is allowed


def test_resume_flags_over_the_bound_are_refused_before_anything_is_written(lab: Path) -> None:
    (lab / "huge.yaml").write_text(SPEC.format(budget="total_timesteps: 300"))
    assert invoke("experiment", "new", "-f", "huge.yaml")[0] == 0
    spec = (lab / "experiments" / "huge" / "experiment.yaml").read_text()
    code, _, stderr = invoke("experiment", "resume", "-e", "huge", "--total-timesteps", str(MAX_BUDGET + 1))
    assert code == 2 and "--total-timesteps: got 1,000,000,000,001; at most 1,000,000,000,000" in stderr, stderr
    assert (lab / "experiments" / "huge" / "experiment.yaml").read_text() == spec
