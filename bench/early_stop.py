"""Early stopping (ASHA) on the bundled cartpole-lr sweep widened with a hopeless learning rate: the timesteps spent
against the full grid, and whether the best combination is the same.

The sweep is ``cartpole-lr`` (PPO on CartPole-v1, 16 environments) at learning rates 3e-3, 1e-3, 3e-4 and a hopeless
1e-6 (it learns nothing in the budget), run twice on this machine as a user runs it (``tfcli experiment sweep -f
FILE --start --local``, in a fresh ``tfcli init`` project each): once as the full grid, once with ``early_stop``
(default reduction 3 and rungs, ``--reduction``/``--min-timesteps`` to change them). Printed per run: trials
completed and pruned, timesteps spent (the sum over trials of what each trained) against the full grid's (trials x
budget), wall time, and the best combination by ``list -s``'s rule (the highest final-return IQM over seeds,
judged on completed trials).

Both runs start trials in grid order, ``--parallel`` at a time, so which combination reaches a rung first is the
same in both; with fewer than ``reduction`` combinations at a rung nothing is pruned yet (docs/design.md §6.6), so
on 2 cores the first combinations complete and the later ones are judged against them.

Run: ``uv run python -m bench.early_stop [--timesteps 20000] [--seeds 2] [--parallel 2] [--reduction 3]
[--min-timesteps T] [--learning-rates 3e-3,1e-3,3e-4,1e-6]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml


def tfcli(project: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tfcli", *args], cwd=project, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"tfcli {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def sweep_file(name: str, arguments: argparse.Namespace, early_stop: bool) -> dict[str, Any]:
    bundled = Path(__file__).resolve().parent.parent / "tfcli" / "configs" / "sweeps" / "cartpole-lr.yaml"
    data = yaml.safe_load(bundled.read_text())
    data["name"] = name
    data["base"] = {**data["base"], "name": name, "total_timesteps": arguments.timesteps}
    data["axes"] = {"agent.learning_rate": [float(v) for v in arguments.learning_rates.split(",")]}
    data["seeds"] = arguments.seeds
    data["parallel"] = arguments.parallel
    if early_stop:
        settings: dict[str, Any] = {"reduction": arguments.reduction}
        if arguments.min_timesteps:
            settings["min_timesteps"] = arguments.min_timesteps
        data["early_stop"] = settings
    return dict(data)


def measure(root: Path, arguments: argparse.Namespace, early_stop: bool) -> dict[str, Any]:
    name = "asha" if early_stop else "grid"
    project = root / name
    subprocess.run([sys.executable, "-m", "tfcli", "init", str(project)], check=True, capture_output=True)
    (project / f"{name}.yaml").write_text(yaml.safe_dump(sweep_file(name, arguments, early_stop), sort_keys=False))
    began = time.monotonic()
    created = tfcli(project, "experiment", "sweep", "-f", f"{name}.yaml", "--no-build", "--start", "--local")
    seconds = time.monotonic() - began
    status = json.loads(tfcli(project, "experiment", "status", "-s", name, "--json"))
    rows = json.loads(tfcli(project, "experiment", "list", "-s", name, "--json"))
    trials = status["trials"]
    best = next((row for row in rows if row["best"]), None)
    rungs = next((line.strip() for line in created.splitlines() if "early stopping" in line), "")
    return {
        "run": "early stop" if early_stop else "full grid",
        "trials": len(trials),
        "completed": sum(t["state"] == "completed" for t in trials),
        "pruned": sum(t["state"] == "pruned" for t in trials),
        "spent": sum(int(t["timesteps"]) for t in trials),
        "grid": len(trials) * arguments.timesteps,
        "seconds": seconds,
        "best": best["label"] if best else "-",
        "best_iqm": best["iqm"] if best else None,
        "rungs": rungs,
        "pruned_trials": [(t["trial"], t["detail"]) for t in trials if t["state"] == "pruned"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=20_000, help="each trial's budget")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--parallel", type=int, default=2, help="trials at a time")
    parser.add_argument("--reduction", type=int, default=3)
    parser.add_argument("--min-timesteps", type=int, default=None, help="the first rung (default: budget/reduction²)")
    parser.add_argument("--learning-rates", default="3e-3,1e-3,3e-4,1e-6", help="the axis; the last is hopeless")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-early-stop-") as folder:
        results = [measure(Path(folder), arguments, early_stop) for early_stop in (False, True)]
    print(f"cartpole-lr at learning rates {arguments.learning_rates}, {arguments.seeds} seeds, "
          f"{arguments.timesteps:,} timesteps per trial, {arguments.parallel} at a time")  # fmt: skip
    if results[1]["rungs"]:
        print(results[1]["rungs"])
    print()
    print("| run | trials completed / pruned | timesteps spent | of the full grid | wall s | best combination (IQM) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in results:
        iqm = "-" if r["best_iqm"] is None else f"{r['best_iqm']:.1f}"
        print(
            f"| {r['run']} | {r['completed']} / {r['pruned']} | {r['spent']:,} | {r['spent'] / r['grid']:.0%} | "
            f"{r['seconds']:.0f} | {r['best']} ({iqm}) |"
        )
    for trial, reason in results[1]["pruned_trials"]:
        print(f"  {trial} pruned: {reason}")
    same = results[0]["best"] == results[1]["best"]
    print(f"\nbest combination the same: {'yes' if same else 'NO'}")


if __name__ == "__main__":
    main()
