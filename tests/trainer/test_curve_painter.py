"""The learning curve's helper process (trainer/curve_painter.py): it imports matplotlib while the trainer starts, so
the trainer itself never imports it, and the picture is the same; where the helper cannot draw, the trainer does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from trainer.curve_painter import CurvePainter
from trainer.kernel.state import Episode

PNG = b"\x89PNG\r\n\x1a\n"


def episode(n: int) -> Episode:
    return Episode(worker=0, episode=n, timesteps=20 * n, length=20, wall_seconds=0.1 * n, episode_return=float(n))


def in_fresh_process(body: str, folder: Path) -> str:
    """Run ``body`` in a fresh interpreter (one that has not imported matplotlib yet); what it printed."""
    script = textwrap.dedent(
        """\
        import sys
        from pathlib import Path
        from trainer.curve_painter import CurvePainter
        from trainer.kernel.state import Episode
        episodes = [Episode(0, n, 20 * n, 20, 0.1 * n, float(n)) for n in range(1, 30)]
        out = Path(sys.argv[1])
        """
    ) + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_helper_draws_and_the_trainer_never_imports_matplotlib(tmp_path: Path) -> None:
    printed = in_fresh_process(
        """\
        painter = CurvePainter()
        assert painter.helper is not None
        painter.paint(episodes, out / "learning_curve.png", title="t")
        print("matplotlib" in sys.modules, painter.helper)
        """,
        tmp_path,
    )
    assert printed.split() == ["False", "None"]
    assert (tmp_path / "learning_curve.png").read_bytes().startswith(PNG)
    assert [path.name for path in tmp_path.iterdir()] == ["learning_curve.png"]  # no temporary left


def test_a_helper_that_died_leaves_the_drawing_to_the_trainer(tmp_path: Path) -> None:
    painter = CurvePainter()
    helper = painter.helper
    if helper is not None:  # none when this process imported matplotlib already (as a warm fork has)
        os.kill(helper, signal.SIGKILL)
    painter.paint([episode(n) for n in range(1, 30)], tmp_path / "curve.png", title="t")
    assert (tmp_path / "curve.png").read_bytes().startswith(PNG)
    assert "matplotlib.figure" in sys.modules


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_helper_ends_with_its_trainer(tmp_path: Path) -> None:
    """Its trainer killed outright (here: ``os._exit`` before the end): the helper's stdin closes, it draws nothing
    and exits."""
    printed = in_fresh_process(
        """\
        import os
        print(CurvePainter().helper, flush=True)
        os._exit(0)
        """,
        tmp_path,
    )
    helper = int(printed)
    deadline = time.monotonic() + 60
    while running(helper) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(helper), "the helper outlived its trainer"
    assert not list(tmp_path.iterdir())


def test_closing_an_unused_helper_ends_it(tmp_path: Path) -> None:
    printed = in_fresh_process(
        """\
        painter = CurvePainter()
        helper = painter.helper
        painter.close()
        print(helper is not None, Path(f"/proc/{helper}").exists())
        """,
        tmp_path,
    )
    assert printed.split() == ["True", "False"]


def test_a_process_the_environment_forked_does_not_hold_the_helper_up(tmp_path: Path) -> None:
    """A process forked after the helper started (an environment's own helper) holds the pipe's write end too: the
    helper still draws at once, not when that process ends (the trainer would wait, then draw it itself), and an
    unused helper still ends when closed."""
    printed = in_fresh_process(
        """\
        import os, signal, time
        import trainer.curve_painter as painting
        painting.DRAW_SECONDS = 30.0  # a helper held up is killed after this, and the trainer imports matplotlib
        painter, unused = CurvePainter(), CurvePainter()
        forked = os.fork()
        if forked == 0:
            time.sleep(120)
            os._exit(0)
        try:
            painter.paint(episodes, out / "learning_curve.png", title="t")
            print("matplotlib" in sys.modules, flush=True)
            helper = unused.helper
            unused.close()
            print(Path(f"/proc/{helper}").exists())
        finally:
            os.kill(forked, signal.SIGKILL)
        """,
        tmp_path,
    )
    assert printed.split() == ["False", "False"]  # drawn by the helper; the unused one ended
    assert (tmp_path / "learning_curve.png").read_bytes().startswith(PNG)
