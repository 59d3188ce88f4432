"""The claims of a GKE sweep's workers (trainer/sweep_claims.py) on the GCS emulator made to check request
preconditions as GCS does (tests/gcs_preconditions.py): a conflicting write loses with 412, two workers racing for
a trial end with exactly one owner, and a dead worker's lease is taken over."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from gcs_preconditions import failed

from trainer.sweep_claims import Claims

BUCKET = "claims-test"


@pytest.fixture
def bucket(gcs: Any) -> Any:
    return gcs.create_bucket(BUCKET)


def test_the_emulator_refuses_writes_whose_preconditions_do_not_hold(bucket: Any) -> None:
    from google.api_core.exceptions import PreconditionFailed

    blob = bucket.blob("a.json")
    blob.upload_from_string("one", if_generation_match=0)  # absent: created
    first = int(blob.generation)
    with pytest.raises(PreconditionFailed):
        bucket.blob("a.json").upload_from_string("two", if_generation_match=0)  # present: refused
    with pytest.raises(PreconditionFailed):
        bucket.blob("a.json").upload_from_string("two", if_generation_match=first + 1)
    with pytest.raises(PreconditionFailed):
        bucket.blob("a.json").upload_from_string("two", if_generation_not_match=first)
    with pytest.raises(PreconditionFailed):
        metageneration = int(bucket.get_blob("a.json").metageneration)
        bucket.blob("a.json").upload_from_string("two", if_metageneration_match=metageneration + 1)
    with pytest.raises(PreconditionFailed):
        bucket.blob("a.json").delete(if_generation_match=first + 1)
    with pytest.raises(PreconditionFailed):
        bucket.copy_blob(bucket.blob("a.json"), bucket, "a.json", if_generation_match=0)
    assert bucket.blob("a.json").download_as_text() == "one"  # nothing refused changed it
    blob = bucket.blob("a.json")
    blob.upload_from_string("two", if_generation_match=first)  # at the generation read: replaced
    second = int(blob.generation)
    assert second != first and bucket.blob("a.json").download_as_text() == "two"
    bucket.blob("a.json").delete(if_generation_match=second)
    assert bucket.get_blob("a.json") is None


@pytest.mark.parametrize(
    ("query", "live", "broken"),
    [
        ({"ifGenerationMatch": ["0"]}, None, None),
        ({"ifGenerationMatch": ["0"]}, (5, 1), "ifGenerationMatch"),
        ({"ifGenerationMatch": ["5"]}, (5, 1), None),
        ({"ifGenerationNotMatch": ["0"]}, None, "ifGenerationNotMatch"),
        ({"ifGenerationNotMatch": ["5"]}, (6, 1), None),
        ({"ifMetagenerationMatch": ["1"]}, None, "ifMetagenerationMatch"),
        ({"ifMetagenerationMatch": ["2"]}, (5, 2), None),
        ({"ifMetagenerationNotMatch": ["2"]}, (5, 2), "ifMetagenerationNotMatch"),
        ({"ifMetagenerationNotMatch": ["1"]}, (5, 2), None),
    ],
)
def test_each_precondition_as_the_reference_defines_it(
    query: dict[str, list[str]], live: tuple[int, int] | None, broken: str | None
) -> None:
    assert failed(query, live) == broken


def test_of_two_workers_racing_for_each_trial_exactly_one_wins(bucket: Any) -> None:
    trials = [f"race-{k}" for k in range(12)]
    won: dict[str, list[str]] = {trial: [] for trial in trials}
    start = threading.Barrier(2)

    def worker(name: str) -> None:
        claims = Claims(bucket, "race", name)
        start.wait()
        for trial in trials:
            if claims.take(trial) is not None:
                won[trial].append(name)

    threads = [threading.Thread(target=worker, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(winners) == 1 for winners in won.values()), won
    for trial, (winner,) in won.items():
        assert Claims(bucket, "race", "reader").read(trial).worker == winner


def test_a_stale_lease_is_taken_over_and_its_old_holder_loses_it(bucket: Any) -> None:
    now = [1000.0]
    a = Claims(bucket, "lease", "a", lease=90, clock=lambda: now[0])
    b = Claims(bucket, "lease", "b", lease=90, clock=lambda: now[0])
    held = a.take("t")
    assert held is not None and b.take("t") is None  # a live lease
    now[0] += 60
    held = a.renew("t", held)
    assert held is not None
    now[0] += 89
    assert b.take("t") is None  # renewed: still live
    now[0] += 2  # a stopped renewing (its pod was killed)
    taken = b.take("t")
    assert taken is not None and taken.worker == "b"
    assert a.renew("t", held) is None and a.release("t", held) is None  # its generation is gone
    ended = b.end("t", taken, "completed")
    assert ended is not None
    now[0] += 1000
    assert a.take("t") is None and b.take("t") is None  # ended for good


def test_a_released_claim_counts_crashes(bucket: Any) -> None:
    a = Claims(bucket, "crash", "a")
    held = a.take("t")
    assert held is not None
    assert a.release("t", held, crashed=True) is not None
    again = a.take("t")
    assert again is not None and again.attempts == 1


def test_a_claim_written_on_a_stale_reading_loses(bucket: Any) -> None:
    """Both workers read "absent" before either writes (the window a race opens): the later create is refused."""
    a, b = Claims(bucket, "stale", "a"), Claims(bucket, "stale", "b")
    seen_by_a = a.read("t")
    assert seen_by_a.generation == 0 and b.take("t") is not None
    a.read = lambda trial: seen_by_a  # type: ignore[method-assign]
    assert a.take("t") is None
    assert b.read("t").worker == "b"
