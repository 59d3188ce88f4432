"""The user's environment misbehaves (issue 29, rows 5 and 7, and the hanging ``step()``): whatever it does — exits
the process, hangs, never answers — tfcli says so in one line naming the environment's file, in ``validate``,
``play`` and every run mode, instead of exiting 0 in silence or reading ``running`` for ever.

The environment is real code in the project's ``envs/`` folder, run by real processes (the supervisor, the trainer,
env-workers) with a short ``step_timeout``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_kit import forget_project_modules, invoke, status, wait_for

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

HOSTILE = """\
import ctypes
import os
import sys
import time

import gymnasium
import numpy as np
from gymnasium import spaces

if os.environ.get("HOSTILE_AT_IMPORT") == "exit":
    sys.exit(0)


class Hostile(gymnasium.Env):
    \"\"\"Behaves until step ``after``, then does ``what`` (or $HOSTILE_IN_STEP): exit (os._exit), sys.exit, hang
    (sleep for ever), or nothing.\"\"\"

    metadata = {"render_modes": ["rgb_array"], "render_fps": 8}

    def __init__(self, what="exit", after=0, render_mode=None):
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.what, self.after, self.steps, self.render_mode = what, after, 0, render_mode

    def render(self):
        return np.zeros((8, 8, 3), dtype=np.uint8)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        self.steps += 1
        what = os.environ.get("HOSTILE_IN_STEP", self.what)
        if self.steps > self.after:
            if what == "exit":
                os._exit(0)
            if what == "c-exit":  # C's _exit: nothing in Python sees it coming
                ctypes.CDLL(None)._exit(3)
            if what == "sys.exit":
                sys.exit(0)
            if what == "hang":
                time.sleep(10**6)
            if what == "nan":
                return np.zeros(2, dtype=np.float32), float("nan"), self.steps % 10 == 0, False, {}
        return np.zeros(2, dtype=np.float32), 1.0, self.steps % 10 == 0, False, {}
"""


@pytest.fixture
def inside(lab: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The lab project with ``envs/hostile.py``; this process forgets any ``envs`` package an earlier test imported."""
    (lab / "envs" / "hostile.py").write_text(HOSTILE)
    forget_project_modules()
    yield lab
    forget_project_modules()


def _spec(lab: Path, name: str, what: str, after: int, extra: str = "", budget: int = 400) -> str:
    path = lab / f"{name}.yaml"
    path.write_text(
        f"name: {name}\n"
        f"environment: {{entry_point: 'envs.hostile:Hostile', kwargs: {{what: {what}, after: {after}}}}}\n"
        "agent: {agent: ppo, batch_size: 2, network: [{type: dense, size: 8}]}\n"
        f"total_timesteps: {budget}\nmax_timesteps_per_episode: 10\nstep_timeout: 4\nsaver_frequency: 20t\n{extra}"
    )
    return str(path)


def _result(lab: Path, name: str) -> dict[str, object]:
    path = lab / "experiments" / name / "results" / "result.json"
    return dict(json.loads(path.read_text())) if path.is_file() else {}


STALLED = "step_timeout: envs.hostile:Hostile (envs/hostile.py) answered no reset or step within 4 s"


