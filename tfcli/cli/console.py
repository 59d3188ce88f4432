"""The one rich console for results (stdout) and one for messages and errors (stderr).

Made on first use: importing rich's console costs tens of milliseconds that ``tfcli --help`` does not need.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

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


def print_json(data: Any) -> None:
    """``--json`` output: rich's ``print_json`` (highlighted) on a terminal; elsewhere the same text written plainly,
    as rich would write it there (indent 2, non-ASCII kept) without rendering it token by token, which takes seconds
    for a 1,000-trial sweep's status. NaN and infinities are null, flagged
    (:func:`trainer.kernel.files.finite_json`)."""
    from trainer.kernel.files import strict_json_dumps  # no NaN or Infinity, which strict parsers refuse

    console = out()
    if console.is_terminal:
        console.print_json(strict_json_dumps(data))
        return
    console.file.write(strict_json_dumps(data, indent=2, ensure_ascii=False) + "\n")
