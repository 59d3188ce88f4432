"""``tfcli tensorboard``: TensorBoard over a ``tfcli init`` project's runs, started as a user starts it (issue 34).

In such a project ``uv run --with "setuptools<81" tensorboard`` failed (no ``pkg_resources``: uv found no project
there), so the command runs TensorBoard 2.12 with tfcli's own interpreter. The test starts the console script in a
fresh project outside the repository, waits until TensorBoard serves ``/data/plugins_listing`` (its plugin registry,
tensorboard/backend/application.py) with the HParams plugin in it, and stops it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from cli_kit import invoke

TFCLI = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "tfcli"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return int(probe.getsockname()[1])


@pytest.mark.slow
def test_tensorboard_serves_the_hparams_dashboard_in_a_fresh_project(lab: Path) -> None:
    port = _free_port()
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    server = subprocess.Popen(
        [str(TFCLI), "tensorboard", "--port", str(port)], cwd=lab, env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        plugins = None
        deadline = time.monotonic() + 180
        while plugins is None and time.monotonic() < deadline:
            assert server.poll() is None, server.communicate()[0]
            try:
                with urllib.request.urlopen(f"http://localhost:{port}/data/plugins_listing", timeout=5) as answer:
                    plugins = json.load(answer)
            except OSError:
                time.sleep(1)
        assert plugins is not None, "TensorBoard never answered"
        assert "hparams" in plugins and "scalars" in plugins
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_a_missing_logdir_is_invalid_input(lab: Path) -> None:
    code, _, stderr = invoke("tensorboard", "runs/")
    assert code == 2 and "LOGDIR: no folder runs/ here" in stderr and "Traceback" not in stderr