@pytest.mark.parametrize(
    ("what", "run_mode", "expected"),
    [
        # row 5: the env-workers exit (os._exit in step); the learner waited for ever. Python's os._exit is now the
        # worker's error reply; C's _exit ends the workers, and the learner fails after step_timeout.
        ("exit", "distributed", "step() called os._exit(0): an environment must not end the process"),
        ("c-exit", "distributed", STALLED),
        ("hang", "single", STALLED),
        ("hang", "multi-threaded", STALLED),
        ("hang", "distributed", STALLED),
    ],
)
def test_an_environment_that_stops_answering_fails_the_run_naming_its_file(
    inside: Path, what: str, run_mode: str, expected: str
) -> None:
    name = f"{what}-{run_mode}"
    extra = f"run_mode: {run_mode}\nnum_workers: 2\n" if run_mode != "single" else ""
    assert invoke("experiment", "new", "-f", _spec(inside, name, what, 60, extra))[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", name, "--detach")
    assert code == 0, stdout + stderr
    try:
        wait_for(lambda: status(name)["state"] == "failed", timeout=120, what=f"{name} to fail")
    except AssertionError:
        invoke("experiment", "stop", "-e", name)  # the learner waits for ever: end it, then report
        raise
    result = _result(inside, name)
    error = str(result["error"])
    assert expected in error and "envs.hostile:Hostile (envs/hostile.py)" in error, error
    assert "\n" not in error
    assert 0 < int(str(result["timesteps"])) < 400  # the counts it had, not zeros
    checkpoints = inside / "experiments" / name / "results" / "checkpoints"
    assert any((folder / "COMPLETE").is_file() for folder in checkpoints.iterdir())  # kept for a resume


def _invalid_line(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if line.startswith("invalid:")]
    assert "Traceback" not in stderr
    return line


@pytest.mark.parametrize(
    ("what", "message"),
    [  # row 7: validate exited 0 and printed nothing
        ("import", "environment.entry_point: importing 'envs.hostile' raised SystemExit: 0"),
        ("exit", "environment: envs.hostile:Hostile (envs/hostile.py) step() called os._exit(0): an environment"),
        ("sys.exit", "environment: envs.hostile:Hostile (envs/hostile.py) step() called sys.exit(0): an environment"),
        ("c-exit", "environment: envs.hostile:Hostile (envs/hostile.py) ended the process (exit code 3)"),
        ("hang", "step_timeout: envs.hostile:Hostile (envs/hostile.py) answered no reset or step within 4 s"),
    ],
)
def test_validate_reports_an_environment_that_exits_or_hangs(
    inside: Path, monkeypatch: pytest.MonkeyPatch, what: str, message: str
) -> None:
    if what == "import":
        monkeypatch.setenv("HOSTILE_AT_IMPORT", "exit")
    path = _spec(inside, "hostile", "nothing" if what == "import" else what, 0)
    code, _, stderr = invoke("validate", "-q", path)
    assert code == 2, stderr
    line = _invalid_line(stderr)
    assert line.startswith(f"invalid: {Path(path).name}: {message}"), stderr


def test_play_reports_an_environment_that_exits_the_process(inside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # row 7: `play` exited 0 silently when the environment called os._exit in step()
    assert invoke("experiment", "new", "-f", _spec(inside, "player", "nothing", 0, budget=40))[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", "player", "--local")
    assert code == 0, stdout + stderr
    video = inside / "played.gif"
    for what, said in [("exit", "step() called os._exit(0)"), ("c-exit", "ended the process (exit code 3)")]:
        monkeypatch.setenv("HOSTILE_IN_STEP", what)
        code, stdout, stderr = invoke("experiment", "play", "-e", "player", "--video", str(video))
        assert code == 2, stdout + stderr
        assert f"envs.hostile:Hostile (envs/hostile.py) {said}" in stderr, stdout + stderr
    assert not video.exists() and not list(inside.glob(".played*"))


MISSHAPEN = """\
import gymnasium
import numpy as np
from gymnasium import spaces


class Misshapen(gymnasium.Env):
    def __init__(self, observation="[0.0, 0.0, 0.0]"):
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = spaces.Discrete(2)
        self.observation = eval(observation)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, dtype=np.float32), {}

    def step(self, action):
        return self.observation, 0.0, False, False, {}
"""


@pytest.mark.parametrize(
    ("observation", "found"),
    [
        ("[0.0, 0.0, 0.0]", "shape (3,) and dtype kind 'f'"),  # row 8: wrong shape
        ("np.array(['a', 'b'])", "shape (2,) and dtype kind 'U'"),  # row 8: wrong type
        ("np.zeros((2, 1), dtype=np.float32)", "shape (2, 1) and dtype kind 'f'"),
    ],
)
def test_validate_checks_observations_against_the_declared_space(inside: Path, observation: str, found: str) -> None:
    (inside / "envs" / "misshapen.py").write_text(MISSHAPEN)
    path = inside / "misshapen.yaml"
    path.write_text(
        "name: misshapen\n"
        f"environment: {{entry_point: 'envs.misshapen:Misshapen', kwargs: {{observation: \"{observation}\"}}}}\n"
        "agent: ppo\ntotal_timesteps: 100\nmax_timesteps_per_episode: 10\n"
    )
    code, _, stderr = invoke("validate", "-q", str(path))
    assert code == 2, stderr
    assert _invalid_line(stderr) == (
        f"invalid: misshapen.yaml: environment: envs.misshapen:Misshapen (envs/misshapen.py) step() returned an "
        f"observation of {found}, but its observation_space declares shape (2,) of float values"
    )


def _strict(text: str) -> object:
    """JSON as strict parsers read it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in {text[:300]}")

    return json.loads(text, parse_constant=refuse)


def test_nan_rewards_fail_the_run_in_words_and_no_file_or_json_output_holds_nan(inside: Path) -> None:
    # row 10: NaN rewards were written into result.json and printed by status --json / list --json
    assert invoke("experiment", "new", "-f", _spec(inside, "nan", "nan", 25))[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", "nan", "--local")
    assert code == 2, stdout + stderr
    results = inside / "experiments" / "nan" / "results"
    result = _strict((results / "result.json").read_text())
    assert isinstance(result, dict) and result["status"] == "failed", result
    assert result["error"] == (
        "nan.yaml: environment: envs.hostile:Hostile (envs/hostile.py) step() returned the reward nan: "
        "rewards must be finite"
    ) or str(result["error"]).endswith("step() returned the reward nan: rewards must be finite"), result
    for line in (results / "progress.jsonl").read_text().splitlines():
        _strict(line)
    for command in (["experiment", "status", "-e", "nan", "--json"], ["experiment", "list", "--json"]):
        code, stdout, stderr = invoke(*command)
        assert code == 0, stderr
        _strict(stdout)


@pytest.mark.parametrize(("what", "called"), [("exit", "os._exit(0)"), ("sys.exit", "sys.exit(0)")])
def test_an_environment_that_exits_while_training_fails_the_run_in_words(inside: Path, what: str, called: str) -> None:
    """The trainer itself steps the environment (single mode): it ended with exit code 0 and no result."""
    name = f"{what.replace('.', '-')}-single"
    assert invoke("experiment", "new", "-f", _spec(inside, name, what, 30))[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", name, "--local")
    assert code == 2, stdout + stderr
    result = _result(inside, name)
    assert result["status"] == "failed" and 0 < int(str(result["timesteps"])) < 400, result
    assert str(result["error"]).endswith(
        f"environment: envs.hostile:Hostile (envs/hostile.py) step() called {called}: an environment must not end "
        "the process"
    ), result
    assert status(name)["state"] == "failed"
