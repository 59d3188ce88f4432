"""One early-stopping judgement over 100 siblings (issue 27): the old way, every sibling's whole ``progress.jsonl``
read and scored at the rung, against the new, every sibling's published score (``trainer/rung_scores.py``) read
once and kept.

For each size (episodes per sibling) it writes a sweep of ``--trials`` trials (``--seeds`` per combination) into a
temporary folder on this machine's disk, each with that many CartPole-sized episodes and its score published at the
first rung, as a trial of the sweep leaves them, then times, best of ``--repeat``:

- **old**: what the hook did before, for every trial: read its ``progress.jsonl`` and score it at the rung
  (``trainer.hooks.early_stop.trial_score``), then the combinations' IQMs and the verdict;
- **new, first**: a fresh hook's first judgement (every sibling's small file read once);
- **new, again**: the same hook's next judgement (scores known: nothing is read).

Goal: a judgement under 50 ms at 100 siblings. The files are in the page cache after the first repeat in both
ways, so this measures parsing and scoring, not the disk; on the GCS FUSE mount each read is a round trip more,
which the new way makes once per sibling and rung instead of once per sibling and judgement.

Run: ``uv run python -m bench.rung_judgement [--trials 100] [--seeds 2] [--episodes 2000,10000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from trainer.hooks.early_stop import early_stopping, trial_score
from trainer.kernel.spec.early_stop import TrialEarlyStop
from trainer.kernel.state import Episode, RunState
from trainer.rung_scores import publish
from trainer.rungs import combination_score, judge
from trainer.signals import StopRequest

LENGTH = 20  # timesteps per episode


def write_sweep(root: Path, settings: TrialEarlyStop, episodes: int) -> list[Path]:
    """Every trial's results folder with ``episodes`` episodes and its score published at the first rung."""
    folders = []
    rung = settings.rungs[0]
    for index in range(settings.trials):
        folder = root / settings.trial_name(index) / "results"
        folder.mkdir(parents=True)
        lines = []
        for number in range(1, episodes + 1):
            episode = Episode(0, number, number * LENGTH, LENGTH, 0.0, float(index % 7 + number % 5))
            lines.append(json.dumps(episode.as_json()) + "\n")
        (folder / "progress.jsonl").write_text("".join(lines))
        publish(folder, rung, trial_score(folder, rung, reached=True))
        folders.append(folder)
    return folders


def old_judgement(settings: TrialEarlyStop, folders: list[Path], rung: int) -> object:
    """The judgement as the hook made it before: every sibling's log read and scored."""
    scores = {}
    for number, start in enumerate(range(0, settings.trials, settings.seeds)):
        seeds = [trial_score(folder, rung) for folder in folders[start : start + settings.seeds]]
        score = combination_score([value for value in seeds if value is not None])
        if score is not None:
            scores[number] = score
    return judge(0, scores, settings.reduction)


def best_of(repeat: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return min(times) * 1000


def measure(settings: TrialEarlyStop, episodes: int, repeat: int) -> tuple[float, float, float]:
    rung = settings.rungs[0]
    with tempfile.TemporaryDirectory(prefix="bench-rungs-") as folder:
        folders = write_sweep(Path(folder), settings, episodes)
        old = best_of(repeat, lambda: old_judgement(settings, folders, rung))
        own = settings.trial_name(0)

        def fresh() -> object:
            hook = early_stopping(settings, own, folders[0], StopRequest(), RunState(timesteps=rung))
            assert hook is not None
            return hook

        hooks = []

        def first() -> None:
            hook = fresh()
            hook.scores(rung)  # type: ignore[attr-defined]
            hooks.append(hook)

        new_first = best_of(repeat, first)
        new_again = best_of(repeat, lambda: hooks[-1].scores(rung))  # type: ignore[attr-defined]
    return old, new_first, new_again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--episodes", default="2000,10000", help="episodes per sibling, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    settings = TrialEarlyStop(
        sweep="bench",
        trials=arguments.trials,
        seeds=arguments.seeds,
        reduction=3,
        rungs=[1000 * LENGTH, 3000 * LENGTH],
    )
    print(f"one judgement over {arguments.trials} trials ({arguments.seeds} seeds per combination), best of "
          f"{arguments.repeat}")  # fmt: skip
    print()
    print("| episodes per sibling | old: every log read | new: first judgement | new: again (known) |")
    print("| --- | --- | --- | --- |")
    for episodes in (int(value) for value in arguments.episodes.split(",")):
        old, first, again = measure(settings, episodes, arguments.repeat)
        print(f"| {episodes:,} | {old:,.1f} ms | {first:,.1f} ms | {again:,.2f} ms |")


if __name__ == "__main__":
    main()
