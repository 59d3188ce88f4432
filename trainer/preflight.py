"""Build and step an experiment the way the trainer will, so that ``tfcli validate`` accepting it means it runs.

The schema (``trainer.kernel.spec``) cannot see what only the environment and TensorForce know: the level's spaces, its
episode limit, which agents can act on which actions, which layers fit which observations, and the dozens of
argument checks TensorForce makes when it builds an agent. :func:`preflight` does what ``run`` does before its
first timestep — the environment from the same recipe, the agent with the same arguments and
``parallel_interactions`` — then acts and observes once, and turns every problem into :class:`InvalidInput`
naming the field. The checks below the build are for mistakes whose TensorForce error says nothing useful (or
comes only at the first update): a discrete-only agent on continuous actions, an image layer on a vector
observation, and a missing episode limit where several environments share one agent.

It imports TensorFlow (seconds); nothing at CLI start-up imports this module.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trainer.argument_values import argument_problems
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec import Experiment
from trainer.kernel.spec.environment import CustomEnvironment, GymnasiumEnvironment
from trainer.pools.recipe import EnvironmentRecipe
from trainer.stall import StallWatch

# TensorForce 0.6's agents that act only on discrete (``int``) actions, and those that act only on one float action.
DISCRETE_ONLY = frozenset({"dqn", "double_dqn", "ddqn", "dueling_dqn"})
CONTINUOUS_ONLY = frozenset({"dpg", "ddpg"})
# Layers that need an observation of a given rank: images (H, W, C) for 2-D, sequences (T, C) for 1-D.
_LAYER_RANK = {"conv2d": 3, "conv2d_transpose": 3, "pool2d": 3, "conv1d": 2, "conv1d_transpose": 2, "pool1d": 2}
_VECTOR_LAYERS = frozenset({"dense", "linear"})
_RANK_WORDS = {1: "a vector", 2: "a sequence (steps, channels)", 3: "an image (height, width, channels)"}


@dataclass(frozen=True)
class Preflight:
    """What was built: enough for one line of ``tfcli validate`` output."""

    agent: str
    environment: str
    environments: int
    states: dict[str, Any]
    actions: dict[str, Any]
    max_episode_timesteps: int | None
    seconds: float

    def describe(self) -> str:
        shape = tuple(self.states.get("shape", ()))
        actions = self.actions
        if actions["type"] == "int":
            acting = f"{actions['num_values']} discrete actions"
        else:
            acting = f"{actions['type']} actions of shape {tuple(actions.get('shape', ()))}"
        limit = f"{self.max_episode_timesteps:,}" if self.max_episode_timesteps else "unlimited"
        return (
            f"built the {self.agent} agent for {self.environments} x {self.environment} "
            f"(observations {shape}, {acting}, episodes <= {limit} agent steps) and stepped it "
            f"in {self.seconds:.1f} s"
        )


def environment_name(experiment: Experiment) -> str:
    spec = experiment.environment
    if isinstance(spec, CustomEnvironment):
        return spec.entry_point
    return spec.level if isinstance(spec, GymnasiumEnvironment) else spec.environment


def environment_label(experiment: Experiment) -> str:
    """The environment's name for a one-line message, with the file of the user's code where it is theirs:
    ``envs.slow:Slow (envs/slow.py)``."""
    from trainer.environments.imports import module_file

    name = environment_name(experiment)
    spec = experiment.environment
    module = None
    if isinstance(spec, CustomEnvironment):
        module = spec.entry_point.partition(":")[0]
    elif isinstance(spec, GymnasiumEnvironment) and ":" in spec.level:
        module = spec.level.partition(":")[0]
    source = module_file(module) if module else None
    return f"{name} ({source})" if source else name


def _layer_lists(value: Any, path: str) -> Iterator[tuple[str, list[Any]]]:
    """Every list of TensorForce layers in an agent's arguments (network, baseline, critic, policy.network)."""
    if isinstance(value, list) and value and all(isinstance(item, dict) and "type" in item for item in value):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _layer_lists(item, f"{path}.{key}" if path else str(key))


def _layer_problem(layers: list[Any], rank: int, shape: tuple[int, ...], name: str) -> tuple[int, str] | None:
    """The first layer that cannot take what reaches it (rank after flattening), and why."""
    current = rank
    for index, layer in enumerate(layers):
        kind = str(layer.get("type"))
        needed = _LAYER_RANK.get(kind)
        if needed is not None and needed != current:
            observed = _RANK_WORDS.get(current, f"rank {current}")
            return index, (
                f"a {kind} layer needs {_RANK_WORDS[needed]} input, but {name} observes {observed} of shape {shape} "
                "here; use a network of dense layers (or {type: auto}) for it"
            )
        if kind in _VECTOR_LAYERS and current != 1:
            return index, (
                f"a {kind} layer needs a vector input, but {name}'s observations of shape {shape} reach it with "
                f"{current} axes; put a {{type: flatten}} layer before it, or use conv2d layers first (see networks "
                "cnn-dqn)"
            )
        if kind == "flatten":
            current = 1
    return None


def _check_layers(experiment: Experiment, arguments: dict[str, Any], states: dict[str, Any], name: str) -> list[str]:
    shape = tuple(states.get("shape", ()))
    problems = []
    for path, layers in _layer_lists(arguments, ""):
        found = _layer_problem(layers, len(shape) or 1, shape, name)
        if found is not None:
            replaced = path in ("network", "policy.network") and experiment.network is not None
            where = "network" if replaced else f"agent.{path}"
            problems.append(f"{where}.{found[0]}: {found[1]}")
    return problems


