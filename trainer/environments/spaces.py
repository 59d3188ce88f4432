"""Translate gymnasium spaces into TensorForce 0.6 state and action specs.

TensorForce describes inputs and outputs as ``{"type": "float" | "int" | "bool", "shape": ..., ...}`` dicts and
uses the bounds: a bounded float state gets TensorForce's default ``linear_normalization`` preprocessing (so uint8
images in [0, 255] reach the network scaled to [-2, 2]), and a bounded float action is squashed into its range.
Bounds that are infinite (or absurdly large, as some levels write ``float32`` max for "unbounded") are left out,
as TensorForce's own gym wrapper does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from trainer.kernel.errors import InvalidInput

# A bound at or beyond this magnitude means "unbounded" (TensorForce's own gym wrapper uses the same cut-off).
_UNBOUNDED = 1e6


def _finite(bound: np.ndarray) -> np.ndarray:
    return np.isfinite(bound) & (np.abs(bound) < _UNBOUNDED)


def _bound(bound: np.ndarray, *, partial: bool, infinity: float) -> float | np.ndarray | None:
    """One scalar when the bound is uniform, an array when it varies, None when there is nothing to say.

    ``partial`` allows an array that mixes finite values with ``infinity`` (TensorForce's linear normalization
    skips those entries); actions get no bound at all unless every entry is finite.
    """
    finite = _finite(bound)
    if not finite.any() or (not partial and not finite.all()):
        return None
    if finite.all() and (bound == bound.flat[0]).all():
        return float(bound.flat[0])
    return np.where(finite, bound, infinity).astype(np.float32)


def _box(space: spaces.Box, *, partial: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "float", "shape": tuple(space.shape)}
    low = _bound(np.asarray(space.low, dtype=np.float64), partial=partial, infinity=-np.inf)
    high = _bound(np.asarray(space.high, dtype=np.float64), partial=partial, infinity=np.inf)
    if low is not None:
        spec["min_value"] = low
    if high is not None:
        spec["max_value"] = high
    return spec


def _multi_discrete(space: spaces.MultiDiscrete, what: str) -> dict[str, Any]:
    nvec = np.asarray(space.nvec)
    if not (nvec == nvec.flat[0]).all() or np.any(np.asarray(space.start) != 0):
        # TensorForce gives one num_values to a whole tensor; a per-entry count would need a dict of specs.
        raise InvalidInput(
            f"environment: the {what} space {space} has a different number of values per entry (or a non-zero "
            "start), which TensorForce 0.6 cannot express as one spec"
        )
    return {"type": "int", "shape": tuple(nvec.shape), "num_values": int(nvec.flat[0])}


def _spec(space: spaces.Space[Any], what: str, *, partial: bool) -> dict[str, Any]:
    if isinstance(space, spaces.Box):
        return _box(space, partial=partial)
    if isinstance(space, spaces.Discrete):
        if int(space.start) != 0:
            raise InvalidInput(f"environment: the {what} space {space} starts at {space.start}; TensorForce needs 0")
        return {"type": "int", "shape": (), "num_values": int(space.n)}
    if isinstance(space, spaces.MultiDiscrete):
        return _multi_discrete(space, what)
    if isinstance(space, spaces.MultiBinary):
        return {"type": "bool", "shape": tuple(np.atleast_1d(space.n))}
    hint = " (add a flatten_observation wrapper)" if what == "observation" else ""
    raise InvalidInput(f"environment: the {what} space {space} is not supported{hint}")


def state_spec(space: spaces.Space[Any]) -> dict[str, Any]:
    """The TensorForce ``states`` spec of an observation space (float images keep per-entry bounds)."""
    return _spec(space, "observation", partial=True)


def action_spec(space: spaces.Space[Any]) -> dict[str, Any]:
    """The TensorForce ``actions`` spec of an action space (bounds only when all of them are finite)."""
    return _spec(space, "action", partial=False)
