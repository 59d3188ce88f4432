"""Import a module of the user's (an environment's), every failure an :class:`InvalidInput` in one line.

A module that is not there, or that raises while it is imported, is the user's to fix: the message names the spec's
field and the underlying error, never a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import Any

from trainer.kernel.errors import InvalidInput


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def import_module(name: str, field: str) -> Any:
    """``importlib.import_module(name)``; :class:`InvalidInput` naming ``field`` when it fails, however it fails."""
    importlib.invalidate_caches()  # a module written since the last import (tests, notebooks) is found
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise InvalidInput(
            f"{field}: cannot import '{name}' ({_one_line(error)}); the project's root is importable, "
            "so a module in envs/ is envs.<module>"
        ) from error
    except (Exception, SystemExit) as error:  # the module's own code raised (or called sys.exit) while imported
        raise InvalidInput(f"{field}: importing '{name}' raised {_one_line(error)}") from error


def module_file(name: str) -> str | None:
    """Where the module ``name`` comes from, relative to the current folder when it is below it (``envs/x.py``), so
    that a message about the user's environment names the file to open; None when it cannot be found (without
    running the module's code where it is not imported yet)."""
    try:
        found = importlib.util.find_spec(name)
    except BaseException:  # a parent package that raises on import, a name that is no module
        return None
    origin = found.origin if found is not None else None
    if not origin or not os.path.isfile(origin):
        return None
    relative = os.path.relpath(origin)
    return origin if relative.startswith("..") else relative
