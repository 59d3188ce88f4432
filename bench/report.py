"""What ``bench.trainer`` and ``bench.atari`` share: a run's ``progress.jsonl`` as it stands, and an aligned table.

``read_progress`` may be called while the run is still writing (``bench.trainer_solve`` and ``bench.atari`` poll
it): a line not yet complete is left out rather than raising.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Container
from pathlib import Path
from typing import Any


def read_progress(results: Path) -> list[dict[str, Any]]:
    """The finished episodes in ``results/progress.jsonl`` (none while it does not exist)."""
    path = results / "progress.jsonl"
    if not path.exists():
        return []
    lines = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # a line being written (or a blank one)
            lines.append(json.loads(line))
    return lines


def print_table(header: list[str], rows: list[list[str]], left: Container[int] = (0,)) -> None:
    """``header`` and ``rows`` in aligned columns, two spaces apart: the ``left`` columns flush left, the others
    flush right; trailing blanks stripped."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        cells = [row[i].ljust(widths[i]) if i in left else row[i].rjust(widths[i]) for i in range(len(header))]
        print("  ".join(cells).rstrip())
    sys.stdout.flush()
