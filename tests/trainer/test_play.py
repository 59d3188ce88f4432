"""``trainer.play``: the agent of a real (tiny) run's checkpoint plays, reading only what acting needs.

One CartPole run with two environments trains and checkpoints (module fixture); the tests restore it into an
agent built to act, compare the restored policy with the checkpoint's own tensors, refuse a checkpoint that does not
fit, and read a checkpoint that a running trainer prunes while it is linked.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from trainer_testkit import cartpole

from trainer import play as play_module
from trainer.checkpoints import MARKER, STATE
from trainer.config import RunConfig
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec import Experiment
from trainer.play import play, restore_acting_parts, snapshot
from trainer.run import run

pytestmark = pytest.mark.usefixtures("release_memory")


def _experiment(**fields: object) -> Experiment:
    return cartpole(run_mode="multi-threaded", num_workers=2, total_timesteps=300, **fields)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output folder of a finished 300-timestep run with two environments (two parallel interactions)."""
    output = tmp_path_factory.mktemp("trained")
    assert run(RunConfig(_experiment(), output, progress_bar=False)).status == "completed"
    return output


def test_the_acting_agent_holds_the_checkpoints_policy_and_little_memory(trained: Path) -> None:
    import tensorflow as tf

    from trainer.play import PlayEnvironment, acting_agent

    experiment = _experiment()
    environment = PlayEnvironment(experiment, seed=3, render=False)
    agent = acting_agent(experiment, environment, seed=3)
    try:
        with snapshot(trained, None, experiment=experiment.name) as checkpoint:
            restore_acting_parts(agent, checkpoint)
            reader = tf.train.load_checkpoint(str(checkpoint.folder / checkpoint.state["agent"]))
            saved = [np.asarray(reader.get_tensor(key)) for key in reader.get_variable_to_shape_map()]
        policy = agent.model.policy.trainable_variables
        assert len(policy) >= 4
        for variable in policy:  # every weight of the policy is one of the checkpoint's tensors, bit for bit
            assert any(t.shape == variable.shape and np.array_equal(t, variable.numpy()) for t in saved), variable.name
        # one parallel interaction and a two-step episode bound: buffers of 2 steps, not 2 x 500 as in training
        assert agent.model.parallel_interactions == 1
        assert all(v.shape[:2] == (1, 2) for v in agent.model.states_buffer.values())
    finally:
        agent.close()
        environment.close()


def test_plays_episodes_and_reports_them_as_they_end(trained: Path) -> None:
    seen = []
    played = play(_experiment(), trained, episodes=2, deterministic=True, seed=5, on_episode=seen.append)
    assert [e.number for e in played.episodes] == [1, 2] and seen == played.episodes
    for episode in played.episodes:  # CartPole pays 1 per step
        assert episode.episode_return == episode.length and 1 <= episode.length <= 500
    assert played.trained_timesteps == 300 and played.video is None
    again = play(_experiment(), trained, episodes=2, deterministic=True, seed=5)
    assert again.episodes == played.episodes  # greedy acts on the same seeded episodes


def test_a_checkpoint_of_another_network_is_refused(trained: Path) -> None:
    wider = dict(_experiment().agent.arguments(), network=[{"type": "dense", "size": 32, "activation": "tanh"}])
    with pytest.raises(TfcliError, match="does not fit the experiment's agent"):
        play(_experiment(agent=wider), trained, episodes=1)


def test_an_unknown_checkpoint_number_lists_the_ones_there(trained: Path) -> None:
    with pytest.raises(InvalidInput, match=r"has no complete checkpoint 99 \(it has \d+"):
        play(_experiment(), trained, episodes=1, checkpoint=99)


def _fake_checkpoint(folder: Path, number: int) -> None:
    """A complete checkpoint's files (content does not matter to the snapshot), marker last."""
    target = folder / str(number)
    target.mkdir(parents=True)
    (target / "agent-1.index").write_bytes(b"x" * number)
    (target / STATE).write_text(json.dumps({"timesteps": number, "episodes": 0, "wall_seconds": 1.0, "agent": "a"}))
    files = {p.name: p.stat().st_size for p in target.iterdir()}
    (target / MARKER).write_text(json.dumps({"checkpoint": number, "files": files}))


def test_a_checkpoint_pruned_while_it_is_linked_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkpoints = tmp_path / "checkpoints"
    for number in (4, 5):
        _fake_checkpoint(checkpoints, number)
    link = play_module._link_or_copy

    def pruning_link(source: Path, target: Path) -> None:
        if source.parent.name == "5" and (source.parent / MARKER).exists():
            for path in source.parent.iterdir():  # the trainer prunes 5 (marker first) under our feet
                path.unlink()
        link(source, target)

    monkeypatch.setattr(play_module, "_link_or_copy", pruning_link)
    with snapshot(tmp_path, None, experiment="x") as checkpoint:
        assert checkpoint.number == 4 and checkpoint.state["timesteps"] == 4
        assert checkpoint.folder.parent != checkpoints  # a private copy
        private = checkpoint.folder.parent
    assert not private.exists()  # removed afterwards; the original is untouched
    assert sorted(p.name for p in checkpoints.iterdir()) == ["4", "5"]
    assert (checkpoints / "4" / MARKER).is_file()


@pytest.mark.parametrize("agent", ["vpg", "trpo", "a2c", "dqn"])
def test_every_bundled_agent_plays_its_own_checkpoint(tmp_path: Path, agent: str) -> None:
    """Each algorithm's memory and episode limit are shrunk its own way for acting (:func:`build_agent`)."""
    from trainer.kernel.spec.documents import read_document
    from trainer.kernel.spec.library import ConfigLibrary

    library = ConfigLibrary.for_project(tmp_path)
    arguments = read_document(library.require("agents", agent, where=""))
    if isinstance(arguments.get("memory"), int):
        arguments["memory"] = 2_000  # a replay memory of the bundled 10,000 CartPole states is only slower to save
    experiment = cartpole(agent=arguments, run_mode="multi-threaded", num_workers=2, total_timesteps=200)
    assert run(RunConfig(experiment, tmp_path, progress_bar=False, agent_summaries=False)).status == "completed"
    played = play(experiment, tmp_path, episodes=1, deterministic=True)
    ((episode,),) = [played.episodes]
    assert episode.episode_return == episode.length >= 1 and played.trained_timesteps == 200
