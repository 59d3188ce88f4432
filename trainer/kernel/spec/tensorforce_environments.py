"""Environment files in ``tensorforce.Environment.create`` form, translated into tfcli's environment spec.

TensorForce 0.6.5 reads ``environment`` (or ``type``; default: its gym adapter) as a name of its own environments, a
dotted class path, or else a gym level; ``max_episode_timesteps`` sets the episode limit and the other keys go to
the environment. Its gym adapter (``OpenAIGym``) takes ``level``, ``min_value``/``max_value`` (bounds for the
unbounded state entries, states clipped to them), ``terminal_reward`` (added when the level ends an episode before
its time limit), ``reward_threshold`` (the registry's "solved" return), ``drop_states_indices`` (entries left out
of a flat state), ``visualize`` and ``visualize_directory``; every other key is the gym level's own argument.

Here the gym adapter's arguments become gymnasium wrappers with the same meaning (trainer/environments/wrappers.py),
``reward_threshold`` the experiment's ``target_return`` and ``max_episode_timesteps`` its
``max_timesteps_per_episode``. An unversioned level (``CartPole``) resolves to its latest registered gymnasium
version (``CartPole-v1``); TensorForce 0.6.5 itself took ``-v0`` when there was one, which gymnasium keeps only for
old levels, so the note names the version picked.
"""

from __future__ import annotations

import difflib
import inspect
import re
from typing import Any

from trainer.kernel.spec.translation import DocumentTranslator, Translation

# TensorForce 0.6.5's ``tensorforce.environments.environments``: names of its own environments.
TENSORFORCE_NAMES = (
    *("default", "ale", "arcade_learning_environment", "custom_cartpole", "gym", "openai_gym", "retro"),
    *("openai_retro", "osim", "open_sim", "ple", "pygame_learning_environment", "vizdoom", "carla"),
    "carla_environment",
)
_GYM = ("default", "gym", "openai_gym")
_GYM_ARGUMENTS = (
    *("level", "visualize", "import_modules", "min_value", "max_value", "terminal_reward", "reward_threshold"),
    *("drop_states_indices", "visualize_directory"),
)
_CREATE_ARGUMENTS = ("max_episode_timesteps", "reward_shaping", "remote", "blocking", "host", "port")
_VERSIONED = re.compile(r"-v\d+$")
# gymnasium.make's own keyword arguments, which every level takes.
_MAKE_ARGUMENTS = ("max_episode_steps", "disable_env_checker", "render_mode")


def is_tensorforce_environment(document: Any) -> bool:
    """``environment: NAME`` (not tfcli's ``type: tensorforce``), ``type: gym`` and the like, or a level mapping
    with TensorForce's own keys or an unversioned level."""
    if not isinstance(document, dict):
        return False
    kind = document.get("type")
    if kind in ("gymnasium", "tensorforce"):
        return False
    if "environment" in document or kind in TENSORFORCE_NAMES:
        return True
    if kind is not None:
        return False
    level = document.get("level")
    own = set(_GYM_ARGUMENTS[1:]) | set(_CREATE_ARGUMENTS)
    return bool(own & set(document)) or (isinstance(level, str) and not _VERSIONED.search(level))


def _registry() -> Any:
    import gymnasium

    if not any(name.startswith("ALE/") for name in gymnasium.registry):
        try:
            import ale_py

            gymnasium.register_envs(ale_py)
        except ImportError:
            pass
    return gymnasium.registry


def latest_version(level: str) -> str | None:
    """``CartPole`` -> ``CartPole-v1``: the highest registered version of an unversioned level (None: none)."""
    pattern = re.compile(re.escape(level) + r"-v(\d+)")
    versions = [(int(m.group(1)), name) for name in _registry() if (m := pattern.fullmatch(name))]
    return max(versions)[1] if versions else None


def _level_arguments(level: str) -> list[str] | None:
    """The keyword arguments the level's class takes (None: any, or the level cannot be loaded here)."""
    from gymnasium.envs.registration import load_env_creator

    spec = _registry().get(level)
    if spec is None or not isinstance(spec.entry_point, str):
        return None
    try:
        parameters = inspect.signature(load_env_creator(spec.entry_point)).parameters.values()
    except Exception:  # a level that does not import here fails its build with the reason
        return None
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return None
    return [parameter.name for parameter in parameters]


def _is_class_path(name: str) -> bool:
    """``package.module.ClassName`` (a TensorForce ``Environment`` subclass), not a level such as ``ALE/Pong-v5``."""
    return "." in name and not any(mark in name for mark in ("/", ":", "-v"))


