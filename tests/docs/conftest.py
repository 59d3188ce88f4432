"""``--update-docs``: rewrite the docs' printed outputs from what the commands print now (doc_sessions.py)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-docs",
        action="store_true",
        help="rewrite the outputs the docs' console blocks show from what the commands print now (tests/docs)",
    )
