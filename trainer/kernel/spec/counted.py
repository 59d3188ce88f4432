"""A whole number and a unit letter (``600s``, ``5000t``, ``8h``): the shape of the spec keys that hold a frequency
or a time to live. Read by the subclass's ``parse``, written back in its string form, so a resolved spec reads the
way a user wrote it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema


@dataclass(frozen=True)
class Counted:
    value: int
    unit: str

    def __str__(self) -> str:
        return f"{self.value}{self.unit}"

    @classmethod
    def parse(cls, raw: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def positive(cls, raw: Any, value: str, unit: str, what: str) -> Any:
        """``cls(value, unit)``, refusing ``raw`` (named as ``what``) unless the value is greater than 0."""
        if int(value) <= 0:
            raise ValueError(f"'{raw}': {what} must be greater than 0")
        return cls(int(value), unit)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls.parse,
            json_schema_input_schema=core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(str),
        )
