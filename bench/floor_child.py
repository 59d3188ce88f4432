"""The least a program on TensorForce 0.6.5 can do for a run: ``bench.floor``'s bare TensorForce side.

Run in a fresh process as ``python -m bench.floor_child --experiment NAME --environments N --budget T --seed S
--until budget|traced|solved``. It imports TensorFlow and TensorForce, builds the experiment's agent exactly as the
trainer does (``trainer.agents.build_agent``: the agent file, network, seed, episode limit, parallel interactions,
the trainer's execution settings, no graph rewrites on CPU, TensorFlow imported with the collector paused) and then
runs the plainest loop there is: one batched ``act`` for all ``N`` environments, a step of each, one batched
``observe``, a reset where an episode ended. No progress log, no summaries, no checkpoint, no learning curve, no
supervisor, no CLI, no teardown (``os._exit``). Whatever a tool on TensorForce adds, it can only add to this.

``--until traced`` stops after the first ``observe`` that ends an episode: TensorForce traces its observe and update
graphs in that call, so the process has then paid everything a run pays before it can learn anything (imports,
agent build, the tracing of ``act``, ``observe`` and the update). ``--until solved`` stops at the solve
(the rule of ``bench.trainer_solve.solved_at``), ``--until budget`` after ``--budget`` timesteps.

On stdout, one JSON line: seconds from the child's first line to the agent built, to the tracing done and to the end
of the loop, the timesteps run and the timesteps at the solve (None: not solved).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

STARTED = time.monotonic()


def bare_run(experiment_name: str, environments: int, budget: int, seed: int, until: str) -> dict[str, Any]:
    from bench.trainer_solve import SOLVED_EPISODES, SOLVED_RETURN
    from trainer.agents import build_agent
    from trainer.kernel.spec import load_experiment
    from trainer.pools.recipe import EnvironmentRecipe

    experiment = load_experiment(experiment_name, overrides={"seed": seed}).spec
    recipe = EnvironmentRecipe.of(experiment)
    envs = [recipe.make(index) for index in range(environments)]
    agent = build_agent(
        experiment.agent,
        environment=envs[0],
        network=experiment.network,
        max_episode_timesteps=None,  # the environment's own limit, as the trainer's pool gives it
        parallel_interactions=environments,
        seed=experiment.seed,
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
                window = [episode["return"] for episode in episodes[-SOLVED_EPISODES:]]
                if solved is None and len(window) == SOLVED_EPISODES and sum(window) >= SOLVED_RETURN * len(window):
                    solved = timesteps  # the rule of bench.trainer_solve.solved_at, checked as episodes end
        if traced is None and len(episodes) > 0:
            traced = time.monotonic() - STARTED
            if until == "traced":
                break
        if until == "solved" and solved is not None:
            break
    ended = time.monotonic() - STARTED
    return {"built": built, "traced": traced, "ended": ended, "timesteps": timesteps, "solved_at": solved}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiment", default="cartpole-ppo")
    parser.add_argument("--environments", type=int, default=1)
    parser.add_argument("--budget", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--until", choices=["budget", "traced", "solved"], default="budget")
    args = parser.parse_args()
    report = bare_run(args.experiment, args.environments, args.budget, args.seed, args.until)
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    os._exit(0)  # no interpreter teardown: the least a run can cost


if __name__ == "__main__":
    main()
