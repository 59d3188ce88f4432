"""A gymnasium level behind TensorForce 0.6's environment interface.

TensorForce's own gym wrapper imports ``gym`` and breaks on gym >= 0.23, so the trainer talks to gymnasium
through this adapter instead. It deliberately does not subclass ``tensorforce.Environment``: environment-worker
processes import only gymnasium, never TensorFlow.

Episode length is counted here, in agent steps: the level's registered time limit is taken off and re-applied by
the adapter (divided by the frames one step skips, for Atari preprocessing), so that an experiment's
``max_timesteps_per_episode`` can lift or lower it and every time limit reads as ``terminal == 2``.

Atari levels register no time limit: their emulator cuts an episode itself after ``max_num_frames_per_episode``
frames (108,000 — 30 minutes of play — for the v5 levels). That cut is the level's limit too, converted to agent
steps by the frames each step spans (the level's own ``frameskip`` times the preprocessing's ``frame_skip``), so
TensorForce gets a true bound: it needs one to keep episodes of several environments apart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
from collections.abc import Iterator
from typing import Any, NoReturn

import gymnasium
import numpy as np
from gymnasium.envs.registration import EnvSpec

from trainer.environments.levels import level_spec
from trainer.environments.spaces import action_spec, state_spec
from trainer.environments.wrappers import apply_wrappers
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec.environment import GymnasiumEnvironment

RUNNING, TERMINATED, TRUNCATED = 0, 1, 2
# The numpy kinds an observation may have for each TensorForce state type (TensorForce casts with ``np.asarray``:
# ints and bools become floats harmlessly, a float truncated to an int or a string is a mistake of the level's).
_KINDS = {"float": "fiub", "int": "iub", "bool": "biu"}


EMULATOR_FRAME_LIMIT = "max_num_frames_per_episode"  # ale-py's own episode cut, in emulator frames
EMULATOR_FPS = 60  # the Atari 2600's frame rate (ale-py's metadata says 30 whatever its frameskip)


def _frames_per_step(spec: GymnasiumEnvironment) -> int:
    """Level steps one agent step spans (Atari preprocessing's ``frame_skip``)."""
    frames = 1
    for wrapper in spec.wrappers:
        if wrapper.type == "atari_preprocessing":
            frames *= int((wrapper.model_extra or {}).get("frame_skip", 4))
    return frames


def _level_frameskip(kwargs: dict[str, Any]) -> int:
    """Emulator frames one step of an Atari level spans (its ``frameskip``; the longest of a stochastic range)."""
    frameskip = kwargs.get("frameskip", 1)
    return max(int(frameskip if isinstance(frameskip, int) else max(frameskip)), 1)


def _emulator_limit(kwargs: dict[str, Any]) -> int | None:
    """An Atari level's frame cap in level steps: ``max_num_frames_per_episode`` / the level's ``frameskip``."""
    frames = kwargs.get(EMULATOR_FRAME_LIMIT)
    if not isinstance(frames, int) or frames <= 0:
        return None
    return math.ceil(frames / _level_frameskip(kwargs))


def level_limit(spec: GymnasiumEnvironment, registered: EnvSpec) -> int | None:
    """The level's own episode limit in agent steps: gymnasium's registered time limit (``max_episode_steps``,
    possibly set in the spec's ``kwargs``), else the emulator's frame cap; None when the level has neither."""
    kwargs = {**registered.kwargs, **spec.kwargs}
    steps = kwargs.get("max_episode_steps", registered.max_episode_steps)
    if steps is None:
        steps = _emulator_limit(kwargs)
    if steps is None:
        return None
    return math.ceil(steps / _frames_per_step(spec))


class GymnasiumAdapter:
    """One gymnasium environment, stepped by TensorForce-style ``reset`` / ``execute`` calls."""

    def __init__(
        self,
        spec: GymnasiumEnvironment,
        *,
        seed: int | None = None,
        max_episode_timesteps: int | None = None,
        name: str | None = None,
    ) -> None:
        self._name = name or spec.level
        registered = level_spec(spec.level)
        kwargs = dict(spec.kwargs)
        # A max_episode_steps in kwargs is gymnasium's own limit (in frames of the level) and stays gymnasium's;
        # the registry's default limit is replaced by the adapter's count of agent steps.
        unlimited = dataclasses.replace(registered, max_episode_steps=None)
        try:
            env = gymnasium.make(unlimited, **kwargs)
        except TypeError as error:
            raise InvalidInput(f"environment.kwargs: {spec.level}: {error}") from error
        except gymnasium.error.DependencyNotInstalled as error:
            raise TfcliError(f"environment: {spec.level} needs a package that is not installed: {error}") from error
        try:
            env = apply_wrappers(env, spec.wrappers)
            self._states = state_spec(env.observation_space)
            self._actions = action_spec(env.action_space)
        except BaseException:
            env.close()
            raise
        self._env = env
        self._limit = max_episode_timesteps if max_episode_timesteps is not None else level_limit(spec, registered)
        self._seed = seed
        self._level_steps_per_step = _frames_per_step(spec)
        level_kwargs = {**registered.kwargs, **kwargs}
        atari = EMULATOR_FRAME_LIMIT in level_kwargs
        self._emulator_frames = _level_frameskip(level_kwargs) if atari else None  # per level step
        if seed is not None:
            self._env.action_space.seed(seed)
        self._timestep = 0

    def states(self) -> dict[str, Any]:
        """TensorForce's ``states`` spec, e.g. ``{"type": "float", "shape": (4,), ...}`` for CartPole."""
        return dict(self._states)

    def actions(self) -> dict[str, Any]:
        """TensorForce's ``actions`` spec, e.g. ``{"type": "int", "shape": (), "num_values": 2}`` for CartPole."""
        return dict(self._actions)

    def max_episode_timesteps(self) -> int | None:
        """The most agent steps an episode lasts before it is cut off (``terminal == 2``); None if unlimited."""
        return self._limit

    def reset(self) -> Any:
        """Start an episode; the first one is seeded with the experiment's seed (gymnasium keeps its RNG after)."""
        with self._no_exit("reset()"):
            if self._seed is not None:
                observation, _ = self._env.reset(seed=self._seed)
                self._seed = None
            else:
                observation, _ = self._env.reset()
        self._timestep = 0
        return self._checked(observation, "reset()")

    def execute(self, actions: Any) -> tuple[Any, int, float]:
        """One step: ``(states, terminal, reward)``, terminal 0 running, 1 terminated, 2 cut off by a time limit."""
        if self._actions["type"] == "int" and np.ndim(actions) == 0:
            actions = int(actions)  # TensorForce hands out numpy scalars; some levels want a plain int
        with self._no_exit("step()"):
            observation, reward, terminated, truncated, _ = self._env.step(actions)
        self._timestep += 1
        if terminated:
            terminal = TERMINATED
        elif truncated or (self._limit is not None and self._timestep >= self._limit):
            terminal = TRUNCATED
        else:
            terminal = RUNNING
        reward = float(reward)
        if not math.isfinite(reward):  # it would poison the agent and every return after it (and result.json)
            raise InvalidInput(f"environment: {self._name} step() returned the reward {reward}: rewards must be finite")
        return self._checked(observation, "step()"), terminal, reward

    @contextlib.contextmanager
    def _no_exit(self, where: str) -> Iterator[None]:
        """``sys.exit`` or ``os._exit`` in the environment's code is its failure, in words, not the end of the
        trainer (exit 0 and no result) or of an env-worker (a learner waiting for it).

        ``os._exit`` ends a process at once, so for the call's length it is replaced by one that raises in this
        process (a process the environment forked still exits as it asks, so multiprocessing's children work).
        A C extension's ``exit()`` is beyond reach here: validate and play run in a child process for that
        (:mod:`trainer.environments.isolated`)."""
        real, pid = os._exit, os.getpid()

        def refuse(status: int) -> NoReturn:
            if os.getpid() != pid:
                real(status)
            raise SystemExit(f"os._exit({status})")

        os._exit = refuse
        try:
            yield
        except SystemExit as error:
            called = error.code if isinstance(error.code, str) else f"sys.exit({error.code})"
            raise InvalidInput(
                f"environment: {self._name} {where} called {called}: an environment must not end the process"
            ) from error
        finally:
            os._exit = real

    def _checked(self, observation: Any, where: str) -> Any:
        """The observation, if it has the shape and a type its declared ``observation_space`` allows; otherwise
        InvalidInput naming the environment (TensorForce would fail later with a bare assertion, or truncate)."""
        declared = tuple(self._states.get("shape", ()))
        try:
            array = np.asarray(observation)  # no copy for an array
        except ValueError:  # ragged
            array = np.asarray(observation, dtype=object)
        shape, kind = array.shape, array.dtype.kind
        if shape != declared or kind not in _KINDS[self._states["type"]]:
            raise InvalidInput(
                f"environment: {self._name} {where} returned an observation of shape {shape} and dtype kind "
                f"'{kind}', but its observation_space declares shape {declared} of {self._states['type']} values"
            )
        return observation

    def render(self) -> Any:
        """The level's current frame, for a level made with ``kwargs: {render_mode: rgb_array}`` (an RGB array)."""
        return self._env.render()

    def steps_per_second(self) -> float | None:
        """How many of this adapter's steps make one second of the level's own time, to play a recording at real
        speed: the level's declared render rate (Atari: the emulator's 60 frames/s) over the level steps (frames)
        one step spans. None when the level declares no rate."""
        if self._emulator_frames is not None:
            return EMULATOR_FPS / (self._emulator_frames * self._level_steps_per_step)
        fps = self._env.metadata.get("render_fps")
        if not isinstance(fps, int | float) or fps <= 0:
            return None
        return float(fps) / self._level_steps_per_step

    def close(self) -> None:
        """Release the level (emulator, render window)."""
        self._env.close()

    def __str__(self) -> str:
        return str(self._env)