def _check_actions(agent: str, actions: dict[str, Any], name: str) -> list[str]:
    if agent in DISCRETE_ONLY and actions["type"] != "int":
        return [
            f"agent: {agent} acts only on discrete actions, and {name}'s actions are {actions['type']} "
            "(continuous); use ppo, a2c, vpg or trpo for it"
        ]
    if agent in CONTINUOUS_ONLY and actions["type"] != "float":
        return [f"agent: {agent} acts only on continuous (float) actions, and {name}'s are {actions['type']}"]
    return []


def _check_limit(experiment: Experiment, limit: int | None, name: str) -> list[str]:
    if limit is None and experiment.num_environments > 1:
        return [
            f"max_timesteps_per_episode: {name} has no episode limit of its own, and TensorForce needs one when "
            f"{experiment.num_environments} environments share an agent (run_mode {experiment.run_mode}): set "
            "max_timesteps_per_episode"
        ]
    return []


def compatibility_problems(
    experiment: Experiment, states: dict[str, Any], actions: dict[str, Any], limit: int | None
) -> list[str]:
    """What stops this agent and network from acting in an environment with these specs and episode limit (in
    agent steps), in words a user can act on; TensorForce's own checks follow when the agent is built."""
    name = environment_name(experiment)
    problems = _check_actions(experiment.agent.agent, actions, name)
    problems += _check_limit(experiment, limit, name)
    arguments = experiment.agent.arguments()
    if experiment.network is not None:
        arguments["network"] = experiment.network.tensorforce()
    problems += argument_problems(experiment.agent.agent, arguments, states, limit)
    return problems + _check_layers(experiment, arguments, states, name)


def describe_each(experiments: list[Experiment], *, report: Any) -> list[str | list[str]]:
    """:func:`preflight`'s line for each experiment, or its problems; what ``tfcli validate`` and a sweep's creation
    run in a child process (:mod:`trainer.environments.isolated`), reporting each index as it starts."""
    answers: list[str | list[str]] = []
    for index, experiment in enumerate(experiments):
        report(index)
        try:
            answers.append(preflight(experiment).describe())
        except InvalidInput as error:
            answers.append(error.problems)
        except TfcliError as error:  # e.g. a level that needs a package that is not installed
            answers.append(error.lines())
    return answers


def preflight(experiment: Experiment) -> Preflight:
    """Build the experiment's environment and agent as ``trainer.run`` does and step once; InvalidInput if not.

    Its reset and step are watched as the run's are (``step_timeout``, :mod:`trainer.stall`)."""
    started = time.perf_counter()
    recipe = EnvironmentRecipe.of(experiment)
    name = environment_name(experiment)
    watch = StallWatch(experiment.step_timeout, environment_label(experiment)).install()
    environment = recipe.make(0)
    try:
        states, actions = environment.states(), environment.actions()
        limit = recipe.agent_limit(environment)
        problems = compatibility_problems(experiment, states, actions, limit)
        if problems:
            raise InvalidInput(problems)
        watch.waiting()
        observation = environment.reset()
        watch.answered()
        _build_and_step(experiment, recipe, environment, limit, observation, watch)
    finally:
        watch.uninstall()
        environment.close()
    return Preflight(
        agent=experiment.agent.agent,
        environment=name,
        environments=experiment.num_environments,
        states=states,
        actions=actions,
        max_episode_timesteps=limit,
        seconds=time.perf_counter() - started,
    )


@contextlib.contextmanager
def quiet_tensorforce() -> Iterator[None]:
    """TensorForce logs notes to the root logger while building ("Infinite min_value bound for state."): they say
    nothing to someone validating a spec, and the trainer's own log keeps them."""
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


class _Specs:
    """What ``build_agent`` reads of a pool: one environment's specs and the run's episode limit in agent steps."""

    def __init__(self, environment: Any, limit: int | None) -> None:
        self._environment, self._limit = environment, limit

    def states(self) -> dict[str, Any]:
        return dict(self._environment.states())

    def actions(self) -> dict[str, Any]:
        return dict(self._environment.actions())

    def max_episode_timesteps(self) -> int | None:
        return self._limit


def _build_and_step(
    experiment: Experiment,
    recipe: EnvironmentRecipe,
    environment: Any,
    limit: int | None,
    observation: Any,
    watch: StallWatch,
) -> None:
    """The agent as ``trainer.run`` builds it, then one act / step / observe through the loop's own acting."""
    from trainer.acting import acting_for
    from trainer.agents import build_agent  # imports TensorFlow

    with quiet_tensorforce():
        agent = build_agent(
            experiment.agent,
            environment=_Specs(environment, limit),
            network=experiment.network,
            max_episode_timesteps=None,
            parallel_interactions=experiment.num_environments,
            seed=experiment.seed,
        )
    try:
        acting = acting_for(agent, deterministic=experiment.deterministic)
        acting.start_episode(0)
        try:
            (action,) = acting.act([0], [observation])
            watch.waiting()
            step = recipe.step(environment, action)
            watch.answered()
            acting.observe([0], [step.terminal], [step.reward])
        except TfcliError:  # the stall watch's, or the environment's own InvalidInput: already in words
            raise
        except Exception as error:
            raise InvalidInput(
                f"agent: the {experiment.agent.agent} agent was built but cannot step "
                f"{environment_name(experiment)}: {type(error).__name__}: {error}"
            ) from error
    finally:
        agent.close()
