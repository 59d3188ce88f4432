"""Turning pydantic's validation errors into ``<file>: <dotted.path>: <message>`` lines a user can act on.

Locations are walked through the model's annotations, so union tags pydantic adds (``gymnasium``, ``layers``)
are dropped from the path and an unknown key gets a did-you-mean from the keys allowed at that very place.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any, Union

from pydantic import BaseModel, RootModel, Tag, ValidationError

from trainer.kernel.errors import MAX_PROBLEMS

Loc = tuple[str | int, ...]


def _strip(annotation: Any) -> Any:
    """Drop ``Annotated`` wrappers and ``None`` from an annotation."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (Union, types.UnionType):
        members = [m for m in typing.get_args(annotation) if m is not type(None)]
        if len(members) == 1:
            return _strip(members[0])
    return annotation


def _tag_of(member: Any) -> str | None:
    """The tag a union member is selected by: a ``Tag`` annotation or its ``type`` literal."""
    if typing.get_origin(member) is typing.Annotated:
        for meta in typing.get_args(member)[1:]:
            if isinstance(meta, Tag):
                return meta.tag
    member = _strip(member)
    if isinstance(member, type) and issubclass(member, BaseModel) and "type" in member.model_fields:
        literal = member.model_fields["type"].annotation
        if typing.get_origin(literal) is typing.Literal:
            return str(typing.get_args(literal)[0])
    return None


def _walk(model: type[BaseModel], loc: Loc) -> tuple[list[str | int], Any]:
    """The displayable parts of ``loc`` and the annotation found at its end."""
    shown: list[str | int] = []
    current: Any = model
    for part in loc:
        current = _strip(current)
        if isinstance(current, type) and issubclass(current, RootModel):
            current = _strip(current.model_fields["root"].annotation)
        if typing.get_origin(current) in (Union, types.UnionType):
            chosen = next((m for m in typing.get_args(current) if _tag_of(m) == part), None)
            if chosen is not None:
                current = chosen
                continue
        shown.append(part)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            current = field.annotation if field is not None else None
        elif typing.get_origin(current) is list:
            current = typing.get_args(current)[0]
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            current = None
    current = _strip(current)
    if isinstance(current, type) and issubclass(current, RootModel):
        current = _strip(current.model_fields["root"].annotation)
    return shown, current


def dotted(parts: list[str | int]) -> str:
    """``["network", 2, "size"]`` -> ``network[2].size``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _allowed_keys(model: type[BaseModel], parent: Loc) -> list[str]:
    _, annotation = _walk(model, parent)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    if typing.get_origin(annotation) in (Union, types.UnionType):
        keys: list[str] = []
        for member in typing.get_args(annotation):
            member = _strip(member)
            if isinstance(member, type) and issubclass(member, BaseModel):
                keys += [k for k in member.model_fields if k not in keys]
        return keys
    return []


def _describe(error: Any, model: type[BaseModel], loc: Loc) -> str:
    kind, message, value = error["type"], error["msg"], error.get("input")
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            message = message[len(prefix) :]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"unknown key{hint}; allowed here: {', '.join(allowed)}" if allowed else f"unknown key{hint}"
    if kind == "missing":
        return "required but missing"
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        options = [o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()]
        close = difflib.get_close_matches(str(value), options, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return f"got {value!r}; expected {expected}{hint}"
    if isinstance(value, (str, int, float, bool)) and kind != "spec" and not kind.startswith("value_error"):
        return f"{message[0].lower()}{message[1:]}, got {value!r}"
    return message


def problems_of(error: ValidationError, model: type[BaseModel], file: str, origins: dict[str, str]) -> list[str]:
    """One ``<file>: <path>: <message>`` line per problem; ``origins`` maps a top-level key to the file it came from."""
    lines = []
    items = error.errors()
    if len(items) > MAX_PROBLEMS + 1:  # describe only what is shown: each line costs a did-you-mean
        items, more = items[:MAX_PROBLEMS], len(items) - MAX_PROBLEMS
    else:
        more = 0
    for item in items:
        loc: Loc = tuple(item["loc"])
        shown, _ = _walk(model, loc)
        where = file
        if shown and str(shown[0]) in origins:
            where, shown = origins[str(shown[0])], shown[1:]
        path = dotted(shown)
        lines.append(
            f"{where}: {path}: {_describe(item, model, loc)}" if path else f"{where}: {_describe(item, model, loc)}"
        )
    if more:
        lines.append(f"{file}: ... and {more:,} more problems")
    return lines
