"""tfcli commands on a full disk (issue 21): one line saying what failed, where and the space left (exit 1, no
"internal error"), and nothing half-made. The disk is a real one that is full: a small tmpfs (``small_disk``)
whose every free byte a file takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_kit import invoke, tiny_spec
from disk_kit import fill_disk
from typer.testing import CliRunner

from tfcli.cli.app import app
from trainer.kernel.errors import TfcliError
from trainer.kernel.spec.library import PROJECT_FILE

SPEC = tiny_spec("tiny", 300, saver=None)


@pytest.fixture
def project_on_a_small_disk(small_disk: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tfcli project (the cwd) alone on a 1 MiB disk, with tiny.yaml in it."""
    project = small_disk("1m") / "project"
    for folder in ("experiments", "stacks", "configs/experiments"):
        (project / folder).mkdir(parents=True)
    (project / PROJECT_FILE).write_text("name: test\n")
    (project / "tiny.yaml").write_text(SPEC)
    monkeypatch.chdir(project)
    return project


def test_new_on_a_full_disk_says_so_in_one_line_and_leaves_no_half_made_experiment(
    project_on_a_small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_on_a_small_disk
    filler = fill_disk(project.parent)
    code, _, err = invoke("experiment", "new", "-f", "tiny.yaml", "-n", "full")
    assert code == 1, err
    assert "internal error" not in err and "Traceback" not in err
    spec_file = project / "experiments" / "full" / "experiment.yaml"
    message = " ".join(err.split())  # as one line, however the console wrapped it
    assert message == (
        f"error: writing experiment.yaml failed: No space left on device: {spec_file} "
        "(0 B free of 1.0 MiB on that disk)"
    )
    assert sorted(p.name for p in (project / "experiments").iterdir()) == []  # no experiments/full/ with a .lock
    assert sorted(p.name for p in (project / "stacks").iterdir()) == []

    monkeypatch.setenv("TFCLI_DEBUG", "1")  # the traceback is one flag away
    debugged = CliRunner().invoke(app, ["experiment", "new", "-f", "tiny.yaml", "-n", "full"])
    assert isinstance(debugged.exception, TfcliError) and isinstance(debugged.exception.__cause__, OSError)
    monkeypatch.delenv("TFCLI_DEBUG")

    filler.unlink()  # with space again the same command makes it
    code, _, err = invoke("experiment", "new", "-f", "tiny.yaml", "-n", "full")
    assert code == 0, err
    assert spec_file.is_file() and (project / "stacks" / "Pulumi.full.yaml").is_file()


def test_an_existing_experiment_is_kept_when_a_full_disk_stops_a_command_on_it(project_on_a_small_disk: Path) -> None:
    project = project_on_a_small_disk
    assert invoke("experiment", "new", "-f", "tiny.yaml", "-n", "kept")[0] == 0
    spec = (project / "experiments" / "kept" / "experiment.yaml").read_text()
    fill_disk(project.parent)
    code, _, err = invoke("experiment", "new", "-f", "tiny.yaml", "-n", "kept")  # rewrites the same spec
    assert code == 1 and "No space left on device" in err, err
    assert (project / "experiments" / "kept" / "experiment.yaml").read_text() == spec


def test_a_sweep_made_on_a_full_disk_leaves_no_sweep_or_trial_folder(
    project_on_a_small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_on_a_small_disk
    sweep = ("experiment", "sweep", "-f", "tiny.yaml", "-n", "sw", "--set", "agent.learning_rate=1e-3,3e-3")
    filler = fill_disk(project.parent)
    code, _, err = invoke(*sweep, "--no-build")
    assert code == 1, err
    assert "internal error" not in err and "Traceback" not in err
    assert "No space left on device" in err and "(0 B free of 1.0 MiB on that disk)" in " ".join(err.split())
    assert sorted(p.name for p in (project / "experiments").iterdir()) == []  # no sw/, sw-0/, sw-1/
    assert sorted(p.name for p in (project / "stacks").iterdir()) == []
    filler.unlink()
    code, _, err = invoke(*sweep, "--no-build")
    assert code == 0, err
    assert sorted(p.name for p in (project / "experiments").iterdir()) == ["sw", "sw-0", "sw-1"]
