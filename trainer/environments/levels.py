"""Look up a gymnasium level by name, with a did-you-mean for typos.

Atari levels live in ale-py, which registers them with gymnasium only when asked; doing that here means
``ALE/SpaceInvaders-v5`` resolves (and is suggested) like any classic-control level. A level of the user's own
module, ``my_pkg.envs:GridWorld-v0`` (gymnasium's ``module:id`` form), imports the module, which registers it.
"""

from __future__ import annotations

import difflib

import gymnasium
from gymnasium.envs.registration import EnvSpec

from trainer.environments.imports import import_module
from trainer.kernel.errors import InvalidInput

_ale_registered = False


def _register_ale() -> None:
    global _ale_registered
    if not _ale_registered:
        import ale_py

        ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # no emulator banner on every process's stderr
        gymnasium.register_envs(ale_py)
        _ale_registered = True


def close_matches(level: str, *, n: int = 3) -> list[str]:
    """Registered level names that look like ``level`` (case-insensitive, so ``cartpole-v1`` finds it too)."""
    by_lower = {name.lower(): name for name in gymnasium.registry}
    return [by_lower[m] for m in difflib.get_close_matches(level.lower(), by_lower, n=n, cutoff=0.6)]


def level_spec(level: str) -> EnvSpec:
    """The registry entry for ``level``, or :class:`InvalidInput` naming the closest registered levels."""
    _register_ale()
    if level in gymnasium.registry:
        return gymnasium.registry[level]
    if ":" in level:
        return _module_level(level)
    matches = close_matches(level)
    hint = f" (did you mean {', '.join(repr(m) for m in matches)}?)" if matches else ""
    raise InvalidInput(f"environment.level: unknown gymnasium level '{level}'{hint}")


def _module_level(level: str) -> EnvSpec:
    """``module:id``: import the module (which registers its levels), then look the id up."""
    module, _, name = level.partition(":")
    before = set(gymnasium.registry)
    import_module(module, "environment.level")
    if name in gymnasium.registry:
        return gymnasium.registry[name]
    added = sorted(set(gymnasium.registry) - before)
    found = f"it registers {', '.join(repr(a) for a in added)}" if added else "it registers no level"
    raise InvalidInput(f"environment.level: module '{module}' does not register '{name}': {found}")
