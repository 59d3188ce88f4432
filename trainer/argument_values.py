"""TensorForce argument values checked before TensorForce sees them: types, signs and sizes against memory.

TensorForce 0.6 takes ``batch_size: 2.5`` or ``learning_rate: -1`` and fails deep inside TensorFlow (an error with
no key in it, which tfcli could only call an internal error), and it allocates its memory — a replay memory of
``memory`` timesteps, or ``batch_size`` episodes of ``max_episode_timesteps`` for the policy-gradient agents — as
one tensor when the agent is built: ``memory: 100000000`` grew to 2 GB before failing, ``batch_size: 1000000000``
asked for petabytes. Each rule below is TensorForce 0.6.5's own (``tensorforce/agents/*.py``: the ``int > 0``,
``0.0 <= float <= 1.0`` in their docstrings, enforced by ``tensorforce/core/parameters``), checked only where the
value is a plain number: a TensorForce parameter mapping (a decaying schedule) is left to TensorForce.

The memory estimate counts what the memory stores per timestep (the observation, the action, reward and terminal,
TensorForce's internals: :data:`OVERHEAD_BYTES`) and compares it with the memory this machine (or container, by its
cgroup limit) has available now, so that the run fails in its first second with the key named rather than after
minutes of swapping.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

# key -> (kind, what) for plain values; kinds: "count" (whole number >= 1), "steps" (whole number >= 0),
# "positive" (> 0), "fraction" (0..1), "open fraction" (0 < x <= 1), "count or open fraction" (either),
# "non-negative" (>= 0).
RULES: dict[str, str] = {
    "batch_size": "count",
    "memory": "count",
    "update_frequency": "count or open fraction",
    "multi_step": "count",
    "linesearch_iterations": "steps",
    "target_sync_frequency": "count",
    "horizon": "steps",
    "start_updating": "steps",
    "learning_rate": "positive",
    "likelihood_ratio_clipping": "positive",
    "huber_loss": "positive",
    "discount": "fraction",
    "subsampling_fraction": "count or open fraction",
    "target_update_weight": "open fraction",
    "l2_regularization": "non-negative",
    "entropy_regularization": "non-negative",
    "exploration": "non-negative",
}
WORDS = {
    "count": "a whole number >= 1",
    "steps": "a whole number >= 0",
    "positive": "a number > 0",
    "fraction": "a number from 0 to 1",
    "open fraction": "a number > 0 and <= 1",
    "count or open fraction": "a whole number >= 1 or a fraction > 0 and <= 1",
    "non-negative": "a number >= 0",
}
# The words TensorForce takes in place of a number for some keys.
KEYWORDS = {"memory": {"minimum"}, "update_frequency": {"never"}, "horizon": {"episode"}}
REPLAY = frozenset({"dqn", "double_dqn", "ddqn", "dueling_dqn", "dpg", "ddpg"})
EPISODIC = frozenset({"ppo", "trpo", "vpg", "reinforce", "a2c", "ac"})
ITEM_BYTES = {"float": 4, "int": 8, "bool": 1}
OVERHEAD_BYTES = 64  # per timestep besides the observation: action, reward, terminal, TensorForce's indices
LARGEST_TENSOR = 2**31 - 1  # TensorFlow indexes a memory with int32 here and there: no capacity beyond


def _fits(kind: str, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return False
    if kind == "count or open fraction":
        return _fits("count", value) or _fits("open fraction", value)
    if kind in ("count", "steps"):
        return isinstance(value, int) and value >= (1 if kind == "count" else 0)
    if kind == "positive":
        return value > 0
    if kind == "fraction":
        return 0 <= value <= 1
    if kind == "open fraction":
        return 0 < value <= 1
    return value >= 0


def value_problems(arguments: dict[str, Any]) -> list[str]:
    """``agent.<key>: ...`` for every plain value TensorForce would refuse or choke on."""
    problems = []
    for key, kind in RULES.items():
        value = arguments.get(key)
        if value is None or isinstance(value, dict | list) or value in KEYWORDS.get(key, ()):
            continue
        if not _fits(kind, value):
            words = " or ".join([WORDS[kind], *(f"'{word}'" for word in sorted(KEYWORDS.get(key, ())))])
            problems.append(f"agent.{key}: must be {words}, got {value!r}")
    return problems


def available_memory() -> int | None:
    """Bytes this process may still allocate: the machine's ``MemAvailable``, or less under a cgroup limit."""
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if limit.isdigit() and used.isdigit():
            found.append(int(limit) - int(used))
    except OSError:
        pass
    return min(found) if found else None


def _capacity(agent: str, arguments: dict[str, Any], limit: int | None) -> tuple[str, int] | None:
    """The key that sizes the agent's memory and the timesteps it holds, when plain numbers say it."""
    memory, batch = arguments.get("memory"), arguments.get("batch_size")
    if isinstance(memory, int) and not isinstance(memory, bool):
        return "memory", memory
    if agent in EPISODIC and isinstance(batch, int) and not isinstance(batch, bool):
        return "batch_size", (batch + 1) * max(limit or 1, 1)  # TensorForce: batch_size + 1 episodes
    return None


def _size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if count < 1024 or unit == "TiB":
            return f"{count:,.1f} {unit}"
        count /= 1024
    return f"{count:,.1f} TiB"  # pragma: no cover - the loop returns


def memory_problems(
    agent: str, arguments: dict[str, Any], states: dict[str, Any], limit: int | None, *, available: int | None
) -> list[str]:
    """``agent.memory`` or ``agent.batch_size`` when the memory they imply cannot be allocated here."""
    found = _capacity(agent, arguments, limit)
    if found is None:
        return []
    key, capacity = found
    per_step = math.prod(tuple(states.get("shape", ())) or (1,)) * ITEM_BYTES.get(states.get("type", "float"), 4)
    needed = capacity * (per_step + OVERHEAD_BYTES)
    episodes = f" ({arguments[key]:,} episodes of up to {limit or 1:,} timesteps)" if key == "batch_size" else ""
    what = f"agent.{key}: a memory of {capacity:,} timesteps{episodes} needs about {_size(needed)}"
    if capacity > LARGEST_TENSOR:
        return [f"{what}, beyond TensorFlow's largest tensor ({LARGEST_TENSOR:,} entries)"]
    if available is not None and needed > available:
        return [f"{what}, and this machine has {_size(available)} available"]
    return []


def argument_problems(agent: str, arguments: dict[str, Any], states: dict[str, Any], limit: int | None) -> list[str]:
    """Every value problem of the agent's arguments, then (when the values are sound) its memory against this
    machine's."""
    problems = value_problems(arguments)
    if problems:
        return problems
    return memory_problems(agent, arguments, states, limit, available=available_memory())
