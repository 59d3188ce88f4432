"""Time to live, such as ``"30m"``, ``"8h"`` or ``"2d"``: how long a deployed run or cluster may keep billing.

``tfcli experiment reap`` (run by hand or by the scheduled CI job) stops an experiment whose stack has been up longer
than its ``ttl`` since it was started, so nothing bills on after the work, with the laptop off. Written back in its
string form, so a resolved spec reads the way a user would write it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from trainer.kernel.spec.counted import Counted

UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400}
_PATTERN = re.compile(r"^\s*(\d+)\s*([mhd])\s*$")


@dataclass(frozen=True)
class Ttl(Counted):
    """``value`` minutes, hours or days."""

    @property
    def seconds(self) -> int:
        return self.value * UNIT_SECONDS[self.unit]

    @classmethod
    def parse(cls, raw: Any) -> Ttl:
        """Read ``"30m"``, ``"8h"`` or ``"2d"`` (a whole number and a unit: no bare numbers, whose unit would be a
        guess)."""
        if isinstance(raw, Ttl):
            return raw
        match = _PATTERN.match(raw) if isinstance(raw, str) else None
        if not match:
            raise ValueError(
                f"{raw!r} is not a time to live: write a whole number followed by m (minutes), h (hours) or d (days), "
                "e.g. '30m', '8h', '2d'"
            )
        return cls.positive(raw, match.group(1), match.group(2), "a time to live")  # type: ignore[no-any-return]
