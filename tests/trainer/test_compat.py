"""The compat patch is what lets TensorForce 0.6.5 train on TensorFlow 2.12: a real PPO update proves it works.

If a TensorFlow or TensorForce change breaks the patch, the update test fails here instead of in a user's run;
if a change makes the patch unnecessary, the second test says so and the patch can go.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from trainer import compat
from trainer.agents import build_agent
from trainer.environments import make_environment
from trainer.kernel.spec.agent import AgentSpec, NetworkSpec
from trainer.kernel.spec.environment import GymnasiumEnvironment

pytestmark = pytest.mark.slow  # real TensorForce agents built, updated and restored (README "Development")


def test_ppo_on_cartpole_updates_its_policy() -> None:
    env = make_environment(GymnasiumEnvironment(level="CartPole-v1"), seed=0, max_episode_timesteps=100)
    spec = AgentSpec(agent="ppo", batch_size=2, update_frequency=1, learning_rate=1e-2)
    network = NetworkSpec.model_validate([{"type": "dense", "size": 16, "activation": "tanh"}])
    agent = build_agent(spec, environment=env, network=network, max_episode_timesteps=100, seed=0)
    try:
        before = [v.numpy().copy() for v in agent.model.policy.trainable_variables]
        for _ in range(20):
            states, terminal = env.reset(), 0
            while terminal == 0:
                states, terminal, reward = env.execute(agent.act(states=states))
                agent.observe(terminal=terminal, reward=reward)
            if agent.updates > 0:
                break
        assert agent.updates > 0
        after = [v.numpy() for v in agent.model.policy.trainable_variables]
        assert before and any(not np.allclose(b, a) for b, a in zip(before, after, strict=True))
    finally:
        agent.close()
        env.close()


def test_without_the_patch_tensorforce_cannot_build_an_agent() -> None:
    script = textwrap.dedent(
        """
        import os
        os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
        from tensorforce import Agent
        Agent.create(
            agent="ppo", states=dict(type="float", shape=(4,)), actions=dict(type="int", num_values=2),
            max_episode_timesteps=10, batch_size=1,
        )
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0, "TensorForce builds without trainer.compat: the patch may no longer be needed"
    assert "_create_hypers" in run.stderr


def test_a_saved_agent_restores_into_a_new_one(tmp_path: Path) -> None:
    """The trainer's resume: save, close, build the same agent again and restore (one agent at a time: TensorForce
    keeps class-level state that closing an agent deletes)."""
    env = make_environment(GymnasiumEnvironment(level="CartPole-v1"), seed=0, max_episode_timesteps=50)
    spec = AgentSpec(agent="ppo", batch_size=2, learning_rate=1e-2)
    network = NetworkSpec.model_validate([{"type": "dense", "size": 8, "activation": "tanh"}])
    agent = build_agent(spec, environment=env, network=network, max_episode_timesteps=50, seed=0)
    try:
        for _ in range(3):
            states, terminal = env.reset(), 0
            while terminal == 0:
                states, terminal, reward = env.execute(agent.act(states=states))
                agent.observe(terminal=terminal, reward=reward)
        counters = (agent.timesteps, agent.episodes, agent.updates)
        weights = [v.numpy().copy() for v in agent.model.policy.trainable_variables]
        prefix = Path(agent.save(directory=str(tmp_path), filename="agent", format="checkpoint")).name
    finally:
        agent.close()
    agent = build_agent(spec, environment=env, network=network, max_episode_timesteps=50, seed=1)
    try:
        agent.restore(directory=str(tmp_path), filename=prefix, format="checkpoint")
        assert (agent.timesteps, agent.episodes, agent.updates) == counters and counters[2] >= 1
        restored = [v.numpy() for v in agent.model.policy.trainable_variables]
        assert all(np.array_equal(a, b) for a, b in zip(weights, restored, strict=True))
    finally:
        agent.close()
        env.close()


def test_tensorforce_leaves_msgpack_as_it_found_it() -> None:
    """TensorForce's import patches msgpack for numpy (msgpack_numpy); the trainer's transport needs msgpack's own."""
    import msgpack

    compat.apply()
    import tensorforce  # noqa: F401

    with pytest.raises(TypeError):  # plain msgpack packs no numpy array; msgpack_numpy would turn it into a dict
        msgpack.packb(np.zeros(2))


