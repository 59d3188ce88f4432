"""Frequencies such as ``"600s"``, ``"100e"`` or ``"5000t"`` (seconds, episodes, timesteps).

A bare number means seconds, as it did in the original client. Stored as a small value object and written back
as its string form, so a resolved spec reads the way a user would write it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator

from trainer.kernel.spec.counted import Counted

Unit = Literal["s", "e", "t"]
UNIT_NAMES: dict[str, str] = {"s": "seconds", "e": "episodes", "t": "timesteps"}
_PATTERN = re.compile(r"^\s*(\d+)\s*([set]?)\s*$")


@dataclass(frozen=True)
class Frequency(Counted):
    """Every ``value`` seconds, episodes or timesteps."""

    unit: Unit

    @property
    def described(self) -> str:
        return f"every {self.value} {UNIT_NAMES[self.unit]}"

    @classmethod
    def parse(cls, raw: Any) -> Frequency:
        """Read ``"600s"``, ``"100e"``, ``"5000t"``, ``600`` or ``"600"`` (seconds)."""
        if isinstance(raw, Frequency):
            return raw
        if isinstance(raw, bool) or not isinstance(raw, (int, str)):
            raise ValueError(f"expected a frequency like '600s', '100e' or '5000t', got {raw!r}")
        match = _PATTERN.match(str(raw))
        if not match:
            raise ValueError(
                f"'{raw}' is not a frequency: write a whole number followed by s (seconds), e (episodes) or "
                "t (timesteps), e.g. '600s', '100e', '5000t'"
            )
        return cls.positive(raw, match.group(1), match.group(2) or "s", "a frequency")  # type: ignore[no-any-return]


def _no_episodes(value: Frequency) -> Frequency:
    if value.unit == "e":
        raise ValueError(
            f"'{value}': summaries are written in seconds or timesteps, not episodes (episodes end at different "
            "times on different workers); use e.g. '120s' or '5000t'"
        )
    return value


SummaryFrequency = Annotated[Frequency, AfterValidator(_no_episodes)]
