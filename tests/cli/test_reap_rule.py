"""Which deployed experiments ``reap`` stops: ended runs at once, others only past their ttl since their start; and
which shared clusters it destroys: idle ones past their ttl since their last update."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tfcli.runs.reaping import Reaped, cluster_reap_reason, reap_reason

NOW = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
HOURS_AGO_3 = "2026-11-26T09:00:00+00:00"


@pytest.mark.parametrize(
    ("state", "detail", "ttl", "reason"),
    [
        ("completed", "", None, "completed"),
        ("paused", "max_cost reached ($1.00 of $1.00)", None, "paused at max_cost (max_cost reached ($1.00 of $1.00))"),
        ("paused", "", None, None),  # paused by hand: the user means to resume it
        ("running", "", None, None),  # no ttl: it trains on
        ("running", "", 4 * 3600, None),  # up 3 h of its 4
        ("running", "", 3 * 3600, None),  # exactly its ttl: not past it
        ("running", "", 2 * 3600, "up 3.0 h, past its ttl"),
        ("paused", "", 3600, "up 3.0 h, past its ttl"),
        ("failed", "error: boom", 3600, "up 3.0 h, past its ttl"),
    ],
)
def test_the_reap_rule(state: str, detail: str, ttl: int | None, reason: str | None) -> None:
    assert reap_reason(state, detail, started_at=HOURS_AGO_3, ttl_seconds=ttl, now=NOW) == reason


def test_a_run_with_no_start_time_is_never_past_its_ttl() -> None:
    assert reap_reason("running", "", started_at=None, ttl_seconds=60, now=NOW) is None
    assert reap_reason("running", "", started_at="2026-11-26T11:59:00Z", ttl_seconds=30, now=NOW) is not None


def test_the_hours_up_are_shown_to_a_tenth() -> None:
    long_ago = "2026-10-15T20:00:00+00:00"  # 1,000 hours before NOW
    assert reap_reason("running", "", started_at=long_ago, ttl_seconds=60, now=NOW) == "up 1,000.0 h, past its ttl"


def test_what_reap_says_of_each_run() -> None:
    assert Reaped("si1", "completed", stopped="Stopped si1.").summary() == "si1: completed; Stopped si1."
    failed = Reaped("si2", "could not be reaped", error="no credentials")
    assert failed.summary() == "si2: could not be reaped; NOT stopped: no credentials"


@pytest.mark.parametrize(
    ("users", "ended", "ttl", "reason"),
    [
        ([], HOURS_AGO_3, None, None),  # no ttl: kept
        ([], HOURS_AGO_3, 4 * 3600, None),  # up 3 h of its 4
        ([], HOURS_AGO_3, 3 * 3600, None),  # exactly its ttl: not past it
        ([], HOURS_AGO_3, 2 * 3600, "idle shared cluster, up 3.0 h since its last update, past its ttl"),
        (["si1"], HOURS_AGO_3, 3600, None),  # an experiment is deployed on it: never destroyed
        ([], None, 3600, None),  # no finished update to count from (one under way): left alone
    ],
)
def test_the_cluster_reap_rule(users: list[str], ended: str | None, ttl: int | None, reason: str | None) -> None:
    assert cluster_reap_reason(users, last_update_ended=ended, ttl_seconds=ttl, now=NOW) == reason
