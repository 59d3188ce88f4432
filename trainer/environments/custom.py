"""The user's own environments: a class named ``module:Class`` (``entry_point``), or a gymnasium level of the
user's module (``level: "my_pkg.envs:GridWorld-v0"``, gymnasium's ``module:id`` form: importing the module
registers the level).

The modules come from the project's root, which the trainer (``--code``), its env-workers and ``tfcli validate``
put on ``sys.path``. Every way an import can go wrong is the user's to fix, so each is an :class:`InvalidInput`
naming the field, with the underlying reason in one line: a module that is not there, one that raises while it is
imported, a name it does not define, a class that is no environment, a level its module does not register.

A gymnasium class is registered under a private id and then made like any level, so wrappers, episode limits,
seeding and rendering behave exactly as for gymnasium's own levels.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium

from trainer.environments.gym_adapter import GymnasiumAdapter
from trainer.environments.imports import import_module, module_file
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.environment import CustomEnvironment, GymnasiumEnvironment

REGISTERED_PREFIX = "tfcli-custom/"  # the registry ids of entry-point classes


def load_class(entry_point: str) -> type:
    """The class an entry point ``module:Class`` names; :class:`InvalidInput` if it is not an environment."""
    field = "environment.entry_point"
    module_name, _, attribute = entry_point.partition(":")
    module = import_module(module_name, field)
    found = getattr(module, attribute, None)
    if found is None:
        raise InvalidInput(f"{field}: module '{module_name}' has no '{attribute}'")
    if not isinstance(found, type) or not (issubclass(found, gymnasium.Env) or _is_tensorforce(found)):
        what = f"the class {found.__name__}" if isinstance(found, type) else f"a {type(found).__name__}"
        raise InvalidInput(
            f"{field}: '{entry_point}' is {what}, not a gymnasium.Env or tensorforce.Environment subclass"
        )
    return found


def _is_tensorforce(cls: type) -> bool:
    # A tensorforce.Environment subclass was defined by a module that imported tensorforce: no need to import it
    # (and TensorFlow) here to ask.
    environments = sys.modules.get("tensorforce.environments")
    return environments is not None and issubclass(cls, environments.Environment)


def registered_level(spec: CustomEnvironment, cls: type) -> str:
    """Register the gymnasium class under a private id (again, should the spec have changed) and return the id."""
    level = REGISTERED_PREFIX + spec.entry_point.replace(":", ".")
    gymnasium.registry.pop(level, None)  # re-registering would warn
    gymnasium.register(id=level, entry_point=cls, max_episode_steps=spec.max_episode_steps)  # type: ignore[arg-type]
    return level


def make_custom_environment(
    spec: CustomEnvironment, *, seed: int | None = None, max_episode_timesteps: int | None = None
) -> Any:
    """A running environment for an ``entry_point`` spec (TensorForce's environment interface)."""
    cls = load_class(spec.entry_point)
    if issubclass(cls, gymnasium.Env):
        level = GymnasiumEnvironment(level=registered_level(spec, cls), kwargs=spec.kwargs, wrappers=spec.wrappers)
        module = spec.entry_point.partition(":")[0]
        source = module_file(module)
        name = f"{spec.entry_point} ({source})" if source else spec.entry_point
        return GymnasiumAdapter(level, seed=seed, max_episode_timesteps=max_episode_timesteps, name=name)
    if spec.wrappers:
        raise InvalidInput("environment.wrappers: gymnasium wrappers apply to gymnasium.Env classes only")
    from trainer.environments.tensorforce_env import created

    limit = max_episode_timesteps if max_episode_timesteps is not None else spec.max_episode_steps
    return created(cls, spec.entry_point, limit, spec.kwargs)