def test_episode_buffers_are_written_in_place_with_the_same_contents() -> None:
    """TensorForce copies a whole buffer variable to write one row; the patch scatters into it instead.

    Two environments share the agent, so its per-environment episode buffers exist; acting for environment 1
    must write that state into row (1, 0) of the states buffer — and only there — through the in-place path.
    """
    compat.apply()
    from tensorforce.core.memories import queue
    from tensorforce.core.models import model, tensorforce

    assert all(isinstance(module.tf, compat._TensorFlowWithInPlaceScatter) for module in (model, tensorforce, queue))
    env = make_environment(GymnasiumEnvironment(level="CartPole-v1"), seed=0, max_episode_timesteps=50)
    spec = AgentSpec(agent="ppo", batch_size=2, learning_rate=1e-3)
    network = NetworkSpec.model_validate([{"type": "dense", "size": 8, "activation": "tanh"}])
    agent = build_agent(spec, environment=env, network=network, max_episode_timesteps=50, parallel_interactions=2)
    deferred = []
    original = compat._ScatterInto.__init__

    def record(self: compat._ScatterInto, *args: object) -> None:
        original(self, *args)  # type: ignore[arg-type]
        deferred.append(self)

    try:
        compat._ScatterInto.__init__ = record  # type: ignore[method-assign]
        state = np.array([0.1, -0.2, 0.3, -0.4], dtype=np.float32)
        agent.act(states=[state], parallel=[1])
    finally:
        compat._ScatterInto.__init__ = original  # type: ignore[method-assign]
        buffers = {name: buffer.numpy() for name, buffer in agent.model.states_buffer.items()}
        agent.close()
    assert deferred, "TensorForce no longer writes its buffers through tensor_scatter_nd_update + assign"
    (written,) = buffers.values()
    assert written.shape == (2, 50, 4)
    # CartPole's bounded entries (0 and 2) are stored normalized; the unbounded ones as given.
    np.testing.assert_allclose(written[1, 0, [1, 3]], state[[1, 3]])
    assert np.all(written[1, 0, [0, 2]] != 0)
    assert not written[0].any() and not written[1, 1:].any()


def test_an_episode_is_read_from_a_buffer_as_its_rows_not_as_a_copy_of_the_buffer() -> None:
    """Once a variable has been scattered into, TensorFlow copies all of it on every dense read: reading one
    environment's episode (``buffer[parallel, :length]``, in TensorForce's terminal observe) copied the flagship's
    2 GB states buffer. The patch gathers just those rows, with the same values."""
    compat.apply()
    import tensorflow as tf

    buffer = tf.Variable(tf.reshape(tf.range(2 * 5 * 3, dtype=tf.float32), (2, 5, 3)))
    buffer.scatter_nd_update([[1, 0]], [[7.0, 7.0, 7.0]])  # as an act writes a state

    @tf.function
    def episode(parallel: tf.Tensor, length: tf.Tensor) -> tf.Tensor:
        return buffer[parallel, :length]

    parallel, length = tf.constant(1, dtype=tf.int64), tf.constant(3, dtype=tf.int64)
    np.testing.assert_array_equal(episode(parallel, length).numpy(), buffer.numpy()[1, :3])
    operations = {
        operation.type for operation in episode.get_concrete_function(parallel, length).graph.get_operations()
    }
    assert "ResourceGatherNd" in operations and "ReadVariableOp" not in operations
    for stop in (0, 5, 9, -2):  # past the end and from the end, as slicing does
        np.testing.assert_array_equal(buffer[parallel, :stop].numpy(), buffer.numpy()[1, :stop])
    np.testing.assert_array_equal(buffer[0, 1:3].numpy(), buffer.numpy()[0, 1:3])  # other slices as before


def _module_functions(agent: object) -> dict[str, compat._InlinedWhenTracing]:
    """Every TensorForce module function of the agent's model, by ``module/function``."""
    model = agent.model  # type: ignore[attr-defined]
    found = {}
    for module in [model, *model.submodules]:
        for attribute, graphs in vars(module).items():
            if attribute.startswith("_") and attribute.endswith("_graphs") and isinstance(graphs, dict):
                for key, function in graphs.items():
                    found[f"{module.name}/{attribute[1:-7]}{key}"] = function
    return found


def test_nested_module_functions_are_traced_into_their_callers_graph() -> None:
    """One graph per function the trainer calls (act, observe with its update), none for the ~100 module functions
    they call: those run in place while the caller is traced."""
    env = make_environment(GymnasiumEnvironment(level="CartPole-v1"), seed=0, max_episode_timesteps=100)
    spec = AgentSpec(agent="ppo", batch_size=2, update_frequency=1)
    agent = build_agent(spec, environment=env, max_episode_timesteps=100, seed=0)
    try:
        while agent.updates == 0:
            states, terminal = env.reset(), 0
            while terminal == 0:
                states, terminal, reward = env.execute(agent.act(states=states))
                agent.observe(terminal=terminal, reward=reward)
        functions = _module_functions(agent)
        assert all(isinstance(function, compat._InlinedWhenTracing) for function in functions.values())
        traced = {name for name, function in functions.items() if function.function.experimental_get_tracing_count()}
        assert {name.split("/")[-1].split("(")[0] for name in traced} <= {
            "act",
            "observe",
            "core_initialize",
            "reset",
            "initialize",
        }, traced
        assert len(functions) > 30 and any(name.endswith("/observe()") for name in traced), (len(functions), traced)
    finally:
        agent.close()
        env.close()


