"""A checkpoint holds what a resumed run uses and no more: the replay memory yes, TensorForce's episode buffers no.

TensorForce keeps ``parallel_interactions x max_episode_timesteps`` states of per-episode buffers and empties them
when it restores, yet ``agent.save`` writes them: on the flagship (DQN on Atari, 4 parallel interactions) 2 of a
checkpoint's 3.2 GB, and 10 of its 13 seconds — time a spot VM's SIGTERM does not leave (~15 s). A real DQN agent,
saved through the CheckpointStore, restored into a fresh one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from trainer import compat
from trainer.checkpoints import CheckpointStore

PARALLEL = 4
EPISODE = 200
MEMORY = 500  # TensorForce needs at least 2 x max_episode_timesteps
SHAPE = (24, 24, 4)
STATE_BYTES = int(np.prod(SHAPE)) * 4  # float32


def dqn() -> Any:
    compat.apply()
    from tensorforce import Agent

    return Agent.create(
        agent="dqn",
        states={"type": "float", "shape": SHAPE},
        actions={"type": "int", "num_values": 4},
        max_episode_timesteps=EPISODE,
        memory=MEMORY,
        batch_size=8,
        start_updating=50,
        parallel_interactions=PARALLEL,
        network=[{"type": "flatten"}, {"type": "dense", "size": 8}],
        config={"seed": 1},
    )


def step(agent: Any, rng: np.random.Generator, steps: int, *, end_at: int = 0) -> None:
    for t in range(steps):
        for parallel in range(PARALLEL):
            agent.act(states=rng.random(SHAPE, dtype=np.float32), parallel=parallel)
            agent.observe(terminal=end_at > 0 and t % end_at == end_at - 1, reward=1.0, parallel=parallel)


def size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir() if path.is_file())


def memory_of(agent: Any) -> dict[str, np.ndarray]:
    return {v.name: v.numpy() for v in agent.model.variables if v.name.startswith(f"{agent.model.name}/memory/")}


@pytest.mark.slow  # a real agent trained and checkpointed (README "Development")
def test_checkpoints_keep_the_replay_memory_and_leave_the_episode_buffers_out(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    agent = dqn()
    try:
        step(agent, rng, 90, end_at=40)  # two episodes per environment into memory, 10 steps in the buffers
        assert agent.model.buffer_index.numpy().tolist() == [10] * PARALLEL
        store = CheckpointStore(tmp_path / "checkpoints")
        first = store.save(agent, {"timesteps": 360, "episodes": 8, "wall_seconds": 1.0})
        memory = memory_of(agent)
        assert memory and sum(value.nbytes for value in memory.values()) > MEMORY * STATE_BYTES

        buffers = PARALLEL * EPISODE * STATE_BYTES  # the states buffers alone: 800 states, the memory 500
        assert MEMORY * STATE_BYTES < size(first.folder) < MEMORY * STATE_BYTES + buffers / 2, size(first.folder)

        step(agent, rng, 5)  # the agent keeps acting after a save: its buffers are still its own
        assert agent.model.buffer_index.numpy().tolist() == [15] * PARALLEL
        second = store.save(agent, {"timesteps": 380, "episodes": 8, "wall_seconds": 2.0})
        assert abs(size(second.folder) - size(first.folder)) < 4096  # and still not saved the second time
        timesteps = agent.timesteps
    finally:
        agent.close()  # TensorForce 0.6 closes one agent per process state at a time

    fresh, restored = store.resume(dqn)
    try:
        assert restored is not None and restored.number == second.number
        assert fresh.timesteps == timesteps == 380
        restored_memory = memory_of(fresh)
        assert restored_memory.keys() == memory.keys()
        assert all(np.array_equal(restored_memory[name], value) for name, value in memory.items())
        assert fresh.model.buffer_index.numpy().tolist() == [0] * PARALLEL  # fresh episodes, as before
        step(fresh, rng, 60, end_at=30)  # and it trains on
        assert fresh.updates > 0
    finally:
        fresh.close()
