"""``max_cost`` counts at the price the user saw: ``start`` fixes the rates ``plan`` showed into the stack config
(``tfcli:prices``), and the program prices the learner (``TFCLI_HOURLY_PRICE``) — an experiment's or each sweep
trial's — from them, on every later ``pulumi up`` too, however the catalog's prices move meanwhile."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from billing_catalog_standin import FakeCatalog, sku
from infra_testkit import LIBRARY, PROJECT, plan_for, stack_config
from test_current_prices import SKUS, with_key
from test_sweep_stack import sweep_config

from infra import prices
from infra.plan import Plan
from infra.price_config import book_config, book_from_config
from infra.run_price import run_hourly_price
from infra.stack_config import settings_from_config
from tfcli.gke.price_source import current_prices, fix_prices
from tfcli.project import ProjectDir
from trainer.kernel.config_keys import PRICES_KEY
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import Experiment, load_experiment

CHEAP_T4 = {"asOf": "2026-11-26", "source": "test", "region": "us-central1", "gpus": {"nvidia-tesla-t4": [0.2, 0.05]}}


def flagship() -> Experiment:
    return load_experiment("space-invaders-dqn", library=LIBRARY, overrides={"max_cost": 10}).spec


def learner_price(plan: Plan) -> float:
    (job,) = [j for j in plan.of_type("kubernetes:batch/v1:Job") if "learner" in j.name or "trials" in j.name]
    (container,) = job.inputs["spec"]["template"]["spec"]["containers"]
    (value,) = [env["value"] for env in container["env"] if env["name"] == "TFCLI_HOURLY_PRICE"]
    return float(value)


def test_the_learner_is_priced_at_the_fixed_rates_not_the_tables() -> None:
    spec = flagship()
    bundled = learner_price(plan_for(stack_config(spec)))
    fixed = learner_price(plan_for(stack_config(spec, **{PRICES_KEY: CHEAP_T4})))
    book = book_from_config(CHEAP_T4, "here")
    assert bundled == pytest.approx(run_hourly_price(spec, shared_cluster=False), abs=1e-4)
    assert fixed == pytest.approx(run_hourly_price(spec, shared_cluster=False, book=book), abs=1e-4)
    assert fixed < bundled  # the T4 at $0.05/h spot instead of $0.14/h


def test_a_sweeps_trials_are_priced_at_the_fixed_rates_too() -> None:
    config = sweep_config()
    config["tfcli:sweep"]["base"]["max_cost"] = 5
    machines = {"e2": [[0.01, 0.001], [0.004, 0.0005]]}
    bundled = learner_price(plan_for(config, stack="cartpole-lr"))
    fixed = learner_price(plan_for({**config, PRICES_KEY: {"machines": machines}}, stack="cartpole-lr"))
    assert fixed < bundled


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"gpus": {"nvidia-tesla-t4": [0.2]}}, r"tfcli:prices: gpus\.nvidia-tesla-t4: expected \[on-demand, spot\]"),
        ({"machines": {"n1": [0.1, 0.2]}}, r"tfcli:prices: machines\.n1\[0\]: expected"),
        ({"cheap": True}, "tfcli:prices: unknown key"),
        ("not json", "tfcli:prices: not a mapping"),
    ],
)
def test_bad_fixed_prices_are_refused_naming_the_file_and_key(value: Any, message: str) -> None:
    config = stack_config(flagship(), **{PRICES_KEY: value})
    with pytest.raises(InvalidInput, match=rf"Pulumi\.test\.yaml: {message}"):
        settings_from_config(config, stack="test")


def test_start_fixes_the_prices_plan_showed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TFCLI_CACHE_DIR")  # the user's default place, under XDG_CACHE_HOME
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    settings = with_key(tmp_path)
    catalog = FakeCatalog([*SKUS, sku("E2 Instance Core running in Americas", "OnDemand", "h", 0.02, group="CPU")])
    now = datetime.now(UTC)
    seen = current_prices(settings, tmp_path, "us-central1-a", now=now, session_for=lambda _: catalog).book
    project = ProjectDir(tmp_path, settings)
    spec = flagship()
    config = stack_config(spec)
    fix_prices(project, config, [spec])  # from the day's cache: what `plan` showed
    fixed = config[PRICES_KEY]
    assert fixed == book_config(seen, families={"n1", "e2"}, gpus={"nvidia-tesla-t4"})
    assert fixed["gpus"] == {"nvidia-tesla-t4": [0.40, 0.11]} and set(fixed["machines"]) == {"e2", "n1"}
    assert "Cloud Billing Catalog" in fixed["source"]
    price = learner_price(plan_for(config))
    assert price == pytest.approx(run_hourly_price(spec, shared_cluster=False, book=seen), abs=1e-4)
    assert price != pytest.approx(run_hourly_price(spec, shared_cluster=False), abs=1e-4)
    assert config["gcp:project"] == PROJECT and prices.BUNDLED.gpus["nvidia-tesla-t4"] == (0.35, 0.14)
