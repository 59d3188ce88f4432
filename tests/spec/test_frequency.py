from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from trainer.kernel.spec.frequency import Frequency, SummaryFrequency


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


def test_non_numbers_and_booleans_name_the_forms_expected() -> None:
    for raw in (1.5, True, None, [], {"value": 1}):
        with pytest.raises(ValueError) as raised:
            Frequency.parse(raw)
        assert str(raised.value) == f"expected a frequency like '600s', '100e' or '5000t', got {raw!r}"
    with pytest.raises(ValueError) as raised:
        Frequency.parse("10x")
    assert str(raised.value) == (
        "'10x' is not a frequency: write a whole number followed by s (seconds), e (episodes) or "
        "t (timesteps), e.g. '600s', '100e', '5000t'"
    )
    with pytest.raises(ValueError, match=r"^'0t': a frequency must be greater than 0$"):
        Frequency.parse("0t")
    assert Frequency.parse("1t") == Frequency(1, "t")


def test_a_frequency_passes_through_and_reads_as_written() -> None:
    frequency = Frequency(5000, "t")
    assert Frequency.parse(frequency) is frequency
    assert str(frequency) == "5000t"
    assert frequency.described == "every 5000 timesteps"
    assert Frequency(100, "e").described == "every 100 episodes" and Frequency(1, "s").described == "every 1 seconds"


def settings() -> type[BaseModel]:
    """A model holding frequencies, made in the test that uses it (pydantic builds its schema then)."""

    class Settings(BaseModel):
        saver: Frequency
        summary: SummaryFrequency | None = None

    return Settings


def test_in_a_model_it_validates_from_text_and_serialises_back_to_text() -> None:
    Settings = settings()
    made = Settings.model_validate({"saver": "100e", "summary": 600})
    assert (made.saver, made.summary) == (Frequency(100, "e"), Frequency(600, "s"))
    assert made.model_dump() == {"saver": "100e", "summary": "600s"}
    assert made.model_dump_json() == '{"saver":"100e","summary":"600s"}'
    assert Settings.model_json_schema(mode="validation")["properties"]["saver"] == {"title": "Saver", "type": "string"}
    with pytest.raises(ValidationError, match="is not a frequency"):
        Settings.model_validate({"saver": "often"})


def test_summaries_refuse_episodes_and_say_why() -> None:
    Settings = settings()
    assert Settings.model_validate({"saver": "1e", "summary": "5000t"}).summary == Frequency(5000, "t")
    with pytest.raises(ValidationError) as raised:
        Settings.model_validate({"saver": "1e", "summary": "100e"})
    assert (
        "'100e': summaries are written in seconds or timesteps, not episodes (episodes end at different "
        "times on different workers); use e.g. '120s' or '5000t'"
    ) in str(raised.value)
