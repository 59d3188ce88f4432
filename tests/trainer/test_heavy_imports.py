"""TensorFlow and TensorForce are imported with the garbage collector paused, and what they made is frozen
(trainer/heavy_imports.py): in a fresh trainer process, ``trainer.compat.apply`` makes no collection, leaves the
collector on, and the next full collection walks only what came after."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # a process that imports TensorFlow (README "Development")


def test_the_import_makes_no_collection_and_freezes_what_it_made() -> None:
    script = textwrap.dedent(
        """\
        import gc
        collections = []
        gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
        from trainer import compat
        compat.apply()
        frozen = gc.get_freeze_count()
        print(gc.isenabled(), collections.count(2), frozen > 100_000, "tensorforce.agents" in __import__("sys").modules)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "0", "True", "True"], done.stdout
