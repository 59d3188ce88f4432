"""Trainer throughput: timesteps per second of the bundled cartpole-ppo experiment in each local run mode.

Each case runs in a fresh process (as ``python -m trainer run`` would), for ``--timesteps`` timesteps. "overall" is
result.json's ``timesteps_per_second`` (all training wall time, TensorFlow's tracing of the first act and update
included); "steady" is measured from progress.jsonl between the episode ending nearest 20% of the budget and the
last one. ``--no-agent-summaries`` shows what TensorForce's own summarizer costs.
Run: ``uv run python -m bench.training [--timesteps N]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from trainer.result_file import read_result

CASES: dict[str, dict[str, Any]] = {
    "single": {"overrides": {"run_mode": "single"}, "environments": "auto"},
    "multi-threaded, 4 envs, in-process": {
        "overrides": {"run_mode": "multi-threaded", "num_workers": 4},
        "environments": "in-process",
    },
    "multi-threaded, 4 envs, subprocess": {
        "overrides": {"run_mode": "multi-threaded", "num_workers": 4},
        "environments": "subprocess",
    },
}


def one(case: str, timesteps: int, output: Path, agent_summaries: bool) -> None:
    from trainer.config import RunConfig
    from trainer.kernel.spec import load_experiment
    from trainer.run import run

    settings = CASES[case]
    overrides = {**settings["overrides"], "total_timesteps": timesteps, "seed": 1}
    experiment = load_experiment("cartpole-ppo", overrides=overrides).spec
    config = RunConfig(
        experiment=experiment,
        output=output,
        environments=settings["environments"],
        progress_bar=False,
        agent_summaries=agent_summaries,
    )
    run(config)


ROOT = Path(__file__).resolve().parents[1]


def measure(case: str, timesteps: int, agent_summaries: bool) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder)
        command = [
            sys.executable,
            "-m",
            "bench.training",
            "--one",
            case,
            "--timesteps",
            str(timesteps),
            "--output",
            folder,
        ]
        if not agent_summaries:
            command.append("--no-agent-summaries")
        subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
        result = read_result(output)
        lines = [json.loads(line) for line in (output / "progress.jsonl").read_text().splitlines()]
    start = min(lines, key=lambda line: abs(line["timesteps"] - 0.2 * timesteps))
    end = lines[-1]
    steady = (end["timesteps"] - start["timesteps"]) / (end["wall_seconds"] - start["wall_seconds"])
    return result["timesteps_per_second"], steady, result["mean_return_last_100"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=20_000)
    parser.add_argument("--no-agent-summaries", action="store_true")
    parser.add_argument("--one", choices=list(CASES), help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one, args.timesteps, args.output, not args.no_agent_summaries)
        return
    print(f"cartpole-ppo, {args.timesteps:,} timesteps, agent summaries {'off' if args.no_agent_summaries else 'on'}")
    print(f"{'case':<38} {'overall t/s':>12} {'steady t/s':>11} {'return(100)':>12}")
    for case in CASES:
        overall, steady, mean = measure(case, args.timesteps, not args.no_agent_summaries)
        print(f"{case:<38} {overall:>12,.0f} {steady:>11,.0f} {mean:>12.1f}", flush=True)


if __name__ == "__main__":
    main()
