"""``trainer.fast_exit.exit_now``: a finished trainer process (the trainer, the curve's helper) ends without the
interpreter's teardown, its output flushed and its exit code kept; the helper's picture is complete by then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TEARDOWN = "import atexit\natexit.register(print, 'TEARDOWN RAN', flush=True)\n"  # what the interpreter's exit runs


def test_exit_now_skips_the_teardown_but_flushes_and_keeps_the_code() -> None:
    code = TEARDOWN + "import sys\nfrom trainer.fast_exit import exit_now\nsys.stdout.write('written')\nexit_now(3)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert done.stdout == "written"  # flushed, though never followed by a newline or a normal exit


def test_the_curve_helper_draws_then_ends_without_the_teardown(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(TEARDOWN)  # site imports it at the helper's start (Python's site docs)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hooks), *filter(None, [os.environ.get("PYTHONPATH")])]))
    rows = [{"worker": 0, "episode": n, "timesteps": 20 * n, "return": float(n), "length": 20, "wall_seconds": 0.1 * n}
            for n in range(1, 30)]  # fmt: skip
    request = {"path": str(tmp_path / "curve.png"), "title": "t", "episodes": rows}
    done = subprocess.run(
        [sys.executable, "-m", "trainer.curve_painter"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "curve.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "TEARDOWN RAN" not in done.stdout
    control = subprocess.run([sys.executable, "-c", "pass"], capture_output=True, text=True, env=env, timeout=60)
    assert "TEARDOWN RAN" in control.stdout  # the hook does run where a process exits normally
