"""``tfcli experiment compare`` with real (tiny) local TensorForce runs: only the spec keys that differ, each run's
final return computed from its ``progress.jsonl`` by the rule sweeps use, a sweep's combinations as ``list -s``
computes them, ``--json``, and the bad input it refuses."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_kit import invoke, tiny_sweep

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("warm_trainers")]  # real trainings, trainers forked warm

TINY = """\
name: {name}
environment: cartpole
agent: {{agent: ppo, batch_size: 2, learning_rate: {lr}, network: [{{type: dense, size: 8, activation: tanh}}]}}
total_timesteps: 300
saver_frequency: 100t
seed: {seed}
"""


def create(lab: Path, name: str, lr: float, seed: int, extra: str = "") -> None:
    (lab / f"{name}.yaml").write_text(TINY.format(name=name, lr=lr, seed=seed) + extra)
    code, _, stderr = invoke("experiment", "new", "-f", f"{name}.yaml")
    assert code == 0, stderr


def final_return(lab: Path, name: str) -> float:
    """The mean return of the episodes ending in the last 10% of the run's timesteps, computed here from the
    progress file, independently of tfcli's code."""
    lines = (lab / "experiments" / name / "results" / "progress.jsonl").read_text().splitlines()
    episodes = sorted((r["timesteps"], r["return"]) for r in map(json.loads, lines))
    steps = np.array([s for s, _ in episodes])
    returns = np.array([r for _, r in episodes])
    return float(returns[steps >= 0.9 * steps[-1]].mean())


