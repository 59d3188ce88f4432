"""The trainer's TensorBoard summaries (trainer/hooks/summaries.py) are written without TensorFlow ops, through
TensorBoard's own event-file writer, and read back exactly as ``tf.summary.scalar``'s: the same tags, steps,
``scalars`` plugin and float values, so TensorBoard and every reader of the old files see no difference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trainer.hooks.summaries import TensorBoardSummaries
from trainer.kernel.spec import Frequency
from trainer.kernel.state import Episode, RunState


def read(folder: Path) -> dict[str, list[tuple[int, float, str]]]:
    import tensorflow as tf
    from tensorboard.backend.event_processing.event_accumulator import TENSORS, EventAccumulator

    accumulator = EventAccumulator(str(folder), size_guidance={TENSORS: 0})
    accumulator.Reload()
    return {
        tag: [
            (
                event.step,
                float(tf.make_ndarray(event.tensor_proto)),
                accumulator.SummaryMetadata(tag).plugin_data.plugin_name,
            )
            for event in accumulator.Tensors(tag)
        ]
        for tag in accumulator.Tags()[TENSORS]
    }


@pytest.mark.usefixtures("release_memory")
def test_episode_summaries_read_back_as_tf_summary_scalars(tmp_path: Path) -> None:
    import tensorflow as tf

    state = RunState()
    hook = TensorBoardSummaries(tmp_path / "ours", Frequency.parse("1000t"), state)
    reference: Any = tf.summary.create_file_writer(str(tmp_path / "tf"))
    for n in range(1, 41):
        episode = Episode(0, n, 25 * n, 25, 0.1 * n, 10.5 + n)
        state.timesteps, state.episodes = episode.timesteps, n
        hook.on_episode(episode, state)
        hook.after_step(state)
        with reference.as_default(step=episode.timesteps):
            tf.summary.scalar("episode/return", episode.episode_return)
            tf.summary.scalar("episode/length", episode.length)
    hook.on_end(state, "completed")
    reference.close()
    ours, theirs = read(tmp_path / "ours"), read(tmp_path / "tf")
    for tag in ("episode/return", "episode/length"):
        assert ours[tag] == theirs[tag]
        assert len(ours[tag]) == 40 and ours[tag][0][2] == "scalars"
    periods = [step for step, _, _ in ours["run/episodes"]]
    assert periods == [1000, 1000]  # every 1000 timesteps, and at the end
    assert ours["run/episodes"][-1][1] == 40.0