class _Environment(DocumentTranslator):
    def create_arguments(self) -> None:
        """``Environment.create``'s own arguments, whatever the environment."""
        if "max_episode_timesteps" in self.rest:
            limit = self.rest.pop("max_episode_timesteps")
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                self.problem("max_episode_timesteps", f"expected a whole number above 0, got {limit!r}")
            else:
                self.out.experiment["max_timesteps_per_episode"] = limit
                self.out.mapped.append(f"max_episode_timesteps {limit} -> max_timesteps_per_episode {limit}")
        if "reward_shaping" in self.rest:
            self.rest.pop("reward_shaping")
            self.problem("reward_shaping", "not supported (code run on every step); shape rewards in the environment")
        remote = [key for key in ("remote", "blocking", "host", "port") if key in self.rest]
        for key in remote:
            self.rest.pop(key)
        if remote:
            self.out.managed.append(f"{', '.join(remote)} (where environments run: run_mode, num_workers)")

    def gym(self, level: Any) -> dict[str, Any]:
        if not isinstance(level, str) or not level:
            self.problem("level", "required: the gym level, e.g. CartPole")
            return {}
        if not _VERSIONED.search(level):
            latest = latest_version(level)
            if latest is None:
                close = difflib.get_close_matches(level, sorted({_VERSIONED.sub("", n) for n in _registry()}), n=3)
                hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
                self.problem("level", f"no gymnasium level '{level}' in any version{hint}")
                return {}
            self.out.mapped.append(f"level {level} -> {latest} (the latest registered version)")
            level = latest
        wrappers: list[dict[str, Any]] = []
        low, high = self.rest.pop("min_value", None), self.rest.pop("max_value", None)
        if (low is None) != (high is None):
            self.problem("max_value" if high is None else "min_value", "min_value and max_value go together")
        elif low is not None:
            wrappers.append({"type": "bound_observation", "min_value": low, "max_value": high})
            self.out.mapped.append(f"min_value/max_value -> wrapper bound_observation [{low}, {high}]")
        if (dropped := self.rest.pop("drop_states_indices", None)) is not None:
            if not isinstance(dropped, list) or not all(type(index) is int for index in dropped):
                self.problem("drop_states_indices", f"expected a list of indices, got {dropped!r}")
            else:
                wrappers.append({"type": "drop_observation_indices", "indices": dropped})
                self.out.mapped.append("drop_states_indices -> wrapper drop_observation_indices")
        if (extra := self.rest.pop("terminal_reward", None)) is not None:
            if isinstance(extra, bool) or not isinstance(extra, int | float):
                self.problem("terminal_reward", f"expected a number, got {extra!r}")
            elif extra:
                wrappers.append({"type": "terminal_reward", "reward": extra})
                self.out.mapped.append("terminal_reward -> wrapper terminal_reward")
        if (threshold := self.rest.pop("reward_threshold", None)) is not None:
            self.out.experiment["target_return"] = threshold
            self.out.mapped.append(f"reward_threshold {threshold} -> target_return {threshold}")
        for key in ("visualize", "visualize_directory"):
            if self.rest.pop(key, None) is not None:
                self.out.ignored.append(f"{key} (runs are headless: `tfcli experiment play --video` records one)")
        if "import_modules" in self.rest:
            self.rest.pop("import_modules")
            self.problem("import_modules", "not supported here: name the level as 'module:id' (gymnasium's form)")
        self._check_level_arguments(level)
        document: dict[str, Any] = {"type": "gymnasium", "level": level}
        if self.rest:
            document["kwargs"] = self.rest
            self.out.mapped.append(f"{', '.join(self.rest)} -> kwargs (the level's own arguments)")
        if wrappers:
            document["wrappers"] = wrappers
        return document

    def _check_level_arguments(self, level: str) -> None:
        """A key that is neither TensorForce's nor the level's is a typo, as in any other spec (exit 2)."""
        if not self.rest:
            return
        allowed = _level_arguments(level)
        if allowed is None:
            return
        choices = [*_GYM_ARGUMENTS, *_CREATE_ARGUMENTS, *_MAKE_ARGUMENTS, *allowed]
        for key in list(self.rest):
            if key not in (*allowed, *_MAKE_ARGUMENTS):
                close = difflib.get_close_matches(str(key), choices, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self.problem(key, f"unknown key{hint}: not TensorForce's and not an argument of {level}")
                self.rest.pop(key)

    def translate(self) -> Translation:
        name = self.rest.pop("environment", None) or self.rest.pop("type", None) or "default"
        self.rest.pop("type", None)
        self.create_arguments()
        if name in _GYM:
            document = self.gym(self.rest.pop("level", None))
        elif isinstance(name, str) and (name in TENSORFORCE_NAMES or _is_class_path(name)):
            document = {"type": "tensorforce", "environment": name}
            if self.rest:
                document["kwargs"] = self.rest
            self.out.mapped.append(f"environment {name} -> type: tensorforce, environment: {name}")
        elif isinstance(name, str):
            document = self.gym(name)  # TensorForce's fallback: a name it does not know is a gym level
        else:
            self.problem("environment", f"expected a name, got {name!r}")
            document = {}
        self.out.document = None if self.out.problems else document
        return self.out


def translate_environment(document: dict[str, Any], *, shown: str, prefix: str = "") -> Translation:
    """The tfcli form of an ``Environment.create`` document; problems name ``shown`` and the field."""
    return _Environment(document, shown, prefix).translate()
