"""One of TensorForce's own environments (``type: tensorforce`` in a spec).

``tensorforce.Environment.create`` falls back to ``import gym`` for any name it does not know, which fails here
(gym is not installed, and broken on modern numpy anyway); so unknown names are caught first and answered with
the names TensorForce does know. A dotted ``package.module.ClassName`` names a custom ``Environment`` subclass.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any

from trainer import compat
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec.environment import TensorforceEnvironment


def _resolve(name: str) -> Any:
    import tensorforce.environments

    known = tensorforce.environments.environments
    if name in known:
        return name
    if "." in name:
        module_name, _, attribute = name.rpartition(".")
        try:
            return getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise InvalidInput(f"environment.environment: cannot import '{name}': {error}") from error
    matches = difflib.get_close_matches(name, sorted(known), n=3)
    hint = f" (did you mean {', '.join(repr(m) for m in matches)}?)" if matches else ""
    raise InvalidInput(
        f"environment.environment: unknown TensorForce environment '{name}'{hint}; "
        "use type: gymnasium for gymnasium levels"
    )


def make_tensorforce_environment(spec: TensorforceEnvironment, *, max_episode_timesteps: int | None = None) -> Any:
    """``tensorforce.Environment.create(environment=..., **kwargs)``, with TensorForce's errors made readable."""
    compat.apply()  # imports TensorFlow quietly; TensorForce's own import is noisy otherwise
    return created(_resolve(spec.environment), str(spec.environment), max_episode_timesteps, spec.kwargs)


def created(environment: Any, name: str, max_episode_timesteps: int | None, kwargs: dict[str, Any]) -> Any:
    """``Environment.create`` of a TensorForce environment (a name, a class) with its errors made readable: its own
    and a wrong keyword argument are the spec's mistakes (exit 2), a missing package is the image's."""
    from tensorforce import Environment, TensorforceError

    try:
        return Environment.create(environment=environment, max_episode_timesteps=max_episode_timesteps, **kwargs)
    except TensorforceError as error:
        raise InvalidInput(f"environment: {name}: {error}") from error
    except TypeError as error:
        raise InvalidInput(f"environment.kwargs: {name}: {error}") from error
    except ImportError as error:
        raise TfcliError(f"environment: {name} needs a package that is not installed: {error}") from error
