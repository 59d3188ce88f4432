"""Seconds to evaluate the stack program under Pulumi's mocks (``infra.plan``), per bundled experiment.

    uv run python -m bench.plan [--repeat N]

Cold: the first evaluation in this process (Pulumi, pulumi-gcp and pulumi-kubernetes imported on the way).
Warm: the median of N more. The goal is under 2 s each, cold included (``tfcli experiment plan`` runs once).
Cold time is mostly imports: pulumi-gcp's ``container`` package alone is ~4 MB of Python, so with Python's bytecode
cache off (``PYTHONDONTWRITEBYTECODE=1``) every process compiles it again (~1 s more).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported inside main(), where its seconds are timed
    from infra.plan import Plan

GOAL_SECONDS = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="warm evaluations per experiment (default 5)")
    args = parser.parse_args()

    started = time.perf_counter()
    from infra.plan import plan_stack, plan_stack_file
    from infra.stack_files import STACKS_DIR, experiment_stack_config
    from trainer.kernel.spec import ConfigLibrary, load_experiment
    from trainer.kernel.spec.library import BUNDLED_CONFIGS

    import_seconds = time.perf_counter() - started
    library = ConfigLibrary((BUNDLED_CONFIGS,))
    cases: list[tuple[str, Callable[[], Plan]]] = []
    for path in sorted((BUNDLED_CONFIGS / "experiments").iterdir()):
        spec = load_experiment(path.stem, library=library).spec
        for shared in (None, "shared-t4"):
            config = experiment_stack_config(
                spec, project="bench-project", region="us-central1", zone="us-central1-a", shared_cluster_stack=shared
            )
            label = f"{spec.name} ({'shared cluster' if shared else 'own cluster'})"
            cases.append((label, partial(plan_stack, config, stack=spec.name)))
    for path in sorted(STACKS_DIR.glob("Pulumi.*.yaml")):
        cases.append((f"stacks/{path.name}", partial(plan_stack_file, path)))

    rows = []
    for label, run in cases:
        began = time.perf_counter()
        plan = run()
        cold = time.perf_counter() - began
        warm = []
        for _ in range(args.repeat):
            began = time.perf_counter()
            run()
            warm.append(time.perf_counter() - began)
        rows.append((label, len(plan.resources), cold, statistics.median(warm), plan.cost.usd_per_hour))

    width = max(len(row[0]) for row in rows)
    print(f"imports (pulumi, infra): {import_seconds:.2f} s")
    print(f"{'stack':<{width}}  resources  cold s  warm s (median of {args.repeat})  est. $/h")
    for label, count, cold, warm_median, usd in rows:
        print(f"{label:<{width}}  {count:>9}  {cold:>6.3f}  {warm_median:>6.3f}{'':>18}  {usd:>8.3f}")
    worst = max(import_seconds + rows[0][2], *(row[2] for row in rows))
    verdict = "ok" if worst < GOAL_SECONDS else "over"
    cache = "off (PYTHONDONTWRITEBYTECODE)" if sys.dont_write_bytecode else "on"
    print(f"slowest first evaluation, imports included: {worst:.2f} s (goal < {GOAL_SECONDS:.0f} s: {verdict})")
    print(f"slowest warm evaluation: {max(row[3] for row in rows):.3f} s; Python bytecode cache: {cache}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
