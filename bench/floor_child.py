"""The least a program on TensorForce 0.6.5 can do for a run: ``bench.floor``'s bare TensorForce side.

Run in a fresh process as ``python -m bench.floor_child --experiment NAME --environments N --budget T --seed S
--until budget|traced|solved``. It imports TensorFlow and TensorForce, builds the experiment's agent exactly as the
trainer does (``trainer.agents.build_agent``: the agent file, network, seed, episode limit, parallel interactions,
the trainer's execution settings, no graph rewrites on CPU, TensorFlow imported with the collector paused) and then
runs the plainest loop there is: one batched ``act`` for all ``N`` environments, a step of each, one batched
``observe``, a reset where an episode ended. No progress log, no summaries, no checkpoint, no learning curve, no
supervisor, no CLI, no teardown (``os._exit``). Whatever a tool on TensorForce adds, it can only add to this.

``--trials SPEC ...`` runs several specs in turn, each to its own budget with one environment, in a process forked
per trial from one that imported everything once: a sweep's trials at their cheapest. ``--summaries DIR`` turns
TensorForce's own summaries on, as the trainer writes them (to see what they cost).

``--until traced`` stops after the first ``observe`` that ends an episode: TensorForce traces its observe and update
graphs in that call, so the process has then paid everything a run pays before it can learn anything (imports,
agent build, the tracing of ``act``, ``observe`` and the update). ``--until solved`` stops at the solve
(the rule of ``bench.trainer_solve.solved_at``), ``--until budget`` after ``--budget`` timesteps.

On stdout, one JSON line: seconds from the child's first line to the agent built, to the tracing done and to the end
of the loop, the timesteps run and the timesteps at the solve (None: not solved).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

STARTED = time.monotonic()


def bare_run(
    experiment: Any,
    environments: int,
    budget: int,
    until: str,
    summaries: Path | None = None,
    labels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``experiment`` (a loaded spec) trained by the plainest loop; ``summaries``: TensorForce's own summaries on,
    as the trainer writes them (``labels``: TensorForce's labels, None: the trainer's default), into that folder."""
    from bench.trainer_solve import SOLVED_EPISODES, solved_at
    from trainer.agents import agent_summarizer, build_agent
    from trainer.pools.recipe import EnvironmentRecipe

    recipe = EnvironmentRecipe.of(experiment)
    envs = [recipe.make(index) for index in range(environments)]
    agent = build_agent(
        experiment.agent,
        environment=envs[0],
        network=experiment.network,
        max_episode_timesteps=None,  # the environment's own limit, as the trainer's pool gives it
        parallel_interactions=environments,
        seed=experiment.seed,
        summarizer=None if summaries is None else agent_summarizer(summaries, labels),
    )
    built = time.monotonic() - STARTED
    indices = list(range(environments))
    states = [env.reset() for env in envs]
    returns = [0.0] * environments
    episodes: list[dict[str, Any]] = []
    timesteps, traced, solved = 0, None, None
    while timesteps < budget:
        actions = agent.act(states=states, parallel=indices)
        steps = [recipe.step(env, action) for env, action in zip(envs, actions, strict=True)]
        agent.observe(terminal=[s.terminal for s in steps], reward=[s.reward for s in steps], parallel=indices)
        timesteps += environments
        for index, step in enumerate(steps):
            returns[index] += step.reward
            states[index] = step.states
            if step.terminal:
                episodes.append({"return": returns[index], "timesteps": timesteps})
                returns[index] = 0.0
                states[index] = envs[index].reset()
                if solved is None and solved_at(episodes[-SOLVED_EPISODES:]) is not None:
                    solved = timesteps  # checked as each episode ends: only the newest window can be new
        if traced is None and len(episodes) > 0:
            traced = time.monotonic() - STARTED
            if until == "traced":
                break
        if until == "solved" and solved is not None:
            break
    ended = time.monotonic() - STARTED
    return {"built": built, "traced": traced, "ended": ended, "timesteps": timesteps, "solved_at": solved}


def forked(work: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of ``work`` run in a forked child (the kernel's count for the waited-for child); a child
    that raised (its traceback on stderr) fails the benchmark rather than read as a fast trial."""
    before, began = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    child = os.fork()
    if child == 0:
        code = 1
        try:
            work()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)  # never back into the parent's code
    _, status = os.waitpid(child, 0)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if status != 0:
        raise SystemExit(f"a forked trial failed: wait status {status}")
    return time.monotonic() - began, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def bare_trials(specs: list[Path], summaries: Path | None) -> dict[str, Any]:
    """Each spec's whole budget with one environment, in a process forked per trial from this one, which imported
    TensorFlow, TensorForce and the trainer once and ran no op: what a sweep's warm trainer does
    (tfcli/local/zygote.py), so that a trial starts as clean as a fresh process and pays no import."""
    from trainer.compat import apply
    from trainer.kernel.spec import load_experiment

    apply()  # TensorFlow and TensorForce imported with the collector paused, then frozen; no op runs before a fork
    for index, spec in enumerate(specs):
        experiment = load_experiment(str(spec)).spec
        if experiment.total_timesteps is None:
            raise SystemExit(f"{spec}: a trial here needs total_timesteps")
        folder = None if summaries is None else summaries / str(index)
        forked(functools.partial(bare_run, experiment, 1, experiment.total_timesteps, "budget", folder))
    return {"trials": len(specs), "ended": time.monotonic() - STARTED}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiment", default="cartpole-ppo")
    parser.add_argument("--environments", type=int, default=1)
    parser.add_argument("--budget", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--until", choices=["budget", "traced", "solved"], default="budget")
    parser.add_argument("--trials", nargs="+", type=Path, help="spec files: each trial in turn, forked (see above)")
    parser.add_argument("--summaries", type=Path, help="TensorForce's own summaries on, into this folder")
    args = parser.parse_args()
    if args.trials:
        report = bare_trials(args.trials, args.summaries)
    else:
        from trainer.kernel.spec import load_experiment

        experiment = load_experiment(args.experiment, overrides={"seed": args.seed}).spec
        report = bare_run(experiment, args.environments, args.budget, args.until, args.summaries)
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    os._exit(0)  # no interpreter teardown: the least a run can cost


if __name__ == "__main__":
    main()
