"""What the full test suite spends, on this machine, in work no test code of ours can make cheaper: TensorFlow's
import in each fresh process, TensorForce's agent builds, and the agent calls that traced TensorForce's graphs or
ran an update (issue 33, item 5: "the full suite ... under 15 minutes here").

Why: the suite trains real TensorForce agents (DEVELOPERS.md non-negotiable 3; every bundled combination in every
run mode, tests/journeys/test_matrix.py; ``validate`` builds what it accepts, non-negotiable 4). If that work alone
takes more CPU than two cores give in 15 minutes, no test-side change but dropping coverage meets the goal.

Each process the suite starts gets a ``sitecustomize`` module (``PYTHONPATH``; docs.python.org/3/library/site.html)
that times, in CPU seconds of the calling thread (a loaded machine does not inflate them as it does wall time):
the ``tensorflow`` import, ``trainer.agents.build_agent``, and every ``Learning.act`` / ``Learning.observe`` that
took 0.3 s or more (steps take milliseconds; these are the first calls, which trace, and updates). A trainer forked
by a warm zygote inherits the wrapped functions and is counted too. The suite's own CPU is pytest's and its waited-for
descendants' (``RUSAGE_CHILDREN``): a double-forked process (a zygote's keeper) is not in it, so the share is an
upper bound. Run: ``uv run python -m bench.suite_floor [PYTEST ARGS]`` (the whole suite: about 35 minutes here).
"""

from __future__ import annotations

import collections
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LONG_CALL = 0.3  # CPU seconds: a step's act or observe takes milliseconds; a tracing or updating one, seconds
BUDGET_SECONDS = 15 * 60

SITECUSTOMIZE = r"""
import importlib.machinery, os, sys, time

LOG = os.environ["TFCLI_FLOOR_LOG"]
TIMED = {"trainer.agents": [("build_agent", "agent builds", 0.0)],
         "trainer.acting": [("Learning.act", "graph calls", LONG), ("Learning.observe", "graph calls", LONG)]}


def note(kind, seconds):
    with open(LOG, "a") as log:
        log.write(f"{kind}\t{seconds:.4f}\n")


def timed(function, kind, least):
    def call(*args, **kwargs):
        began = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            if time.thread_time() - began >= least:
                note(kind, time.thread_time() - began)
    return call


class Finder:
    def find_spec(self, name, path, target=None):
        if name != "tensorflow" and name not in TIMED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = Loader(spec.loader)
        return spec


class Loader:
    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def exec_module(self, module):
        began = time.process_time()
        self.inner.exec_module(module)
        if module.__name__ == "tensorflow":
            note("TensorFlow imports", time.process_time() - began)
        for dotted, kind, least in TIMED.get(module.__name__, []):
            owner, _, name = dotted.rpartition(".")
            holder = getattr(module, owner) if owner else module
            setattr(holder, name, timed(getattr(holder, name), kind, least))


sys.meta_path.insert(0, Finder())
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        hooks, log = Path(folder) / "hooks", Path(folder) / "floor.tsv"
        hooks.mkdir()
        (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE.replace("LONG", repr(LONG_CALL)))
        path = os.pathsep.join([str(hooks), *filter(None, [os.environ.get("PYTHONPATH")])])
        env = dict(os.environ, PYTHONPATH=path, TFCLI_FLOOR_LOG=str(log))
        began = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", *sys.argv[1:]], env=env, check=False)
        wall = time.monotonic() - began
        rows = [line.split("\t") for line in log.read_text().splitlines()] if log.exists() else []
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    suite = usage.ru_utime + usage.ru_stime
    count: collections.Counter[str] = collections.Counter(kind for kind, _ in rows)
    seconds: collections.defaultdict[str, float] = collections.defaultdict(float)
    for kind, spent in rows:
        seconds[kind] += float(spent)
    print(f"pytest exited {done.returncode} after {wall:.0f} s of wall time, {suite:.0f} s of CPU")
    print(f"{'':<28} {'count':>6} {'CPU s':>8} {'of the suite':>12}")
    for kind in ("TensorFlow imports", "agent builds", "graph calls"):
        print(f"{kind:<28} {count[kind]:>6} {seconds[kind]:>8.0f} {seconds[kind] / suite:>12.0%}")
    floor = sum(seconds.values())
    print(f"{'all three':<28} {len(rows):>6} {floor:>8.0f} {floor / suite:>12.0%}")
    cores = os.cpu_count() or 1
    print(
        f"15 minutes of {cores} cores: {BUDGET_SECONDS * cores} CPU s; at this run's use of them "
        f"({suite / wall / cores:.0%}): {BUDGET_SECONDS * suite / wall:.0f} CPU s"
    )


if __name__ == "__main__":
    main()
