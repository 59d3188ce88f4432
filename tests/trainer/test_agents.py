"""What ``build_agent`` takes from the experiment and what it leaves to the agent file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from trainer_testkit import TINY_PPO, read_progress
from trainer_testkit import cartpole as cartpole_experiment

from trainer.agents import EXECUTION_CONFIG, agent_arguments, build_agent
from trainer.config import RunConfig
from trainer.environments import GymnasiumAdapter, make_environment
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.agent import AgentSpec, NetworkSpec
from trainer.kernel.spec.environment import GymnasiumEnvironment
from trainer.run import run

MLP = NetworkSpec.model_validate([{"type": "dense", "size": 32, "activation": "tanh"}])


@pytest.fixture
def cartpole() -> Iterator[GymnasiumAdapter]:
    env = make_environment(GymnasiumEnvironment(level="CartPole-v1"))
    yield env
    env.close()


def test_the_experiment_sets_spaces_limits_network_and_seed(cartpole: GymnasiumAdapter) -> None:
    spec = AgentSpec(agent="ppo", batch_size=4, baseline={"type": "auto"}, config={"buffer_observe": 10})
    arguments = agent_arguments(
        spec, environment=cartpole, network=MLP, max_episode_timesteps=None, parallel_interactions=3, seed=5
    )
    assert arguments["states"]["shape"] == (4,) and arguments["actions"] == cartpole.actions()
    assert arguments["max_episode_timesteps"] == 500  # the level's own limit when the experiment sets none
    assert arguments["parallel_interactions"] == 3
    assert arguments["network"] == MLP.tensorforce()
    assert arguments["baseline"] == {"type": "auto"}  # the critic stays as the agent file says
    assert arguments["config"] == {"buffer_observe": 10, "seed": 5}


def test_a_network_for_an_agent_without_one_is_refused(cartpole: GymnasiumAdapter) -> None:
    with pytest.raises(InvalidInput, match="random agent has no network"):
        agent_arguments(AgentSpec(agent="random"), environment=cartpole, network=MLP, max_episode_timesteps=None)


@pytest.mark.slow  # builds (or fails to build) a TensorForce agent (README "Development")
def test_a_value_tensorforce_rejects_is_the_users_mistake(cartpole: GymnasiumAdapter) -> None:
    with pytest.raises(InvalidInput, match="ppo"):
        build_agent(AgentSpec(agent="ppo", batch_size=0), environment=cartpole, max_episode_timesteps=None)


BASELINE = [{"type": "dense", "size": 8}]
ADAM = {"optimizer": "adam", "learning_rate": 1e-3}


@pytest.mark.slow  # builds (or fails to build) a TensorForce agent (README "Development")
@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"baseline": BASELINE}, "a baseline needs a baseline_optimizer to train it"),
        ({"baseline_optimizer": ADAM}, "a baseline_optimizer needs a baseline to train (there is none)"),
    ],
    ids=["baseline-without-optimizer", "optimizer-without-baseline"],
)
def test_a_combination_tensorforce_asserts_against_is_named(
    cartpole: GymnasiumAdapter, arguments: dict[str, object], problem: str
) -> None:
    # TensorForce checks these with a bare assert: an AssertionError without a message.
    spec = AgentSpec(agent="ppo", batch_size=2, **arguments)
    with pytest.raises(InvalidInput) as raised:
        build_agent(spec, environment=cartpole, max_episode_timesteps=None)
    assert raised.value.problems == [f"agent: cannot build the ppo agent: {problem}"]


def test_an_agent_limit_shorter_than_the_environments_is_refused(cartpole: GymnasiumAdapter) -> None:
    # The environment would run past it, and TensorForce would fail in the middle of an episode.
    with pytest.raises(ValueError, match="same limit"):
        agent_arguments(AgentSpec(agent="ppo", batch_size=4), environment=cartpole, max_episode_timesteps=100)


@pytest.mark.parametrize(
    ("agent", "extra", "every"),
    [
        ("dqn", {"memory": 1000, "batch_size": 32, "update_frequency": 4}, 4),
        ("dqn", {"memory": 1000, "batch_size": 32}, 8),  # TensorForce's default: a quarter of batch_size
        ("a2c", {"batch_size": 16}, 16),
        ("ppo", {"batch_size": 4}, None),  # updates per batch of episodes: observing per episode is right
    ],
)
def test_shared_agents_observe_on_their_update_schedule(
    agent: str, extra: dict[str, object], every: int | None, cartpole: GymnasiumAdapter
) -> None:
    spec = AgentSpec(agent=agent, **extra)
    shared = agent_arguments(spec, environment=cartpole, max_episode_timesteps=None, parallel_interactions=4)
    assert shared.get("config", {}).get("buffer_observe") == every
    alone = agent_arguments(spec, environment=cartpole, max_episode_timesteps=None, parallel_interactions=1)
    assert "config" not in alone  # one environment: TensorForce's own default already follows the schedule


@pytest.mark.slow  # a real training (README "Development")
def test_a_dqn_shared_by_environments_updates_every_few_timesteps_not_once_per_episode(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from trainer_testkit import cartpole as cartpole_experiment

    from trainer.config import RunConfig
    from trainer.run import run

    agent = {"agent": "dqn", "memory": 2000, "batch_size": 16, "update_frequency": 4, "start_updating": 64,
             "network": [{"type": "dense", "size": 16, "activation": "tanh"}]}  # fmt: skip
    experiment = cartpole_experiment(agent=agent, run_mode="multi-threaded", num_workers=2, total_timesteps=600)
    result = run(RunConfig(experiment, output=tmp_path, environments="in-process", progress_bar=False))
    # one update per 4 timesteps from timestep 64 on is at most 134 (TensorForce checks once per observe call, and
    # the 2 environments' observe calls at one timestep share an update: 94 here); once per episode (TensorForce's
    # default) would be ~30
    assert result.status == "completed" and result.updates >= 80, result.updates


def test_the_trainer_builds_agents_without_tensorforces_input_assertions_and_action_masks(
    cartpole: GymnasiumAdapter, release_memory: None
) -> None:
    agent = build_agent(AgentSpec(agent="ppo", batch_size=2), environment=cartpole, max_episode_timesteps=None)
    try:
        assert (agent.config.create_tf_assertions, agent.config.enable_int_action_masking) == (False, False)
    finally:
        agent.close()
    own = AgentSpec(agent="ppo", batch_size=2, config={"create_tf_assertions": True})  # an agent file's own wins
    agent = build_agent(own, environment=cartpole, max_episode_timesteps=None)
    try:
        assert (agent.config.create_tf_assertions, agent.config.enable_int_action_masking) == (True, False)
    finally:
        agent.close()


def test_the_execution_settings_change_how_fast_the_agent_runs_not_what_it_learns(
    tmp_path: Path, release_memory: None
) -> None:
    """The same seeded run, with the trainer's execution settings and with TensorForce's defaults: the same episodes,
    step for step, and the same number of updates."""
    defaults = {key: not value for key, value in EXECUTION_CONFIG.items()}  # TensorForce's own defaults
    assert defaults == {"create_tf_assertions": True, "enable_int_action_masking": True}
    runs = []
    for name, config in (("trainer", {}), ("tensorforce", defaults)):
        agent = {**TINY_PPO, "config": config} if config else TINY_PPO
        experiment = cartpole_experiment(agent=agent, run_mode="multi-threaded", num_workers=2, total_timesteps=300)
        result = run(RunConfig(experiment=experiment, output=tmp_path / name, agent_summaries=False))
        runs.append((result.updates, read_progress(tmp_path / name)))
    (updates, episodes), (default_updates, default_episodes) = runs
    assert updates == default_updates >= 2
    drop = ("wall_seconds",)
    assert [{k: v for k, v in e.items() if k not in drop} for e in episodes] == [
        {k: v for k, v in e.items() if k not in drop} for e in default_episodes
    ]


def test_on_cpu_the_graphs_run_without_grappler_and_learn_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release_memory: None
) -> None:
    """The trainer turns TensorFlow's graph rewrites off on a machine without a GPU (~1 s of every agent build, see
    ``skip_graph_rewrites_on_cpu``); the same seeded run with them on learns the same episodes, step for step."""
    import tensorflow as tf

    options = tf.config.optimizer
    options.set_experimental_options({"disable_meta_optimizer": False})  # as TensorFlow starts
    runs = []
    try:
        for name in ("trainer", "grappler"):
            experiment = cartpole_experiment(run_mode="multi-threaded", num_workers=2, total_timesteps=300)
            result = run(RunConfig(experiment=experiment, output=tmp_path / name, agent_summaries=False))
            runs.append((result.updates, read_progress(tmp_path / name)))
            if name == "trainer":
                assert options.get_experimental_options().get("disable_meta_optimizer") is True
                monkeypatch.setattr("trainer.agents.skip_graph_rewrites_on_cpu", lambda: None)
                options.set_experimental_options({"disable_meta_optimizer": False})
    finally:
        options.set_experimental_options({"disable_meta_optimizer": True})  # as the trainer leaves it
    (updates, episodes), (grappler_updates, grappler_episodes) = runs
    assert updates == grappler_updates >= 2
    assert [{k: v for k, v in e.items() if k != "wall_seconds"} for e in episodes] == [
        {k: v for k, v in e.items() if k != "wall_seconds"} for e in grappler_episodes
    ]
