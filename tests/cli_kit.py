"""The CLI as a user runs it, for the tests that walk whole journeys (``tests/cli``, ``tests/journeys``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from typer.testing import CliRunner

from tfcli.cli.app import app

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    """``tfcli ARGS...``: the exit code, stdout and stderr."""
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def status(name: str) -> dict[str, object]:
    """``tfcli experiment status -e NAME --json``, which must succeed."""
    code, stdout, stderr = invoke("experiment", "status", "-e", name, "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


def wait_for(predicate: Callable[[], object], timeout: float = 180.0, what: str = "condition") -> None:
    """Poll ``predicate`` until it holds; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")
