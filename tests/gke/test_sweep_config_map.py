"""A GKE sweep's trials are one ConfigMap (``slot-<i>.yaml`` each), and Kubernetes refuses a ConfigMap whose data
passes 1 MiB — at ``pulumi up``, after the cluster is made. So a sweep too large for it is refused where it is
created for GKE and where its stack config is validated, with exit 2, the count, the size, the limit and what to do;
nothing is written. Trials are built in memory; nothing trains."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import invoke

from infra.sweep_config import sweep_settings_from_config
from infra.sweep_manifests import build_sweep_manifests
from infra.sweep_program import sweep_context
from tfcli.sweeps.create import SweepOptions, plan_sweep
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import ConfigLibrary
from trainer.kernel.spec.library import BUNDLED_CONFIGS
from trainer.kernel.spec.sweep import CONFIG_MAP_LIMIT, config_map_size, trials_data

LIBRARY = ConfigLibrary((BUNDLED_CONFIGS,))
RATES = [1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 7e-3, 8e-3, 9e-3]  # 9 combinations; seeds set the count


def sweep_file(root: Path, seeds: int, rates: list[float] = RATES) -> Path:
    path = root / "big.yaml"
    data = {"name": "big", "base": "cartpole-ppo", "axes": {"agent.learning_rate": rates}, "seeds": seeds}
    path.write_text(yaml.safe_dump(data))
    return path


def seeds_for(fraction: float, root: Path) -> int:
    """Seeds for which the 9 combinations' ConfigMap is about ``fraction`` of the limit (from a small sweep's size)."""
    planned = plan_sweep(str(sweep_file(root, 10, RATES[:1])), SweepOptions(), LIBRARY)
    per_trial = config_map_size(trials_data(planned.specs)) / len(planned.specs)
    return int(fraction * CONFIG_MAP_LIMIT / (len(RATES) * per_trial))


def test_the_limit_is_kubernetes_1_mib_of_values() -> None:
    assert CONFIG_MAP_LIMIT == 1_048_576
    assert config_map_size({"trial-0.yaml": "ab", "trial-1.yaml": "é"}) == 4  # UTF-8 bytes of the values


@pytest.mark.slow  # a sweep of hundreds of trials (README "Development")
def test_a_sweep_too_large_for_its_config_map_is_refused_at_creation_and_nothing_is_written(
    gke_project: Path,
) -> None:
    seeds = seeds_for(1.03, gke_project)
    code, _, stderr = invoke("experiment", "sweep", "-f", str(sweep_file(gke_project, seeds)), "--no-build")
    assert code == 2, stderr
    count = len(RATES) * seeds
    assert f"big.yaml: axes, seeds: {count} trials make a " in stderr
    size = int(re.search(r"make a ([\d,]+)-byte ConfigMap", stderr)[1].replace(",", ""))  # type: ignore[index]
    assert size > CONFIG_MAP_LIMIT and "limit of 1,048,576 bytes (1 MiB)" in stderr
    assert "fewer seeds" in stderr and "split the sweep" in stderr
    assert not (gke_project / "experiments" / "big").exists()
    assert not (gke_project / "experiments" / "big-0").exists()
    assert not (gke_project / "stacks" / "Pulumi.big.yaml").exists()


@pytest.mark.slow  # a sweep of hundreds of trials (README "Development")
def test_a_sweep_just_under_the_limit_is_created(gke_project: Path) -> None:
    seeds = seeds_for(0.99, gke_project)
    path = sweep_file(gke_project, seeds)
    size = config_map_size(trials_data(plan_sweep(str(path), SweepOptions(), LIBRARY).specs))
    assert 0.97 * CONFIG_MAP_LIMIT < size <= CONFIG_MAP_LIMIT
    code, stdout, stderr = invoke("experiment", "sweep", "-f", str(path), "--no-build")
    assert code == 0, stderr
    assert f"= {len(RATES) * seeds} trials" in stdout
    assert (gke_project / "stacks" / "Pulumi.big.yaml").exists()


@pytest.mark.slow  # a sweep of hundreds of trials (README "Development")
def test_a_local_project_makes_a_large_sweep_it_runs_here(project: Path) -> None:
    """No ConfigMap on this machine; its stack config is still refused if it is ever deployed (below)."""
    code, _, stderr = invoke(
        "experiment", "sweep", "-f", str(sweep_file(project, seeds_for(1.03, project))), "--no-build"
    )
    assert code == 0, stderr
    assert (project / "experiments" / "big").is_dir()


def stack_config(root: Path, seeds: int) -> dict[str, Any]:
    planned = plan_sweep(str(sweep_file(root, seeds)), SweepOptions(), LIBRARY)
    config = {"gcp:project": "test-project", "gcp:zone": "us-central1-a", "tfcli:suspend": False}
    return {**config, "tfcli:sweep": planned.sweep.model_dump(mode="json")}


@pytest.mark.slow  # a sweep of hundreds of trials (README "Development")
def test_a_sweep_stack_too_large_for_its_config_map_is_refused(tmp_path: Path) -> None:
    seeds = seeds_for(1.03, tmp_path)
    with pytest.raises(InvalidInput) as refused:
        sweep_settings_from_config(stack_config(tmp_path, seeds), stack="big")
    assert refused.value.exit_code == 2
    assert f"Pulumi.big.yaml: tfcli:sweep: axes, seeds: {len(RATES) * seeds} trials make a " in refused.value.message
    assert refused.value.hint and "fewer seeds" in refused.value.hint


@pytest.mark.slow  # a sweep of hundreds of trials (README "Development")
def test_a_sweep_stack_under_the_limit_is_accepted_and_its_config_map_is_the_size_checked(tmp_path: Path) -> None:
    sweep = sweep_settings_from_config(stack_config(tmp_path, seeds_for(0.99, tmp_path)), stack="big")
    objects = build_sweep_manifests(sweep.name, sweep.trials, sweep_context(sweep), parallelism=1)
    (config_map,) = [obj for obj in objects if obj["kind"] == "ConfigMap"]
    assert list(config_map["data"].values()) == list(trials_data(sweep.trials).values())  # slot k: trial k
    assert 0.97 * CONFIG_MAP_LIMIT < config_map_size(config_map["data"]) <= CONFIG_MAP_LIMIT
