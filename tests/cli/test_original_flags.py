"""The 2018 client's command lines work verbatim (short flags and long names), beside today's.

``experiment new`` from flags alone, ``init -f``, ``experiment start -R``; each test checks what the command wrote
or did, not only its exit code. ``cluster create -n/-s/-m/-d`` and ``cluster delete -A`` need a GCP project and a
Pulumi stand-in: tests/gke/test_original_cluster_flags.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import invoke

SHORT = ["-n", "x", "-A", "ppo", "-M", "mlp2", "-E", "cartpole", "-C", "small", "-e", "100", "-t", "5000"]
SHORT += ["-d", "-w", "2", "-p", "1"]
LONG = ["--name", "x", "--agent", "ppo", "--network", "mlp2", "--environment", "cartpole", "--cluster", "small"]
LONG += ["--episodes", "100", "--total-timesteps", "5000", "--deterministic", "--num-workers", "2"]
LONG += ["--num-parameter-servers", "1"]


def _stored(project: Path, name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((project / "experiments" / name / "experiment.yaml").read_text()))


@pytest.mark.parametrize("flags", [SHORT, LONG], ids=["short", "long"])
def test_experiment_new_from_flags_alone(lab: Path, flags: list[str]) -> None:
    code, stdout, stderr = invoke("experiment", "new", *flags)
    assert code == 0, stdout + stderr
    spec = _stored(lab, "x")
    library = json.loads((lab / "configs" / "networks" / "mlp2.json").read_text())
    assert spec["agent"]["agent"] == "ppo" and spec["network"] == library
    assert spec["environment"]["level"] == "CartPole-v1"
    assert (spec["cluster"]["name"], spec["cluster"]["machine_type"]) == ("small", "e2-standard-2")
    assert (spec["episodes"], spec["total_timesteps"], spec["deterministic"]) == (100, 5000, True)
    assert (spec["num_workers"], spec["num_parameter_servers"]) == (2, 1)
    assert spec["run_mode"] == "single"  # today's default; flags alone take every default
    stack = yaml.safe_load((lab / "stacks" / "Pulumi.x.yaml").read_text())
    assert stack["config"]["tfcli:experiment"]["total_timesteps"] == 5000


def test_experiment_new_agent_and_environment_files_by_path(lab: Path) -> None:
    """``-A agent.json -E environment.json``, as the original walk-through wrote them."""
    (lab / "agent.json").write_text(json.dumps({"agent": "vpg", "batch_size": 4}))
    (lab / "env.json").write_text(json.dumps({"level": "Acrobot-v1"}))
    code, stdout, stderr = invoke("experiment", "new", "-n", "acro", "-A", "agent.json", "-E", "env.json", "-e", "3")
    assert code == 0, stdout + stderr
    spec = _stored(lab, "acro")
    assert (spec["agent"]["agent"], spec["agent"]["batch_size"], spec["environment"]["level"]) == (
        "vpg",
        4,
        "Acrobot-v1",
    )


@pytest.mark.slow  # a trainer process (README "Development")
def test_experiment_new_s_starts_it(lab: Path) -> None:
    code, stdout, stderr = invoke("experiment", "new", "-n", "go", "-A", "ppo", "-E", "cartpole", "-t", "64", "-s")
    assert code == 0, stdout + stderr
    assert "go completed: 64 timesteps" in stdout
    assert json.loads((lab / "experiments" / "go" / "results" / "result.json").read_text())["timesteps"] == 64


@pytest.mark.parametrize(
    ("flags", "messages"),
    [
        (["-A", "ppo"], ["--name (-n): required", "--environment (-E): required"]),
        (["-n", "x", "-E", "cartpole", "-t", "10"], ["--agent (-A): required"]),
        (["-n", "x", "-A", "ppo", "-E", "cartpole"], ["set a budget: episodes, total_timesteps or both"]),
        (["-n", "x", "-A", "ppo", "-E", "cartpol", "-e", "1"], ["no environment named 'cartpol'"]),
        (["-n", "x", "-A", "ppo", "-E", "cartpole", "-e", "1", "-p", "2"], ["--num-parameter-servers: got 2"]),
    ],
)
def test_experiment_new_from_incomplete_flags_names_them_and_writes_nothing(
    lab: Path, flags: list[str], messages: list[str]
) -> None:
    code, stdout, stderr = invoke("experiment", "new", *flags)
    assert code == 2, stdout + stderr
    assert all(message in stderr for message in messages) and "Traceback" not in stderr
    assert not list((lab / "experiments").iterdir()) and not list((lab / "stacks").glob("Pulumi.x.yaml"))


def test_experiment_new_with_a_file_still_takes_today_s_flags(lab: Path) -> None:
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp", "-c", "small", "-w", "4")
    assert code == 0, stderr
    spec = _stored(lab, "cp")
    assert (spec["cluster"]["name"], spec["num_workers"], spec["run_mode"]) == ("small", 4, "multi-threaded")


def test_start_R_resumes_only_what_can_resume(lab: Path) -> None:
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp")[0] == 0
    code, _, stderr = invoke("experiment", "start", "-e", "cp", "-R")
    assert code == 1 and "only a paused or interrupted run can resume" in stderr
    assert not (lab / "experiments" / "cp" / "results").exists()


@pytest.mark.parametrize("flag", ["-f", "--force"])
def test_init_f_restores_changed_bundled_configs(lab: Path, flag: str) -> None:
    agent = lab / "configs" / "agents" / "ppo.json"
    bundled = agent.read_text()
    agent.write_text('{"agent": "ppo", "batch_size": 1}')
    code, stdout, stderr = invoke("init", ".", flag)
    assert code == 0, stderr
    assert agent.read_text() == bundled and "restored 1 bundled config file(s): configs/agents/ppo.json" in stdout


def test_init_remote_project_id_is_the_gcp_project(lab: Path) -> None:
    code, _, stderr = invoke("init", ".", "--remote-project-id", "my-gcp-project")
    assert code == 0, stderr
    assert yaml.safe_load((lab / "tfcli.yaml").read_text())["gcp_project"] == "my-gcp-project"


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        (["experiment", "new"], ["-A, --agent", "-M, --network", "-E, --environment", "-C", "-e, --episodes"]),
        (["experiment", "new"], ["-t, --total-timesteps", "-d, --deterministic", "-w, --num-workers", "-s, --start"]),
        (["experiment", "new"], ["-p, --num-parameter-servers", "-f, --file", "-n, --name"]),
        (["experiment", "start"], ["-R, --resume", "-e, --experiment", "-c, --cluster"]),
        (["cluster", "create"], ["-n", "--name", "-s", "--size", "-m, --machine-type", "-d, --disk-size"]),
        (["cluster", "delete"], ["-A, --all", "-c, --cluster"]),
        (["init"], ["-f, --force", "-r", "--remote-project-id", "-n, --name"]),
        (["experiment", "play"], ["--episodes", "--checkpoint", "--video", "--deterministic", "-e, --experiment"]),
    ],
)
def test_help_shows_the_original_flags(project: Path, command: list[str], flags: list[str]) -> None:
    code, stdout, _ = invoke(*command, "--help")
    assert code == 0
    assert all(flag in stdout for flag in flags), stdout
