"""``experiment logs --tail N`` on a local run: the last N lines of its log, and a clear error for a negative N."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tfcli.cli.app import app

runner = CliRunner()
LINES = [f"line {i}\n" for i in range(5)]


def test_tail_prints_the_last_lines(project: Path) -> None:
    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo"]).exit_code == 0
    logs = project / "experiments" / "cartpole-ppo" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "trainer.log").write_text("".join(LINES))
    assert runner.invoke(app, ["experiment", "logs", "-e", "cartpole-ppo", "--tail", "2"]).stdout == "line 3\nline 4\n"
    assert runner.invoke(app, ["experiment", "logs", "-e", "cartpole-ppo", "--tail", "0"]).stdout == ""
    assert runner.invoke(app, ["experiment", "logs", "-e", "cartpole-ppo"]).stdout == "".join(LINES)
    result = runner.invoke(app, ["experiment", "logs", "-e", "cartpole-ppo", "--tail", "-1"])
    assert result.exit_code == 2 and "--tail: expected a number of lines >= 0, got -1" in result.stderr
