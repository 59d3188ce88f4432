"""A worker's log cut back into one trial's sections (trainer/trial_sections.py): what `logs -e <trial>` shows of an
early-stopped GKE sweep."""

from __future__ import annotations

from trainer.trial_sections import TrialSections, end_line, start_line

PREFIX = "2026-11-26 23:50:00,000 INFO trainer.sweep_worker: "  # how the worker's logging writes a marker


def worker_log() -> str:
    """One worker that trained s-1, then s-10 (a name s-1 starts), then s-1 again once its rung was decided."""
    return "".join(
        [
            "worker starting\n",
            PREFIX + start_line("s-1") + "\n",
            "s-1 episode 1\n",
            "s-1 waiting at rung 150\n",
            PREFIX + end_line("s-1", 143) + "\n",
            PREFIX + start_line("s-10") + "\n",
            "s-10 episode 1\n",
            PREFIX + end_line("s-10", 0) + "\n",
            "idle\n",
            PREFIX + start_line("s-1") + "\n",
            "s-1 resuming from checkpoint 1\n",
            PREFIX + end_line("s-1", 0) + "\n",
            "every trial of the sweep has ended\n",
        ]
    )


def test_only_the_trials_own_sections_are_kept_markers_included() -> None:
    sections = TrialSections("s-1")
    kept = sections.feed(worker_log()) + sections.finish()
    assert kept == [
        PREFIX + start_line("s-1") + "\n",
        "s-1 episode 1\n",
        "s-1 waiting at rung 150\n",
        PREFIX + end_line("s-1", 143) + "\n",
        PREFIX + start_line("s-1") + "\n",
        "s-1 resuming from checkpoint 1\n",
        PREFIX + end_line("s-1", 0) + "\n",
    ]
    assert not sections.inside


def test_a_name_that_begins_another_trials_name_is_not_that_trial() -> None:
    kept = TrialSections("s-10").feed(worker_log())
    assert kept == [PREFIX + start_line("s-10") + "\n", "s-10 episode 1\n", PREFIX + end_line("s-10", 0) + "\n"]


def test_pieces_cut_anywhere_give_the_same_lines() -> None:
    text = worker_log()
    whole = TrialSections("s-1").feed(text)
    for size in (1, 3, 7, 64):
        sections = TrialSections("s-1")
        pieces = [sections.feed(text[start : start + size]) for start in range(0, len(text), size)]
        assert [line for piece in pieces for line in piece] + sections.finish() == whole


def test_a_section_still_open_says_so_and_its_last_line_without_newline_is_kept() -> None:
    sections = TrialSections("s-1")
    kept = sections.feed(PREFIX + start_line("s-1") + "\nepisode 7\nepisode")
    assert kept == [PREFIX + start_line("s-1") + "\n", "episode 7\n"]
    assert sections.inside  # the worker trains it now: `logs -f` follows this pod
    assert sections.finish() == ["episode"]
    assert sections.finish() == []  # said once
    other = TrialSections("s-2")
    assert other.feed("episode 8") == [] and other.finish() == []
    assert TrialSections("s-2").inside is False  # before any marker, no line is the trial's


def test_a_worker_killed_mid_trial_leaves_a_section_the_next_start_line_closes() -> None:
    text = PREFIX + start_line("s-1") + "\nepisode 1\n" + PREFIX + start_line("s-2") + "\ns-2 episode 1\n"
    sections = TrialSections("s-1")
    assert sections.feed(text) == [PREFIX + start_line("s-1") + "\n", "episode 1\n"]
    assert not sections.inside


def test_a_marker_must_end_its_line() -> None:
    """A trainer line that merely quotes a marker (an error message, say) does not open or close a section."""
    quoted = f"could not parse '{start_line('s-1')}' here\n"
    assert TrialSections("s-1").feed(quoted) == []
    sections = TrialSections("s-1")
    assert sections.feed(start_line("s-1") + "\r\n" + quoted) == [start_line("s-1") + "\r\n", quoted]
