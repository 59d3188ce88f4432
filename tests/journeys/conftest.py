"""The journey tests build many TensorForce agents in one process: each test releases what it built."""

import pytest


@pytest.fixture(autouse=True)
def _release(release_memory: None) -> None:
    """Every journey test gives its agents' memory back (see ``release_memory`` in tests/conftest.py)."""
