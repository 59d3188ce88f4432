"""``ttl``: a time to live in minutes, hours or days; written back as the user wrote it; bad values exit 2 naming the
file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cli_kit import invoke
from trainer.kernel.spec.library import BUNDLED_CONFIGS
from trainer.kernel.spec.ttl import Ttl


@pytest.mark.parametrize(("text", "seconds"), [("30m", 1800), ("8h", 28800), (" 2d ", 172800)])
def test_a_ttl_reads_minutes_hours_and_days(text: str, seconds: int) -> None:
    ttl = Ttl.parse(text)
    assert ttl.seconds == seconds and str(ttl) == text.strip() and Ttl.parse(ttl) is ttl


@pytest.mark.parametrize("raw", ["8", "8s", "h", "-1h", "1.5h", 8, None, True])
def test_anything_else_is_refused(raw: object) -> None:
    with pytest.raises(ValueError, match="is not a time to live"):
        Ttl.parse(raw)


def test_a_bad_ttl_exits_2_naming_the_file_and_the_key_and_writes_nothing(project: Path) -> None:
    spec = yaml.safe_load((BUNDLED_CONFIGS / "experiments" / "cartpole-ppo.yaml").read_text())
    (project / "bad.yaml").write_text(yaml.safe_dump({**spec, "ttl": "forever"}))
    code, _, stderr = invoke("experiment", "new", "-f", "bad.yaml", "-n", "bad")
    assert code == 2 and "bad.yaml: ttl: 'forever' is not a time to live" in stderr and "Traceback" not in stderr
    assert not (project / "experiments" / "bad").exists()


def test_the_messages_say_how_to_write_one() -> None:
    with pytest.raises(ValueError) as refused:
        Ttl.parse("8")
    assert str(refused.value) == (
        "'8' is not a time to live: write a whole number followed by m (minutes), h (hours) or d (days), "
        "e.g. '30m', '8h', '2d'"
    )
    with pytest.raises(ValueError) as zero:
        Ttl.parse("0h")
    assert str(zero.value) == "'0h': a time to live must be greater than 0"


def test_a_spec_writes_its_ttl_back_as_written_and_its_schema_is_a_string() -> None:
    from pydantic import BaseModel

    class Holder(BaseModel):
        ttl: Ttl

    held = Holder.model_validate({"ttl": "8h"})
    assert held.ttl == Ttl(8, "h") and held.model_dump(mode="json") == {"ttl": "8h"}
    assert Holder.model_json_schema()["properties"]["ttl"]["type"] == "string"