def compare_json(*args: str) -> dict[str, Any]:
    code, stdout, stderr = invoke("experiment", "compare", *args, "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


def header(stdout: str) -> list[str]:
    return stdout.splitlines()[0].split()


def test_experiments_by_the_keys_that_differ(lab: Path) -> None:
    create(lab, "a", 0.001, 1)
    create(lab, "b", 0.003, 2)
    create(lab, "c", 0.001, 1, extra="target_return: 15\n")  # never started; a key the others lack
    for name in ("a", "b"):
        code, stdout, stderr = invoke("experiment", "start", "-e", name, "--wait")
        assert code == 0, stdout + stderr

    data = compare_json("-e", "a", "-e", "b")
    assert data["kind"] == "experiments" and data["keys"] == ["agent.learning_rate", "seed"]
    rows = {row["name"]: row for row in data["rows"]}
    assert [row["name"] for row in data["rows"]] == ["a", "b"]
    assert rows["a"]["values"] == {"agent.learning_rate": 0.001, "seed": 1}
    assert rows["b"]["values"] == {"agent.learning_rate": 0.003, "seed": 2}
    for name in ("a", "b"):
        result = json.loads((lab / "experiments" / name / "results" / "result.json").read_text())
        assert rows[name]["final_return"] == final_return(lab, name) and rows[name]["final_kind"] == "final"
        assert rows[name]["state"] == "completed" and rows[name]["timesteps"] == 300
        assert rows[name]["wall_seconds"] == result["wall_seconds"] and rows[name]["cost_usd"] is None
    assert data["notes"][0].startswith("final: mean return over the last 10%")

    code, stdout, stderr = invoke("experiment", "compare", "-e", "a", "-e", "b")
    assert code == 0, stderr
    assert header(stdout) == [
        "experiment", "agent.learning_rate", "seed", "state", "final", "return", "timesteps", "wall", "s"
    ]  # fmt: skip
    line_a = stdout.splitlines()[1].split()
    assert line_a == [
        "a",
        "0.001",
        "1",
        "completed",
        f"{final_return(lab, 'a'):.1f}",
        "300",
        f"{rows['a']['wall_seconds']:.1f}",
    ]

    # c lacks no key of a but has one a lacks: it differs there, and a shows "-"; c never ran: no numbers
    data = compare_json("-e", "a", "-e", "c")
    assert data["keys"] == ["target_return"]
    assert [row["values"] for row in data["rows"]] == [{}, {"target_return": 15.0}]
    c = data["rows"][1]
    assert (c["state"], c["final_return"], c["timesteps"]) == ("new", None, 0)
    code, stdout, _ = invoke("experiment", "compare", "-e", "a", "-e", "c")
    assert [line.split()[:2] for line in stdout.splitlines()[1:3]] == [["a", "-"], ["c", "15.0"]]


def test_a_sweep_by_combination_as_list_s(lab: Path) -> None:
    (lab / "tiny.yaml").write_text(tiny_sweep())
    assert invoke("experiment", "sweep", "-f", "tiny.yaml", "--no-build")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-s", "tiny", "--parallel", "2")
    assert code == 0, stdout + stderr

    data = compare_json("-s", "tiny")
    code, stdout, stderr = invoke("experiment", "list", "-s", "tiny", "--json")
    assert code == 0, stderr
    listed = json.loads(stdout)
    assert data["kind"] == "sweep" and data["sweep"] == "tiny"
    assert data["keys"] == ["agent.learning_rate"]  # the seed varies within a combination: aggregated away
    assert [
        (row["name"], row["trials"], row["final_return"], row["ci_low"], row["ci_high"], row["best"])
        for row in data["rows"]
    ] == [(row["label"], row["trials"], row["iqm"], row["ci_low"], row["ci_high"], row["best"]) for row in listed]
    assert [row["values"] for row in data["rows"]] == [{"agent.learning_rate": 0.001}, {"agent.learning_rate": 0.003}]
    assert all(row["timesteps"] == 300 and row["state"] == "2/2" for row in data["rows"])
    walls = [[json.loads((lab / "experiments" / t / "results" / "result.json").read_text())["wall_seconds"]
              for t in row["trials"]] for row in data["rows"]]  # fmt: skip
    assert [row["wall_seconds"] for row in data["rows"]] == [float(np.mean(w)) for w in walls]

    code, stdout, stderr = invoke("experiment", "compare", "-s", "tiny")
    assert code == 0, stderr
    assert header(stdout) == ["combination", "agent.learning_rate", "seeds", "final", "IQM", "[95%", "CI]",
                              "timesteps", "wall", "s"]  # fmt: skip
    assert "aggregated over the seeds: description, seed" in stdout


def test_bad_input(lab: Path) -> None:
    create(lab, "a", 0.001, 1)
    create(lab, "b", 0.003, 2)
    for args in (["-e", "a"], ["-e", "a", "-e", "a"], []):
        code, _, stderr = invoke("experiment", "compare", *args)
        assert code == 2 and "--experiment: compare needs at least two different experiments" in stderr, args
    code, _, stderr = invoke("experiment", "compare", "-e", "a", "-e", "b", "-s", "a")
    assert code == 2 and "--experiment/--sweep" in stderr and "not both" in stderr
    code, _, stderr = invoke("experiment", "compare", "-e", "a", "-e", "nope")
    assert code == 2 and "no experiment named 'nope' in this project (known: a, b)" in stderr


def test_a_gke_run_not_here_shows_its_status_mean_marked(lab: Path) -> None:
    """A GKE run's final return needs its episodes: from a copy downloaded since it last trained, else its status's
    mean of the last 100 episodes, said as such (never passed off as the final return)."""
    from tfcli.backends import results_here
    from tfcli.experiments.status import Status
    from tfcli.experiments.store import ExperimentStore
    from tfcli.project import open_project
    from tfcli.runs.comparison import experiment_row, of_experiments
    from tfcli.runs.run import Run

    create(lab, "a", 0.001, 1)
    store = ExperimentStore(open_project())
    run = Run(store, store.get("a"))
    results = run.experiment().results
    results.mkdir(parents=True)
    episodes = [{"episode": i + 1, "timesteps": 10 * (i + 1), "return": float(i)} for i in range(20)]
    (results / "progress.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))
    status = Status(
        name="a", backend="gke", run_mode="single", state="running", timesteps=400, episodes=25, budget="",
        progress=None, mean_return=12.5, wall_seconds=9.0, timesteps_per_second=None, pid=None, detail="",
        cost={"usd": 0.42},
    )  # fmt: skip
    assert not results_here(run, status)  # the copy here is older than what the run has done
    row = experiment_row(run.experiment(), status, results_here=False)
    assert (row.final_return, row.final_kind, row.cost_usd) == (12.5, "mean_last_100", 0.42)
    other = dataclasses.replace(row, name="b", final_kind="final")
    notes = of_experiments([{}, {}], [row, other]).notes
    assert "~ results not here (a): the mean return of the last 100 episodes" in notes[1]

    (results / "result.json").write_text(json.dumps({"status": "completed", "timesteps": 200}))
    done = dataclasses.replace(status, state="completed", timesteps=200)
    assert results_here(run, done)  # downloaded after it completed: its episodes are here
    row = experiment_row(run.experiment(), done, results_here=True)
    assert (row.final_return, row.final_kind) == (18.0, "final")  # the episodes ending at 180, 190, 200 timesteps
