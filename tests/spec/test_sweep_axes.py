"""trainer/kernel/spec/sweep_axes.py on its own: ``--set`` values, dotted keys set and read in plain spec data, and the
short form of a combination. Errors are compared whole: they name the key and the fix."""

from __future__ import annotations

from typing import Any

import pytest

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.sweep_axes import (
    OWNED_KEYS,
    check_key,
    describe,
    get_dotted,
    numbers_as_numbers,
    parse_set,
    scalar,
    set_dotted,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1e-3", 0.001),
        ("1E3", 1000.0),
        ("-2.5e+2", -250.0),
        ("+.5", 0.5),
        ("3.", 3.0),
        ("16", 16),
        ("-7", -7),
        ("+7", 7),
        (" 8 ", 8),
        ("true", True),
        ("null", None),
        ("adam", "adam"),
        ("[1, 2]", [1, 2]),
        ("a: [", "a: ["),  # not YAML: the text itself
        ("1e", "1e"),
        ("1.2.3", "1.2.3"),
    ],
)
def test_scalar(text: str, value: Any) -> None:
    parsed = scalar(text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("nan", "nan"),
        ("NaN", "nan"),
        (".nan", "nan"),
        ("inf", "inf"),
        ("+Infinity", "inf"),
        (".inf", "inf"),
        ("-.inf", "-inf"),
        (" -INF ", "-inf"),
    ],
)
def test_scalar_reads_non_finite_numbers_as_floats_for_the_spec_to_refuse(text: str, value: str) -> None:
    parsed = scalar(text)
    assert isinstance(parsed, float) and str(parsed) == value


def test_scalar_refuses_yaml_nested_too_deep_naming_the_option() -> None:
    with pytest.raises(InvalidInput, match=r"^--set: nested more than \d+ levels deep"):
        scalar("[" * 500 + "]" * 500)


def test_numbers_as_numbers_only_touches_text_that_reads_as_a_number() -> None:
    assert numbers_as_numbers("1e-3") == 0.001 and numbers_as_numbers(" 5 ") == 5
    assert numbers_as_numbers("adam") == "adam" and numbers_as_numbers("true") == "true"
    assert numbers_as_numbers(3) == 3 and numbers_as_numbers(None) is None


def test_parse_set() -> None:
    assert parse_set(" agent.learning_rate =1e-3, 3e-4") == ("agent.learning_rate", [0.001, 0.0003])
    assert parse_set("a=x=y") == ("a", ["x=y"])
    message = "--set {}: expected DOTTED.KEY=VALUE1,VALUE2,... (e.g. agent.learning_rate=1e-3,3e-4)"
    for option in ("agent.learning_rate", "=1,2", " =1", "a=", "a= "):
        with pytest.raises(InvalidInput) as raised:
            parse_set(option)
        assert str(raised.value) == message.format(option)


def test_check_key() -> None:
    check_key("agent.learning_rate", "sweep.yaml")
    check_key("network.0.size", "sweep.yaml")
    check_key("agent.seed", "sweep.yaml")  # only a top-level owned key is the sweep's
    for key in ("agent..x", ".a", "a."):
        with pytest.raises(InvalidInput) as raised:
            check_key(key, "--set")
        assert str(raised.value) == f"--set: '{key}' is not a dotted key (e.g. agent.learning_rate)"
    for key in OWNED_KEYS:
        with pytest.raises(InvalidInput) as raised:
            check_key(f"{key}.x", "sweep.yaml")
        assert str(raised.value) == f"sweep.yaml: '{key}.x' cannot be swept: {OWNED_KEYS[key]}"
    assert OWNED_KEYS == {"name": "each trial is named <sweep>-<k>", "seed": "seeds come from --seeds (1..K)"}


def test_set_dotted_reaches_into_mappings_and_lists() -> None:
    data = {"agent": {"agent": "ppo"}, "network": [{"size": 64}, {"size": 32}], "layers": [1, 2, 3]}
    assert set_dotted(data, "agent.learning_rate", 0.1)["agent"] == {"agent": "ppo", "learning_rate": 0.1}
    assert set_dotted(data, "agent.optimizer.type", "adam")["agent"]["optimizer"] == {"type": "adam"}
    assert set_dotted(data, "network.1.size", 8)["network"] == [{"size": 64}, {"size": 8}]
    assert set_dotted(data, "network.0.size", 8)["network"] == [{"size": 8}, {"size": 32}]
    # A list element as the last key: the element itself replaced.
    assert set_dotted(data, "layers.2", 30)["layers"] == [1, 2, 30]
    assert set_dotted(data, "layers.0", 10)["layers"] == [10, 2, 3]
    assert set_dotted(data, "top", 1)["top"] == 1
    assert data == {"agent": {"agent": "ppo"}, "network": [{"size": 64}, {"size": 32}], "layers": [1, 2, 3]}


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("layers.3", "layers.3: the list at layers has 3 items"),  # one past the end
        ("layers.x", "layers.x: the list at layers has 3 items"),
        ("layers.-1", "layers.-1: the list at layers has 3 items"),
        ("network.2.size", "network.2: the list at network has 2 items"),
        ("agent.sizes.2", "agent.sizes.2: the list at agent.sizes has 2 items"),
        ("agent.agent.x", "agent.agent.x: agent.agent is 'ppo', not a mapping or a list"),
        ("layers.0.x", "layers.0.x: layers.0 is 1, not a mapping or a list"),
    ],
)
def test_set_dotted_names_the_key_it_cannot_reach(key: str, message: str) -> None:
    data = {"agent": {"agent": "ppo", "sizes": [1, 2]}, "network": [{"size": 64}, {"size": 32}], "layers": [1, 2, 3]}
    with pytest.raises(InvalidInput) as raised:
        set_dotted(data, key, 0)
    assert str(raised.value) == message


def test_get_dotted() -> None:
    data = {"agent": {"agent": "ppo", "rate": 0}, "layers": [1, {"size": 8}, 3]}
    assert get_dotted(data, "agent.agent") == "ppo" and get_dotted(data, "agent.rate") == 0
    assert get_dotted(data, "layers.1.size") == 8 and get_dotted(data, "layers.2") == 3
    assert get_dotted(data, "layers.0") == 1 and get_dotted(data, "agent") == {"agent": "ppo", "rate": 0}
    for key in ("agent.missing", "layers.3", "layers.x", "agent.agent.x", "nothing"):
        with pytest.raises(KeyError) as raised:
            get_dotted(data, key)
        assert raised.value.args == (key,)


def test_describe() -> None:
    assert describe({}) == "base"
    assert describe({"agent.learning_rate": 0.1, "batch_size": 8}) == "learning_rate=0.1 batch_size=8"
    assert describe({"a.rate": 1, "b.rate": 2, "c": 3}) == "a.rate=1 b.rate=2 c=3"
    assert describe({"agent.optimizer.learning_rate": 1, "x.y.z.w": 2}) == "learning_rate=1 w=2"
