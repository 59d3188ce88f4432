"""Published rung scores (trainer/rung_scores.py) on plain files and substituted readers: the file a trial writes once
at a rung, what a sibling makes of it (any unreadable or malformed file is "not reached yet"), what a judging trial
keeps, and a sweep's standing at a rung. The hook that uses them is tested in tests/sweeps/test_rung_scores.py."""

from __future__ import annotations

import errno
import json
import math
from pathlib import Path

import pytest

from trainer.kernel.spec.early_stop import TrialEarlyStop
from trainer.rung_scores import (
    NotReached,
    RungScores,
    SweepRungs,
    publish,
    read_published,
    rung_file,
)


def test_a_score_is_published_in_the_trials_rungs_folder_named_by_the_rung(tmp_path: Path) -> None:
    assert rung_file(tmp_path, 3000) == tmp_path / "rungs" / "3000.json"
    publish(tmp_path, 3000, 12.5)
    assert (tmp_path / "rungs" / "3000.json").read_text() == '{"rung": 3000, "score": 12.5}\n'
    assert read_published(tmp_path, 3000) == 12.5


@pytest.mark.parametrize("score", [None, math.nan, math.inf, -math.inf])
def test_a_rung_reached_without_a_finite_score_is_published_as_null(tmp_path: Path, score: float | None) -> None:
    publish(tmp_path, 100, score)
    assert json.loads(rung_file(tmp_path, 100).read_text()) == {"rung": 100, "score": None}
    assert read_published(tmp_path, 100) is None


def test_a_published_score_is_never_written_again(tmp_path: Path) -> None:
    publish(tmp_path, 100, 1.0)
    before = rung_file(tmp_path, 100).stat().st_ino
    publish(tmp_path, 100, 2.0)  # a resumed run passing the rung again
    assert read_published(tmp_path, 100) == 1.0
    assert rung_file(tmp_path, 100).stat().st_ino == before  # not even replaced by an equal file
    publish(tmp_path, 300, 2.0)  # another rung is another file
    assert read_published(tmp_path, 300) == 2.0


def failing(code: int):  # type: ignore[no-untyped-def]
    def read(path: Path) -> str:
        raise OSError(code, f"{path}: {errno.errorcode[code]}")

    return read


