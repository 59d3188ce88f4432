"""Reading spec documents (YAML or JSON) into plain data, with errors that name the file and the line.

A spec is small and hand-written, so anything else is refused before it can cost memory: a file that is not a
regular file (``/dev/zero``, a FIFO) or is over :data:`MAX_SPEC_BYTES`, a document nested deeper than
:data:`MAX_DEPTH` (a recursive YAML alias is endlessly deep), and one whose aliases expand to more than
:data:`MAX_VALUES` values (a "billion laughs" bomb of a few hundred bytes). YAML is composed into its node graph
first and measured there, with each shared node counted once per use but visited once, and only then constructed.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from trainer.kernel.errors import InvalidInput

SPEC_SUFFIXES = (".yaml", ".yml", ".json")
# libyaml's parser when PyYAML was built with it: the same documents, ten times faster on a big one
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_SPEC_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_VALUES = 1_000_000  # a 1 MiB file holds at most ~500,000 values without aliases


def display_path(path: Path) -> str:
    """The path as the user would type it: relative to the current folder when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_text(path: Path, shown: str, limit: int = MAX_SPEC_BYTES) -> str:
    """A regular file's text, at most ``limit`` bytes of it; anything else is an ``InvalidInput`` naming ``shown``."""
    try:
        # O_NONBLOCK: opening a FIFO nobody writes to would otherwise wait for ever (regular files ignore the flag)
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise InvalidInput(f"{shown}: not a regular file (a spec is a YAML or JSON file)")
            data = file.read(limit + 1)
    except FileNotFoundError:
        raise InvalidInput(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise InvalidInput(f"{shown}: is a folder, not a spec file") from None
    except OSError as error:
        raise InvalidInput(f"{shown}: cannot be read ({error.strerror})") from None
    if len(data) > limit:
        raise InvalidInput(f"{shown}: over {limit // 1024} KiB; a spec file is far smaller")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"{shown}: not a text file (expected YAML or JSON)") from None


def _measure(node: yaml.Node, shown: str, depth: int, sizes: dict[int, int]) -> int:
    """How many values ``node`` stands for once its aliases are expanded (each shared node measured once)."""
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{shown}: nested more than {MAX_DEPTH} levels deep (or a recursive alias)")
    known = sizes.get(id(node))
    if known is not None:
        return known
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_measure(item, shown, depth + 1, sizes) for item in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(
            _measure(key, shown, depth + 1, sizes) + _measure(value, shown, depth + 1, sizes)
            for key, value in node.value
        )
    if size > MAX_VALUES:
        raise InvalidInput(f"{shown}: its aliases expand to more than {MAX_VALUES:,} values, far more than a spec")
    sizes[id(node)] = size
    return size


def _depth(data: Any, shown: str) -> None:
    """Refuse a parsed JSON document nested deeper than :data:`MAX_DEPTH` (iteratively: no recursion to exhaust)."""
    stack = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InvalidInput(f"{shown}: nested more than {MAX_DEPTH} levels deep")
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack += [(child, depth + 1) for child in children]


def _event_depth(text: str, shown: str) -> None:
    """Refuse YAML nested deeper than :data:`MAX_DEPTH` from its parse events, before any node is composed: composing
    recurses (in C with libyaml, where 100,000 open brackets overflow the stack and kill the process)."""
    depth = 0
    for event in yaml.parse(text, Loader=SAFE_LOADER):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise InvalidInput(f"{shown}: nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load_yaml(text: str, shown: str) -> Any:
    """``yaml.safe_load`` with the document measured (depth, expanded size) before it is constructed."""
    _event_depth(text, shown)
    loader = SAFE_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node, shown, 0, {})
        return loader.construct_document(node)
    finally:
        loader.dispose()


def parse(text: str, shown: str, *, as_json: bool) -> Any:
    """One document's data; syntax errors and hostile shapes are an ``InvalidInput`` naming ``shown``."""
    try:
        if as_json:
            data = json.loads(text)
            _depth(data, shown)
            return data
        return load_yaml(text, shown)
    except RecursionError:
        raise InvalidInput(f"{shown}: nested too deeply to read") from None
    except json.JSONDecodeError as error:
        raise InvalidInput(f"{shown}: line {error.lineno} column {error.colno}: invalid JSON: {error.msg}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise InvalidInput(f"{shown}: {where}invalid YAML: {problem}") from None


def read_document(path: Path) -> Any:
    """Parse one YAML or JSON file; a missing, unreadable, oversized, hostile or empty file is an ``InvalidInput``."""
    shown = display_path(path)
    data = parse(read_text(path, shown), shown, as_json=path.suffix == ".json")
    if data is None:
        raise InvalidInput(f"{shown}: the file is empty")
    return data
