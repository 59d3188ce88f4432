"""CLI start-up: ``tfcli --help`` and ``tfcli experiment list`` next to ``python -c "import typer"``.

Goal (issue "tfcli"): both within 3x of importing typer, measured in the same run on the same machine.
The table also shows a one-command typer app with one flag: typer 0.29 validates every parameter through
pydantic when a command runs, so that app is the floor any typer command starts from.
Run: ``uv run python -m bench.cli [--repeat N]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 3.0
FLOOR_APP = """
from typing import Annotated
import typer
app = typer.Typer()
@app.command()
def show(as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    pass
@app.command()
def other() -> None:
    pass
app()
"""


def timed(command: list[str], cwd: Path, repeat: int) -> float:
    """Median wall seconds of ``repeat`` runs (after one warm-up run to fill the OS file cache)."""
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=cwd, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    tfcli = [sys.executable, "-m", "tfcli"]
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        subprocess.run([*tfcli, "init", str(project)], check=True, capture_output=True)
        subprocess.run(
            [*tfcli, "experiment", "new", "-f", "cartpole-ppo"], cwd=project, check=True, capture_output=True
        )
        baseline = timed([sys.executable, "-c", "import typer"], project, args.repeat)
        rows = [
            ('python -c "import typer"', baseline),
            (
                "typer app, one flag (floor)",
                timed([sys.executable, "-c", FLOOR_APP, "show", "--json"], project, args.repeat),
            ),
            ("tfcli --help", timed([*tfcli, "--help"], project, args.repeat)),
            ("tfcli experiment list", timed([*tfcli, "experiment", "list"], project, args.repeat)),
        ]
    print(f"{'command':<28} {'median s':>9} {'x typer':>8} {'goal':>6}")
    for name, seconds in rows:
        ratio = seconds / baseline
        verdict = "" if not name.startswith("tfcli") else ("ok" if ratio <= GOAL else "MISS")
        print(f"{name:<28} {seconds:>9.3f} {ratio:>8.2f} {verdict:>6}")


if __name__ == "__main__":
    main()
