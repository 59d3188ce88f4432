"""Reading spec documents (YAML or JSON) into plain data, with errors that name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tfcli.errors import InvalidInput

SPEC_SUFFIXES = (".yaml", ".yml", ".json")


def display_path(path: Path) -> str:
    """The path as the user would type it: relative to the current folder when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_document(path: Path) -> Any:
    """Parse one YAML or JSON file; a missing file, a syntax error or an empty file is an ``InvalidInput``."""
    shown = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput(f"{shown}: no such file") from None
    except IsADirectoryError:
        raise InvalidInput(f"{shown}: is a folder, not a spec file") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{shown}: not a text file (expected YAML or JSON)") from None
    except OSError as error:
        raise InvalidInput(f"{shown}: cannot be read ({error.strerror})") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as error:
        raise InvalidInput(f"{shown}: line {error.lineno} column {error.colno}: invalid JSON: {error.msg}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise InvalidInput(f"{shown}: {where}invalid YAML: {problem}") from None
    if data is None:
        raise InvalidInput(f"{shown}: the file is empty")
    return data
