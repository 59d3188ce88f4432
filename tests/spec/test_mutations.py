"""Property: any mutation of a valid spec gives a valid model or a spec error naming file and field — nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import ConfigLibrary, resolve_cluster, resolve_experiment, to_data
from trainer.kernel.spec.library import BUNDLED_CONFIGS

LIBRARY = ConfigLibrary((BUNDLED_CONFIGS,))
EXPERIMENTS = [yaml.safe_load(p.read_text()) for p in sorted((BUNDLED_CONFIGS / "experiments").glob("*.yaml"))]
CLUSTERS = [yaml.safe_load(p.read_text()) for p in sorted((BUNDLED_CONFIGS / "clusters").glob("*.yaml"))]
FILE = "mutated.yaml"

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**6), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.from_regex(r"-?\d{0,7}[setx]?", fullmatch=True),  # frequency-like, good and bad
    st.sampled_from(["nope", "configs/agents/none.json", "ppo", "mlp2", "small", "k80", "t4", "distributed"]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=6), st.integers(), max_size=3),
)


def mutate(document: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    mutated = dict(document)
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        keys = sorted(mutated)
        action = data.draw(st.sampled_from(["set", "delete", "unknown", "nested"]))
        if action == "set" and keys:
            mutated[data.draw(st.sampled_from(keys))] = data.draw(values)
        elif action == "delete" and keys:
            mutated.pop(data.draw(st.sampled_from(keys)))
        elif action == "unknown":
            mutated[data.draw(st.text(min_size=1, max_size=10))] = data.draw(values)
        else:
            nested = [k for k in keys if isinstance(mutated[k], dict)]
            if nested:
                key = data.draw(st.sampled_from(nested))
                inner = dict(mutated[key])
                inner[data.draw(st.sampled_from([*sorted(inner), "x"]))] = data.draw(values)
                mutated[key] = inner
    return mutated


def assert_spec_error(error: InvalidInput) -> None:
    assert error.problems
    for line in error.problems:
        where, _, message = line.partition(": ")
        assert message, line
        assert where == FILE or where.endswith((".yaml", ".json")), line


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.sampled_from(EXPERIMENTS), st.data())
def test_mutated_experiments_validate_or_fail_cleanly(document: dict[str, Any], data: st.DataObject) -> None:
    mutated = mutate(document, data)
    try:
        experiment = resolve_experiment(mutated, shown=FILE, base=Path.cwd(), library=LIBRARY)
    except InvalidInput as error:
        assert_spec_error(error)
    else:
        again = resolve_experiment(to_data(experiment), shown=FILE, base=Path.cwd(), library=LIBRARY)
        assert again == experiment


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CLUSTERS), st.data())
def test_mutated_clusters_validate_or_fail_cleanly(document: dict[str, Any], data: st.DataObject) -> None:
    mutated = mutate(document, data)
    try:
        cluster = resolve_cluster(mutated, shown=FILE)
    except InvalidInput as error:
        assert_spec_error(error)
    else:
        assert resolve_cluster(to_data(cluster), shown=FILE) == cluster
