"""Frequencies such as ``"600s"``, ``"100e"`` or ``"5000t"`` (seconds, episodes, timesteps).

A bare number means seconds, as it did in the original client. Stored as a small value object and written back
as its string form, so a resolved spec reads the way a user would write it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, GetCoreSchemaHandler
from pydantic_core import core_schema

Unit = Literal["s", "e", "t"]
UNIT_NAMES: dict[str, str] = {"s": "seconds", "e": "episodes", "t": "timesteps"}
_PATTERN = re.compile(r"^\s*(\d+)\s*([set]?)\s*$")


@dataclass(frozen=True)
class Frequency:
    """Every ``value`` seconds, episodes or timesteps."""

    value: int
    unit: Unit

    def __str__(self) -> str:
        return f"{self.value}{self.unit}"

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
        value = int(match.group(1))
        if value <= 0:
            raise ValueError(f"'{raw}': a frequency must be greater than 0")
        return cls(value, match.group(2) or "s")  # type: ignore[arg-type]

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls.parse,
            json_schema_input_schema=core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str),
        )


def _no_episodes(value: Frequency) -> Frequency:
    if value.unit == "e":
        raise ValueError(
            f"'{value}': summaries are written in seconds or timesteps, not episodes (episodes end at different "
            "times on different workers); use e.g. '120s' or '5000t'"
        )
    return value


SummaryFrequency = Annotated[Frequency, AfterValidator(_no_episodes)]
