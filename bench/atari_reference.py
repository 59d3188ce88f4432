"""The published reference ``bench.atari`` compares with, and the settings behind the gap.

Dopamine's DQN (its ``dqn.gin``: settings, epsilon schedule, scores on Space Invaders) and the random policy's score
from the DQN Nature paper; from the experiment's resolved spec: frames per agent step and our epsilon schedule; and
``settings_rows``, the table of our settings (the spec and TensorForce's DQN source) beside Dopamine's.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path
from typing import Any

# Published reference points (agent trained on sticky-action ALE, scores are training-episode returns).
DOPAMINE_DQN = {1_000_000: "~160-170", 10_000_000: "~650"}  # frames -> mean return, Dopamine's DQN baselines
RANDOM_SCORE = 148.0  # random policy, Space Invaders, Mnih et al. 2015 (Nature), Extended Data Table 2
# Dopamine's dopamine/agents/dqn/configs/dqn.gin (agent steps; one agent step = 4 frames)
DOPAMINE = {
    "epsilon": "1.0 -> 0.01 linear over 250,000 agent steps (1,000,000 frames), after 20,000 steps",
    "memory": "1,000,000 transitions",
    "start_updating": "20,000 agent steps",
    "update": "batch 32 every 4 agent steps",
    "target": "every 8,000 agent steps (2,000 updates)",
    "optimizer": "RMSProp (centered, decay 0.95, epsilon 1e-5), learning rate 0.00025",
    "loss": "Huber",
    "discount": "0.99",
    "rewards": "clipped to [-1, 1]",
    "episode_cap": "27,000 agent steps (108,000 frames)",
    "sticky": "0.25",
    "network": "Nature CNN: conv 32x8/4, 64x4/2, 64x3/1, dense 512",
    "frames": "4 frames per step, 4 stacked, 84x84 grayscale",
}
DOPAMINE_EPSILON = (1.0, 0.01, 250_000, 20_000)  # initial, final, decay period, warm-up (agent steps)


def frames_per_step(spec: dict[str, Any]) -> int:
    """Emulator frames per agent step: the level's frameskip x Atari preprocessing's frame_skip x repeat_actions."""
    environment = spec["environment"]
    level = environment.get("kwargs", {}).get("frameskip", 1)
    frames = level if isinstance(level, int) else 1
    for wrapper in environment.get("wrappers", []):
        if wrapper.get("type") == "atari_preprocessing":
            frames *= int(wrapper.get("frame_skip", 4))
    return frames * int(spec.get("repeat_actions") or 1)


def epsilon_ours(exploration: Any, step: int) -> float | None:
    if isinstance(exploration, int | float):
        return float(exploration)
    if isinstance(exploration, dict) and exploration.get("type") == "linear" and exploration.get("unit") == "timesteps":
        start, end, steps = exploration["initial_value"], exploration["final_value"], exploration["num_steps"]
        return float(start + (end - start) * min(step / steps, 1.0))
    return None


def epsilon_dopamine(step: int) -> float:
    """dopamine.agents.dqn.dqn_agent.linearly_decaying_epsilon with dqn.gin's values."""
    initial, final, period, warmup = DOPAMINE_EPSILON
    bonus = (initial - final) * (period + warmup - step) / period
    return final + min(max(bonus, 0.0), initial - final)


def _number(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def tensorforce_dqn_optimizer() -> str:
    """The optimizer TensorForce 0.6.5's dqn agent builds (it takes only ``learning_rate``), read from its source."""
    found = importlib.util.find_spec("tensorforce")  # locating the package does not import it (nor TensorFlow)
    if found is None or found.origin is None:
        return "?"
    source = (Path(found.origin).parent / "agents" / "dqn.py").read_text()
    match = re.search(r"optimizer = dict\(type='(\w+)'", source)
    return match.group(1).capitalize() if match else "?"


def registered_kwargs(level: str) -> dict[str, Any]:
    from trainer.environments.levels import level_spec

    return dict(level_spec(level).kwargs)


def settings_rows(spec: dict[str, Any]) -> list[list[str]]:
    agent = spec["agent"]
    environment = spec["environment"]
    kwargs = {**registered_kwargs(environment["level"]), **environment.get("kwargs", {})}
    skip = frames_per_step(spec)
    exploration = agent.get("exploration")
    if isinstance(exploration, dict) and exploration.get("type") == "linear":
        steps = exploration["num_steps"]
        epsilon = (
            f"{_number(exploration['initial_value'])} -> {_number(exploration['final_value'])} linear over "
            f"{steps:,} {exploration.get('unit', 'timesteps')} ({steps * skip:,} frames), from step 0"
        )
    else:
        epsilon = _number(exploration)
    update_frequency = agent.get("update_frequency")
    sync = agent.get("target_sync_frequency", 1)
    target = f"every {_number(sync)} updates"
    if isinstance(sync, int) and isinstance(update_frequency, int):
        target += f" ({sync * update_frequency:,} agent steps)"
    reward = agent.get("reward_processing")
    stack = next((w.get("stack_size") for w in environment.get("wrappers", []) if w.get("type") == "frame_stack"), 1)
    preprocessing: dict[str, Any] = next(
        (w for w in environment.get("wrappers", []) if w.get("type") == "atari_preprocessing"), {}
    )
    cap_frames = kwargs.get("max_num_frames_per_episode")
    cap = "none" if cap_frames is None else f"{math.ceil(cap_frames / skip):,} agent steps ({cap_frames:,} frames)"
    network = spec.get("network") or agent.get("network")
    if isinstance(network, list):
        layers = []
        for layer in network:
            if layer.get("type") == "conv2d":
                layers.append(f"conv {layer['size']}x{layer['window']}/{layer.get('stride', 1)}")
            elif layer.get("type") == "dense":
                layers.append(f"dense {layer['size']}")
        network_text = ", ".join(layers)
    else:
        network_text = str(network)
    return [
        ["epsilon (exploration)", epsilon, DOPAMINE["epsilon"]],
        ["replay memory", f"{_number(agent.get('memory'))} transitions", DOPAMINE["memory"]],
        ["start updating", f"{_number(agent.get('start_updating'))} agent steps", DOPAMINE["start_updating"]],
        [
            "update",
            f"batch {_number(agent.get('batch_size'))} every {_number(update_frequency)} agent steps",
            DOPAMINE["update"],
        ],
        ["target network sync", target, DOPAMINE["target"]],
        [
            "optimizer",
            f"{tensorforce_dqn_optimizer()} (TensorForce's dqn agent), learning rate "
            f"{_number(agent.get('learning_rate'))}",
            DOPAMINE["optimizer"],
        ],
        ["loss", f"Huber {_number(agent['huber_loss'])}" if agent.get("huber_loss") else "squared", DOPAMINE["loss"]],
        ["discount", _number(agent.get("discount")), DOPAMINE["discount"]],
        [
            "rewards",
            "raw game score (no reward_processing)" if reward is None else _number(reward),
            DOPAMINE["rewards"],
        ],
        ["episode cap", cap, DOPAMINE["episode_cap"]],
        ["sticky actions", _number(kwargs.get("repeat_action_probability", 0.0)), DOPAMINE["sticky"]],
        ["network", network_text, DOPAMINE["network"]],
        [
            "observation",
            f"{skip} frames per step, {stack} stacked, {preprocessing.get('screen_size', '?')}x"
            f"{preprocessing.get('screen_size', '?')} {'grayscale' if preprocessing.get('grayscale_obs') else 'RGB'}"
            f", {agent.get('state_preprocessing')}",
            DOPAMINE["frames"],
        ],
    ]
