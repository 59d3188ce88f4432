"""The learning curve drawn by a helper process (``python -m trainer.curve_painter``) that the trainer starts as
its run starts: it imports matplotlib (~0.5 s of a 2-core machine, a quarter of what a 200-step run spends after
its imports on tfcli's side) on the other core while the trainer imports TensorFlow and builds its agent, then
waits on its stdin. At the end the trainer sends it the episodes and waits for the picture, which is then a matter
of drawing only.

One path for every run: local or GKE, single or a sweep's trial. Where matplotlib is already imported (a trial
forked by a sweep's warm trainer, :mod:`tfcli.local.zygote`, which imports it once) no helper is started and the
curve is drawn in the trainer. Whenever the helper cannot draw (it died, the disk is full, it timed out) the trainer
draws it itself, so every failure is the in-process drawing's own (:func:`trainer.curve.plot_learning_curve`).
The helper ends when its stdin closes: a trainer that dies, however, leaves none behind.

The request is one line, and the helper reads that line, not its stdin to the end: an environment that forks a
process of its own (after the helper started) hands it the pipe's write end too, so the end of the stream would come
only when that process ends. Waiting for it, a run whose environment forked a helper of its own sat
:data:`DRAW_SECONDS` at its end, then drew the curve itself.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

from trainer.curve import plot_learning_curve
from trainer.kernel.state import Episode

DRAW_SECONDS = 120.0  # a helper that takes longer is killed and the trainer draws


class CurvePainter:
    """The helper process, started now; :meth:`paint` once, at the end."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        if "matplotlib.figure" in sys.modules:
            return  # imported already (a warm fork): drawing here costs the drawing only
        with contextlib.suppress(OSError):
            self._process = subprocess.Popen(
                [sys.executable, "-m", "trainer.curve_painter"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

    @property
    def helper(self) -> int | None:
        """The helper's pid, None when the curve is drawn in this process."""
        return self._process.pid if self._process is not None else None

    def paint(self, episodes: list[Episode], path: Path, *, title: str) -> None:
        """Draw ``episodes`` into ``path``: by the helper when it can, else here (raising what failed)."""
        process, self._process = self._process, None
        if process is not None:
            request = {"path": str(path), "title": title, "episodes": [episode.as_json() for episode in episodes]}
            if _ask(process, json.dumps(request)) == 0:
                return
        plot_learning_curve(episodes, path, title=title)

    def close(self) -> None:
        """End an unused helper (an empty request: it draws nothing)."""
        process, self._process = self._process, None
        if process is not None:
            _ask(process, "")


def _ask(process: subprocess.Popen[bytes], request: str) -> int:
    """Send the helper its one request line and wait for it to end (killed after :data:`DRAW_SECONDS`); its exit."""
    try:
        process.communicate(request.encode() + b"\n", timeout=DRAW_SECONDS)
    except (OSError, subprocess.TimeoutExpired):
        process.kill()
        process.wait()
    return process.returncode


def main() -> int:
    from matplotlib import figure  # noqa: F401
    from matplotlib.backends import backend_agg  # noqa: F401 - the point of this process: imported while it waits

    text = sys.stdin.readline()  # one line: the end of the stream may be held by a process the environment forked
    if not text.strip():
        return 0  # the trainer ended without asking
    request = json.loads(text)
    episodes = [Episode.from_json(row) for row in request["episodes"]]
    plot_learning_curve(episodes, Path(request["path"]), title=request["title"])
    return 0


if __name__ == "__main__":
    from trainer.fast_exit import exit_now

    exit_now(main())  # the picture is replaced atomically by then: the trainer need not wait for matplotlib's teardown
