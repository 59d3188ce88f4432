"""Where the user's own code is imported from: folders put first on ``sys.path``.

The trainer's ``--code DIR`` (the project's root locally, the shipped code's mount on GKE), and ``tfcli validate``
and ``play``, which build environments in the CLI's own process, all call :func:`add_code_paths`, so a module in the
project's ``envs/`` is ``envs.<module>`` wherever it runs.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from pathlib import Path


def add_code_paths(folders: Iterable[str | Path]) -> None:
    """Put ``folders`` first on ``sys.path``, in the order given (once each)."""
    for folder in reversed(list(folders)):
        path = str(Path(folder).resolve())
        if path in sys.path:
            sys.path.remove(path)
        sys.path.insert(0, path)
    importlib.invalidate_caches()
