"""A name that is looked up and not found (``-e``, ``-s``, ``-c``, a library name on the command line) exits 2 with
the close names first (trainer/kernel/spec/suggest.py), every known name, and a hint; nothing is written (issue 34)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_kit import invoke

from infra.stack_files import STACKS_DIR


@pytest.fixture
def named(project: Path) -> Path:
    """A project with the experiments cp1 and cp2, the sweep lr (not built) and the shared cluster shared-t4."""
    for name in ("cp1", "cp2"):
        assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", name, "-t", "100")[0] == 0
    code, _, stderr = invoke(
        "experiment", "sweep", "-f", "cartpole-ppo", "-n", "lr", "--set", "agent.learning_rate=1e-3,3e-4", "--no-build"
    )
    assert code == 0, stderr
    shutil.copy(STACKS_DIR / "Pulumi.shared-t4.yaml", project / "stacks")
    return project


@pytest.mark.parametrize(
    ("args", "message", "hint"),
    [
        (
            ["experiment", "status", "-e", "cp3"],
            "error: no experiment named 'cp3' (did you mean 'cp1' or 'cp2'?) in this project"
            " (known: cp1, cp2, lr-0, lr-1)",
            "hint: create it with `tfcli experiment new -f SPEC -n NAME`",
        ),
        (
            ["experiment", "plot", "-e", "lr"],
            "no experiment named 'lr' (did you mean 'lr-0' or 'lr-1'?)",
            "'lr' is a sweep: name it with `-s lr`",
        ),
        (
            ["experiment", "status", "-s", "lrx"],
            "no sweep named 'lrx' (did you mean 'lr'?) in this project (known: lr)",
            "hint: create one with `tfcli experiment sweep",
        ),
        (
            ["experiment", "list", "-s", "cp1"],
            "no sweep named 'cp1' in this project",
            "'cp1' is an experiment: name it with `-e cp1`",
        ),
        (
            ["experiment", "plan", "-f", "cartpole-ppo", "-c", "sharedt4"],
            "--cluster: no shared cluster named 'sharedt4' (did you mean 'shared-t4'?) in this project"
            " (known: shared-t4)",
            "hint: create one with `tfcli cluster create",
        ),
        (
            ["cluster", "delete", "-c", "shared-t5"],
            "--cluster: no shared cluster named 'shared-t5' (did you mean 'shared-t4'?)",
            "hint: create one with `tfcli cluster create",
        ),
        (
            ["validate", "cartpole-ppx"],
            "cartpole-ppx: no such file, and no experiment or cluster spec of that name (did you mean 'cartpole-ppo'?)",
            "1 of 1 spec file(s) invalid",
        ),
        (
            ["experiment", "new", "-f", "cartpole-pp", "-n", "x"],
            "no experiment named 'cartpole-pp' (did you mean 'cartpole-ppo'",
            "Available:",
        ),
        (
            ["experiment", "new", "-f", "cartpole-ppo", "-n", "x", "-A", "pp0"],
            "agent: no agent named 'pp0' (did you mean 'ppo'?)",
            "",
        ),
    ],
)
def test_an_unknown_name_gets_the_close_ones_and_exit_2(named: Path, args: list[str], message: str, hint: str) -> None:
    before = sorted(p.relative_to(named) for p in named.rglob("*"))
    code, stdout, stderr = invoke(*args)
    assert code == 2, stdout + stderr
    assert message in stderr and hint in stderr, stderr
    assert "Traceback" not in stderr
    assert sorted(p.relative_to(named) for p in named.rglob("*")) == before
