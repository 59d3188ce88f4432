"""Bring your own environment: the class in the project's ``envs/`` (``tfcli init`` writes an example) is named by
entry point or by a level its module registers, validated by building and stepping it, trained in every run mode
by processes that import it from the project's root, and played to a video. Commands run from a subfolder of the
project, so nothing works by the accident of the current folder being on ``sys.path``.

Every bad input is one line naming the file and field, with the reason, exit 2; an environment that raises while
training fails the run with its traceback in the log.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import forget_project_modules, invoke, status

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("warm_trainers")]  # real trainings, trainers forked warm

CRASHY = """\
import gymnasium
import numpy as np
from gymnasium import spaces


class Crashy(gymnasium.Env):
    def __init__(self):
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.steps += 1
        if self.steps > 20:
            raise ValueError(f"the simulator lost its state at step {self.steps}")
        return np.zeros(2, dtype=np.float32), 0.0, False, False, {}
"""


@pytest.fixture
def inside(lab: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The lab project, with the commands run from its ``configs/`` folder; this process forgets any ``envs`` package
    an earlier test imported (each test's project has its own)."""
    monkeypatch.chdir(lab / "configs")
    forget_project_modules()
    yield lab
    forget_project_modules()


def spec(lab: Path, name: str, environment: str, budget: int = 300) -> str:
    path = lab / f"{name}.yaml"
    path.write_text(f"name: {name}\nenvironment: {environment}\nagent: ppo\ntotal_timesteps: {budget}\n")
    return str(path)


def test_init_scaffolds_an_example_environment_that_validates(inside: Path) -> None:
    assert (inside / "envs" / "gridworld.py").is_file() and (inside / "envs" / "__init__.py").is_file()
    code, _, stderr = invoke("validate", "gridworld-ppo")
    assert code == 0, stderr
    assert "envs.gridworld:GridWorld (observations (2,), 4 discrete actions, episodes <= 50" in stderr
    # gymnasium's module:id form: importing envs registers GridWorld-v0
    code, _, stderr = invoke("validate", spec(inside, "by-level", '{level: "envs:GridWorld-v0"}'))
    assert code == 0, stderr
    assert "1 x envs:GridWorld-v0 (observations (2,)" in stderr


@pytest.mark.parametrize("run_mode", ["single", "multi-threaded", "distributed"])
def test_the_example_environment_trains_in_every_run_mode(inside: Path, run_mode: str) -> None:
    name = f"gw-{run_mode}"
    code, _, stderr = invoke(
        "experiment", "new", "-f", "gridworld-ppo", "-n", name, "--run-mode", run_mode, "--total-timesteps", "300"
    )
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", name, "--local")
    assert code == 0, stdout + stderr
    result = json.loads((inside / "experiments" / name / "results" / "result.json").read_text())
    assert (result["status"], result["timesteps"]) == ("completed", 300)
    if run_mode == "single":
        video = inside / "gw.gif"
        code, stdout, stderr = invoke("experiment", "play", "-e", name, "--video", str(video))
        assert code == 0, stdout + stderr
        assert "Video:" in stdout and "80x80, 8 fps" in stdout
        assert video.stat().st_size > 0


def _write(lab: Path, module: str, text: str) -> None:
    (lab / "envs" / f"{module}.py").write_text(text)


BAD = [
    ("missing", '{entry_point: "envs.nowhere:Thing"}', "", "environment.entry_point: cannot import 'envs.nowhere'"),
    (
        "plain",
        '{entry_point: "envs.plain:Plain"}',
        "class Plain:\n    pass\n",
        "environment.entry_point: 'envs.plain:Plain' is the class Plain, not a gymnasium.Env or "
        "tensorforce.Environment subclass",
    ),
    (
        "broken",
        '{entry_point: "envs.broken:Broken"}',
        "raise RuntimeError('no licence server')\n",
        "environment.entry_point: importing 'envs.broken' raised RuntimeError: no licence server",
    ),
    (
        "quiet",
        '{level: "envs.quiet:Quiet-v0"}',
        "X = 1\n",
        "environment.level: module 'envs.quiet' does not register 'Quiet-v0': it registers no level",
    ),
]


@pytest.mark.parametrize(("module", "environment", "source", "message"), BAD, ids=[case[0] for case in BAD])
def test_bad_environment_code_is_one_line_naming_file_and_field(
    inside: Path, module: str, environment: str, source: str, message: str
) -> None:
    if source:
        _write(inside, module, source)
    path = spec(inside, f"bad-{module}", environment)
    code, _, stderr = invoke("validate", "-q", path)
    assert code == 2, stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("invalid:")]
    assert line.startswith(f"invalid: {path}: ") and message in line, stderr
    assert "Traceback" not in stderr


def test_an_environment_that_raises_while_training_fails_the_run_with_its_traceback(inside: Path) -> None:
    _write(inside, "crashy", CRASHY)
    path = spec(inside, "crashy", '{entry_point: "envs.crashy:Crashy", max_episode_steps: 10}')
    assert invoke("experiment", "new", "-f", path)[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", "crashy", "--local")
    assert code == 1, stdout + stderr
    assert "error: crashy failed (exit code 1)" in stderr
    log = (inside / "experiments" / "crashy" / "logs" / "trainer.log").read_text()
    assert "Traceback" in log and 'envs/crashy.py", line 19, in step' in log
    assert "ValueError: the simulator lost its state at step 21" in log
    assert status("crashy")["state"] == "failed"
