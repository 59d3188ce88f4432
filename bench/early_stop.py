"""Early stopping (ASHA) in every queue order and parallelism: timesteps spent against the full grid, and the winner.

The grid has hopeless combinations: a tiny PPO on CartPole-v1 whose episodes are cut at ``--cuts`` timesteps
(default 5, 8 and 500: a return can never pass 5 or 8, where a random CartPole start averages ~20; the 500 one is
the only one that can win), ``--seeds`` each. It is run as a user runs it (``tfcli experiment sweep -f FILE
--no-build --start --local``, a fresh ``tfcli init`` project each): once as the full grid (``--parallel`` all), then
with ``early_stop`` in three queue orders — the hopeless values first on the axis, last, and shuffled
(``--shuffle-seed``) — at ``--parallel`` 1, 2 and all trials. Printed per cell: trials completed / pruned, timesteps
spent (the sum over trials of what each trained) against the full grid's, and the winner by ``list -s``'s rule.
Goal: at most 50% of the full grid's timesteps in every cell, with the same winner as the full grid. Not a timing
benchmark: wall time is printed but depends on the machine's load.

Run: ``uv run python -m bench.early_stop [--timesteps 1200] [--seeds 2] [--cuts 5,8,500] [--reduction 3]
[--parallel 1,2,all] [--orders first,last,shuffled]``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

GOOD_CUT = 500  # CartPole-v1's own limit: the only cut a combination can win with


def tfcli(project: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "tfcli", *args], cwd=project, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"tfcli {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def ordered(cuts: list[int], order: str, shuffle_seed: int) -> list[int]:
    """The axis's values with the hopeless ones first, last, or shuffled."""
    hopeless = [cut for cut in cuts if cut != GOOD_CUT]
    good = [cut for cut in cuts if cut == GOOD_CUT]
    if order == "first":
        return hopeless + good
    if order == "last":
        return good + hopeless
    values = list(cuts)
    random.Random(shuffle_seed).shuffle(values)
    return values


def sweep_file(name: str, arguments: argparse.Namespace, cuts: list[int], early_stop: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": name,
        "base": {
            "name": name,
            "environment": "cartpole",
            "cluster": "single-node",
            "agent": {
                "agent": "ppo",
                "batch_size": 2,
                "learning_rate": 1e-3,
                "network": [{"type": "dense", "size": 8, "activation": "tanh"}],
            },
            "total_timesteps": arguments.timesteps,
            "saver_frequency": "100000t",
        },
        "axes": {"max_timesteps_per_episode": cuts},
        "seeds": arguments.seeds,
    }
    if early_stop:
        data["early_stop"] = {"reduction": arguments.reduction, "recheck_seconds": 1}
    return data


def measure(root: Path, arguments: argparse.Namespace, cuts: list[int], parallel: int, label: str) -> dict[str, Any]:
    early_stop = label != "full grid"
    name = "grid" if not early_stop else f"asha-{len(list(root.iterdir()))}"
    project = root / name
    subprocess.run([sys.executable, "-m", "tfcli", "init", str(project)], check=True, capture_output=True)
    (project / f"{name}.yaml").write_text(yaml.safe_dump(sweep_file(name, arguments, cuts, early_stop)))
    began = time.monotonic()
    tfcli(project, "experiment", "sweep", "-f", f"{name}.yaml", "--no-build", "--start", "--local",
          "--parallel", str(parallel))  # fmt: skip
    seconds = time.monotonic() - began
    trials = json.loads(tfcli(project, "experiment", "status", "-s", name, "--json"))["trials"]
    rows = json.loads(tfcli(project, "experiment", "list", "-s", name, "--json"))
    best = next((row["label"] for row in rows if row["best"]), "-")
    return {
        "cell": label,
        "order": ",".join(str(cut) for cut in cuts),
        "parallel": parallel,
        "completed": sum(t["state"] == "completed" for t in trials),
        "pruned": sum(t["state"] == "pruned" for t in trials),
        "spent": sum(int(t["timesteps"]) for t in trials),
        "grid": len(trials) * arguments.timesteps,
        "seconds": seconds,
        "best": best,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timesteps", type=int, default=1200, help="each trial's budget")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--cuts", default="5,8,500", help="max_timesteps_per_episode values; all but 500 hopeless")
    parser.add_argument("--reduction", type=int, default=3)
    parser.add_argument("--parallel", default="1,2,all", help="trials at a time, comma-separated ('all': every)")
    parser.add_argument("--orders", default="first,last,shuffled", help="where the hopeless values go")
    parser.add_argument("--shuffle-seed", type=int, default=1)
    arguments = parser.parse_args()
    cuts = [int(value) for value in arguments.cuts.split(",")]
    trials = len(cuts) * arguments.seeds
    parallels = [trials if value == "all" else int(value) for value in arguments.parallel.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-early-stop-") as folder:
        root = Path(folder)
        full = measure(root, arguments, cuts, trials, "full grid")
        results.append(full)
        for order in arguments.orders.split(","):
            for parallel in parallels:
                results.append(measure(root, arguments, ordered(cuts, order, arguments.shuffle_seed), parallel,
                                       f"hopeless {order}"))  # fmt: skip
                print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    print(f"max_timesteps_per_episode cut at {arguments.cuts} ({GOOD_CUT} the only one that can win), "
          f"{arguments.seeds} seeds, {arguments.timesteps:,} timesteps per trial, "
          f"reduction {arguments.reduction}")  # fmt: skip
    print()
    print("| queue order | axis order | parallel | completed / pruned | timesteps spent | of the full grid "
          "| winner | same winner | wall s |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        same = "yes" if r["best"] == full["best"] else "NO"
        print(
            f"| {r['cell']} | {r['order']} | {r['parallel']} | {r['completed']} / {r['pruned']} | {r['spent']:,} | "
            f"{r['spent'] / full['spent']:.0%} | {r['best']} | {same} | {r['seconds']:.0f} |"
        )
    worst = max(r["spent"] / full["spent"] for r in results[1:])
    print(f"\nat most {worst:.0%} of the full grid's timesteps in any cell (goal: 50%)")


if __name__ == "__main__":
    main()
