"""Where a lone ``tfcli experiment start -f <200-step PPO CartPole> --local`` spends its wall time: a timestamp at each
phase boundary of every process it starts (the CLI, the supervisor, the trainer, the curve's helper), one run.

No code of tfcli's is changed for it: the run's processes get a ``sitecustomize`` module (``PYTHONPATH``; Python's
``site`` imports it at every interpreter start, docs.python.org/3/library/site.html) that notes when the interpreter
started and wraps a few functions as their modules finish loading, appending ``seconds pid process phase`` lines
to one file. The wrapping costs microseconds; run ``bench.startup`` for the figures to quote, this for the split.
Run: ``uv run python -m bench.phases [--timesteps 200]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.startup import SPEC

# Written into the run's sitecustomize.py: WRAP names, per module, what to note as it loads or as a function returns.
SITECUSTOMIZE = r"""
import importlib.abc, importlib.machinery, os, sys, time

LOG = os.environ["TFCLI_PHASES_LOG"]
ARGV = open("/proc/self/cmdline", "rb").read().split(b"\0")
WHO = next((a.decode() for a in ARGV[1:] if a and not a.startswith(b"-")), "python")
if b"trainer" in ARGV and b"run" in ARGV:
    WHO = "trainer"
WHO = {"tfcli": "CLI", "tfcli.local.supervisor": "supervisor", "trainer.curve_painter": "curve helper"}.get(WHO, WHO)


def note(phase, stamp=None):
    with open(LOG, "a") as log:
        log.write(f"{time.time() if stamp is None else stamp:.4f}\t{os.getpid()}\t{WHO}\t{phase}\n")


note("interpreter started")
WRAP = {
    "tfcli.cli.app": [(None, "CLI modules imported")],
    "tfcli.experiments.create": [("create_experiment", "spec validated, experiment.yaml written")],
    "tfcli.local.processes": [("spawn", "supervisor spawned")],
    "tfcli.local.follow": [("follow_experiment", "the run's end noticed")],
    "trainer.kernel.spec.loader": [("load_experiment", "spec loaded and validated")],
    "trainer.pools.factory": [("make_pool", "environment pool built")],
    "tensorflow": [(None, "TensorFlow imported")],
    "tensorforce": [(None, "TensorForce imported")],
    "trainer.agents": [("build_agent", "agent built")],
    "trainer.acting": [("Learning.act", "act"), ("Learning.observe", "observe")],
    "trainer.loop": [("_step", "step")],
    "trainer.checkpoints": [("CheckpointStore.save", "checkpoint saved")],
    "trainer.results": [("Result.write", "result.json written")],
    "trainer.curve_painter": [("CurvePainter.paint", "learning curve drawn")],
}
calls = {"act": 0, "step": 0}
last_step = []


def wrapped(function, phase):
    def call(*args, **kwargs):
        began = time.time()
        value = function(*args, **kwargs)
        if phase in calls:
            calls[phase] += 1
            if calls[phase] == 1:
                note(f"first {phase} done")
            if phase == "step":
                last_step[:] = [time.time(), calls[phase]]
        elif phase == "observe":
            if time.time() - began > 0.5:  # TensorForce traces its observe and update graphs at the first update
                note(f"an observe that took {time.time() - began:.2f} s (graphs traced, an update)")
        else:
            note(phase)
        return value
    return call


def patch(module):
    for path, phase in WRAP.get(module.__name__, []):
        if path is None:
            note(phase)
            continue
        owner, _, name = path.rpartition(".")
        holder = getattr(module, owner) if owner else module
        setattr(holder, name, wrapped(getattr(holder, name), phase))


class Loader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def __getattr__(self, name):  # get_code and the rest, for runpy (``python -m`` runs the module unwrapped)
        return getattr(self.inner, name)

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        patch(module)


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in WRAP:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = Loader(spec.loader)
        return spec


sys.meta_path.insert(0, Finder())
real_exit = os._exit


def exiting(code):
    if last_step:
        note(f"last step ({last_step[1]}) done", last_step[0])
    note("exits")
    real_exit(code)


os._exit = exiting
import atexit
atexit.register(lambda: note("exits"))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--timesteps", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project, hooks, log = Path(folder) / "lab", Path(folder) / "hooks", Path(folder) / "phases.tsv"
        hooks.mkdir()
        (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
        subprocess.run([sys.executable, "-m", "tfcli", "init", str(project)], check=True, capture_output=True)
        (project / "startup.yaml").write_text(SPEC.format(timesteps=args.timesteps))
        path = os.pathsep.join([str(hooks), *filter(None, [os.environ.get("PYTHONPATH")])])
        # a fresh trainer, whose phases are the ones to split (a forked one skips the imports and no hook runs in it)
        env = dict(os.environ, PYTHONPATH=path, TFCLI_PHASES_LOG=str(log), TFCLI_WARM_TRAINER="off")
        command = [sys.executable, "-m", "tfcli", "experiment", "start", "-f", "startup.yaml", "--local"]
        began = time.time()
        subprocess.run(command, cwd=project, env=env, check=True, capture_output=True)
        ended = time.time()
        rows = [line.split("\t") for line in log.read_text().splitlines()]
    print(f"{'s from start':>12} {'+s':>6}  {'process':<13} phase")
    previous = began
    for stamp, _pid, who, phase in sorted(rows, key=lambda row: float(row[0])):
        seconds = float(stamp)
        print(f"{seconds - began:>12.2f} {seconds - previous:>6.2f}  {who:<13} {phase}")
        previous = seconds
    print(f"{ended - began:>12.2f} {ended - previous:>6.2f}  {'':<13} the command returned")


if __name__ == "__main__":
    main()
