"""The trainer's own per-step and per-episode costs (hooks, progress), beside what writing the per-episode summaries
through TensorFlow's eager ``tf.summary.scalar`` cost before (issue 30, item 3).

Each hook is driven in this process with TensorFlow imported, as the loop drives it: ``on_episode`` for
``--episodes`` made-up episodes and ``after_step`` for 10,000 steps. CPU time per call (``time.process_time``),
which a shared machine's load does not inflate as it does wall time. Run:
``uv run python -m bench.hooks [--episodes 500]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

STEPS = 10_000


def cpu_per_call(call: Callable[[int], None], count: int) -> float:
    """Microseconds of CPU per call, after one call to warm up."""
    call(0)
    began = time.process_time()
    for n in range(1, count + 1):
        call(n)
    return (time.process_time() - began) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=500)
    args = parser.parse_args()
    from trainer.compat import quiet_tensorflow_import

    quiet_tensorflow_import()
    import tensorflow as tf

    from trainer.hooks.progress_log import ProgressLog
    from trainer.hooks.summaries import TensorBoardSummaries
    from trainer.kernel.spec import Frequency
    from trainer.kernel.state import Episode, RunState

    folder = Path(tempfile.mkdtemp(prefix="bench-hooks-"))
    state = RunState()

    def episode(n: int) -> Episode:
        return Episode(0, n, 20 * n, 20, 0.1 * n, 20.0 + n)

    summaries = TensorBoardSummaries(folder / "summaries", Frequency.parse("1000t"), state)
    progress = ProgressLog(folder / "progress.jsonl", 60.0)
    eager: Any = tf.summary.create_file_writer(str(folder / "eager"))

    def eager_episode(n: int) -> None:
        with eager.as_default(step=20 * n):
            tf.summary.scalar("episode/return", 20.0 + n)
            tf.summary.scalar("episode/length", 20)

    rows = [
        ("episode summaries, tf.summary.scalar (before)", cpu_per_call(eager_episode, args.episodes), "episode"),
        (
            "episode summaries, event writer (now)",
            cpu_per_call(lambda n: summaries.on_episode(episode(n), state), args.episodes),
            "episode",
        ),
        (
            "progress.jsonl line",
            cpu_per_call(lambda n: progress.on_episode(episode(n), state), args.episodes),
            "episode",
        ),
        ("summaries' after_step", cpu_per_call(lambda n: summaries.after_step(state), STEPS), "step"),
    ]
    print(f"{'cost':<48} {'CPU us/call':>12}  per")
    for name, micros, per in rows:
        print(f"{name:<48} {micros:>12.1f}  {per}")


if __name__ == "__main__":
    main()