@pytest.mark.parametrize("code", [errno.ENOENT, errno.ESTALE, errno.EIO])
def test_a_file_that_cannot_be_read_is_not_reached(tmp_path: Path, code: int) -> None:
    publish(tmp_path, 100, 1.0)
    with pytest.raises(NotReached, match=errno.errorcode[code]):
        read_published(tmp_path, 100, failing(code))
    with pytest.raises(NotReached):
        read_published(tmp_path, 200)  # none published there


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"rung": 100, "sco', "Unterminated string"),  # half visible
        ("[100, 1.0]", "not a score at rung 100"),
        ('{"score": 1.0}', "not a score at rung 100"),
        ('{"rung": 300, "score": 1.0}', "not a score at rung 100"),
        ('{"rung": 100, "score": "1.0"}', "score is not a number"),
        ('{"rung": 100, "score": true}', "score is not a number"),
        ('{"rung": 100, "score": [1.0]}', "score is not a number"),
    ],
)
def test_a_file_that_is_not_a_score_at_the_rung_is_not_reached(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(NotReached, match=says) as raised:
        read_published(tmp_path, 100, lambda path: text)
    if "not a" in says:
        assert str(raised.value).startswith(f"{rung_file(tmp_path, 100)}: ")


def test_a_score_written_as_an_integer_or_missing_reads_as_a_float_or_none(tmp_path: Path) -> None:
    whole = read_published(tmp_path, 100, lambda path: '{"rung": 100, "score": 7}')
    assert whole == 7.0 and isinstance(whole, float)
    assert read_published(tmp_path, 100, lambda path: '{"rung": 100}') is None


class Files:
    """A reader over made-up file contents (path -> text); a path not there raises ENOENT, one in ``stale`` ESTALE;
    counts what it opened."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.stale: set[Path] = set()
        self.opened: list[Path] = []

    def __call__(self, path: Path) -> str:
        self.opened.append(path)
        if path in self.stale:
            raise OSError(errno.ESTALE, "Stale file handle")
        if path not in self.texts:
            raise OSError(errno.ENOENT, "No such file")
        return self.texts[path]

    def score(self, folder: Path, rung: int, score: float | None) -> None:
        self.texts[rung_file(folder, rung)] = json.dumps({"rung": rung, "score": score})

    def status(self, folder: Path, status: str) -> None:
        self.texts[folder / "result.json"] = json.dumps({"status": status})


def test_a_judging_trial_reads_each_published_score_once(tmp_path: Path) -> None:
    folders = [tmp_path / f"s-{k}" for k in range(3)]
    files = Files({})
    files.score(folders[1], 100, 4.0)
    files.score(folders[2], 100, None)
    board = RungScores(folders, files)
    assert board.score(1, 100) == 4.0 and board.score(1, 100) == 4.0 and board.reached(1, 100)
    assert board.reached(2, 100) and board.score(2, 100) is None  # reached without a score
    assert files.opened == [rung_file(folders[1], 100), rung_file(folders[2], 100)] and board.reads == 2
    files.score(folders[1], 100, 99.0)  # (never happens: a published file is not rewritten) the first read stands
    assert board.score(1, 100) == 4.0 and board.reads == 2


def test_a_score_not_readable_yet_is_read_again_at_the_next_judgement(tmp_path: Path) -> None:
    folders = [tmp_path / "s-0", tmp_path / "s-1"]
    files = Files({})
    board = RungScores(folders, files)
    assert not board.reached(1, 100) and board.score(1, 100) is None and board.reads == 2
    files.score(folders[1], 100, 3.0)
    files.stale.add(rung_file(folders[1], 100))
    assert not board.reached(1, 100) and board.reads == 3
    files.stale.clear()
    assert board.reached(1, 100) and board.score(1, 100) == 3.0 and board.reads == 4


def test_a_score_known_without_reading_is_never_read(tmp_path: Path) -> None:
    files = Files({})
    board = RungScores([tmp_path / "s-0", tmp_path / "s-1"], files)
    board.know(0, 100, 8.0)
    board.know(0, 300, None)
    assert board.score(0, 100) == 8.0 and board.reached(0, 300) and board.score(0, 300) is None
    assert not board.reached(0, 900)
    assert files.opened == [rung_file(tmp_path / "s-0", 900)] and board.reads == 1


def sweep(tmp_path: Path, trials: int, seeds: int) -> tuple[SweepRungs, Files, list[Path]]:
    settings = TrialEarlyStop(sweep="s", trials=trials, seeds=seeds, reduction=2, rungs=[100, 300])
    folders = [tmp_path / f"s-{k}" for k in range(trials)]
    files = Files({})
    return SweepRungs(settings, folders, files), files, folders


def test_a_combination_scores_the_iqm_of_the_seeds_that_reached_the_rung(tmp_path: Path) -> None:
    rungs, files, folders = sweep(tmp_path, trials=8, seeds=4)  # combinations 0 (s-0..s-3) and 1 (s-4..s-7)
    assert rungs.scores(100) == {}
    for trial, score in enumerate([1.0, 2.0, 3.0, 100.0]):
        files.score(folders[trial], 100, score)
    files.score(folders[4], 100, 7.0)
    files.score(folders[5], 100, None)  # reached without a score: not counted
    assert rungs.scores(100) == {0: 2.5, 1: 7.0}
    assert rungs.scores(300) == {}


def test_a_last_combination_with_fewer_seeds_counts_only_its_own_trials(tmp_path: Path) -> None:
    rungs, files, folders = sweep(tmp_path, trials=5, seeds=2)  # s-0 s-1 | s-2 s-3 | s-4
    for trial, score in enumerate([1.0, 3.0, 10.0, 20.0, 5.0]):
        files.score(folders[trial], 100, score)
    assert rungs.scores(100) == {0: 2.0, 1: 15.0, 2: 5.0}


def test_a_rung_can_still_be_decided_by_combinations_with_a_trial_not_ended(tmp_path: Path) -> None:
    rungs, files, folders = sweep(tmp_path, trials=6, seeds=2)  # s-0 s-1 | s-2 s-3 | s-4 s-5
    files.score(folders[0], 100, 1.0)
    assert rungs.could_still_decide(100) == 2  # nothing ended: combinations 1 and 2 may get there
    for trial in (2, 3):
        files.status(folders[trial], "pruned")
    assert rungs.could_still_decide(100) == 1
    files.status(folders[4], "failed")
    assert rungs.could_still_decide(100) == 1  # s-5 has not ended
    files.status(folders[5], "completed")
    assert rungs.could_still_decide(100) == 0
    files.score(folders[2], 100, 4.0)  # a combination that reached the rung is not waited for, ended or not
    assert rungs.could_still_decide(100) == 0 and rungs.scores(100) == {0: 1.0, 1: 4.0}


@pytest.mark.parametrize(
    "text",
    ['{"status": "running"}', '{"status": "paused"}', "{}", '{"status": 3}', '["completed"]', "{not json", None],
)
def test_a_trial_whose_result_is_not_an_ended_one_may_still_reach_the_rung(tmp_path: Path, text: str | None) -> None:
    rungs, files, folders = sweep(tmp_path, trials=2, seeds=1)
    files.score(folders[0], 100, 1.0)
    if text is not None:
        files.texts[folders[1] / "result.json"] = text
    assert rungs.could_still_decide(100) == 1
    files.stale.add(folders[1] / "result.json")  # unreadable right now: not ended either
    assert rungs.could_still_decide(100) == 1
