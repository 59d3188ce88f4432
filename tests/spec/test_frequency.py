from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tfcli.spec.frequency import Frequency


@pytest.mark.parametrize(
    ("raw", "value", "unit"),
    [("600s", 600, "s"), ("100e", 100, "e"), ("5000t", 5000, "t"), (600, 600, "s"), ("42", 42, "s"), (" 7 t ", 7, "t")],
)
def test_frequency_forms(raw: object, value: int, unit: str) -> None:
    parsed = Frequency.parse(raw)
    assert (parsed.value, parsed.unit) == (value, unit)


@pytest.mark.parametrize("raw", ["10x", "s", "", "-5s", "0e", "1.5s", 1.5, True, None, [], "10 seconds"])
def test_bad_frequencies_are_rejected_with_the_forms_named(raw: object) -> None:
    with pytest.raises(ValueError, match=r"frequency|greater than 0"):
        Frequency.parse(raw)


@given(st.integers(min_value=1, max_value=10**9), st.sampled_from("set"))
def test_string_form_round_trips(value: int, unit: str) -> None:
    frequency = Frequency.parse(f"{value}{unit}")
    assert Frequency.parse(str(frequency)) == frequency
