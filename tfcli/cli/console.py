"""The one rich console for results (stdout) and one for messages and errors (stderr).

Made on first use: importing rich's console costs tens of milliseconds that ``tfcli --help`` does not need.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


@cache
def out() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@cache
def err() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)