def test_nested_functions_traced_in_place_learn_the_same_episodes(tmp_path: Path) -> None:
    """The same seeded run with TensorForce's nested functions traced separately (as it ships) and in place: the
    same episodes, step for step, and the same number of updates."""
    script = textwrap.dedent(
        """
        import json, sys
        from pathlib import Path
        from trainer import compat
        compat.apply()
        if sys.argv[1] == "separately":
            import tensorflow, tensorforce.core.module
            tensorforce.core.module.tf = tensorflow
        from trainer.kernel.spec import Experiment
        from trainer.config import RunConfig
        from trainer.run import run
        experiment = Experiment(
            name="inline", environment={"level": "CartPole-v1"}, seed=3, total_timesteps=300,
            run_mode="multi-threaded", num_workers=2,
            agent={"agent": "ppo", "batch_size": 2, "network": [{"type": "dense", "size": 16}]},
        )
        result = run(RunConfig(experiment=experiment, output=Path(sys.argv[2]), agent_summaries=False))
        print(json.dumps({"updates": result.updates}))
        """
    )
    outcomes = []
    for how in ("separately", "in-place"):
        done = subprocess.run(
            [sys.executable, "-c", script, how, str(tmp_path / how)], capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        lines = (tmp_path / how / "progress.jsonl").read_text().splitlines()
        episodes = [{k: v for k, v in json.loads(line).items() if k != "wall_seconds"} for line in lines]
        outcomes.append((json.loads(done.stdout.strip().splitlines()[-1])["updates"], episodes))
    (updates, episodes), (inline_updates, inline_episodes) = outcomes
    assert updates == inline_updates >= 2
    assert episodes == inline_episodes and len(episodes) >= 10


def _first_update(monkeypatch: pytest.MonkeyPatch, *, patched: bool) -> tuple[int, int, int]:
    """DQN with ``start_updating=200`` on 4 CartPole environments: (timestep the first episode ended, timestep of
    the first update, updates by 400 timesteps)."""
    if not patched:
        monkeypatch.setattr(compat, "_first_update_floor", lambda model: None)
    environments = [
        make_environment(GymnasiumEnvironment(level="CartPole-v1"), seed=seed, max_episode_timesteps=100)
        for seed in range(4)
    ]
    spec = AgentSpec(agent="dqn", memory=1000, batch_size=16, update_frequency=4, start_updating=200)
    network = NetworkSpec.model_validate([{"type": "dense", "size": 16, "activation": "tanh"}])
    agent = build_agent(
        spec, environment=environments[0], network=network, max_episode_timesteps=100, parallel_interactions=4, seed=0
    )
    first_episode = first_update = None
    try:
        states = [environment.reset() for environment in environments]
        for timestep in range(4, 401, 4):
            actions = agent.act(states=states, parallel=[0, 1, 2, 3])
            steps = [env.execute(int(action)) for env, action in zip(environments, actions, strict=True)]
            agent.observe(terminal=[s[1] for s in steps], reward=[s[2] for s in steps], parallel=[0, 1, 2, 3])
            if first_episode is None and any(s[1] for s in steps):
                first_episode = timestep
            if first_update is None and agent.updates > 0:
                first_update = timestep
            states = [env.reset() if s[1] else s[0] for env, s in zip(environments, steps, strict=True)]
        assert first_episode is not None and first_update is not None
        return first_episode, first_update, agent.updates
    finally:
        agent.close()
        for environment in environments:
            environment.close()


def test_dqn_makes_its_first_update_at_start_updating(monkeypatch: pytest.MonkeyPatch) -> None:
    first_episode, first_update, updates = _first_update(monkeypatch, patched=True)
    assert first_episode < 100  # CartPole's random episodes end long before start_updating
    assert 200 <= first_update <= 208
    assert updates >= 40  # then one every 4 timesteps, less the observe calls that share a timestep


def test_without_the_patch_dqn_starts_updating_after_the_first_episode(monkeypatch: pytest.MonkeyPatch) -> None:
    first_episode, first_update, _ = _first_update(monkeypatch, patched=False)
    assert first_update <= first_episode + 8, "TensorForce honours start_updating now: the patch may go"
