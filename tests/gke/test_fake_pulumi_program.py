"""The fake ``pulumi`` (tests/gke/fake_pulumi.py) against the real stack program: for every kind of stack, what the
fake says an ``up`` creates and the outputs it reports are what infra/program.py declares and exports when run
under Pulumi's mocks (infra.plan). Without this the fake's "22 created" and its outputs would only test the fake."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from infra.plan import plan_stack
from infra.stack_files import read_stack_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "infra"))
from infra_testkit import SHARED_STACK, experiment, stack_config  # noqa: E402
from test_sweep_stack import sweep_config  # noqa: E402


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setenv("FAKE_PULUMI_STATE", str(tmp_path))
    return importlib.import_module("fake_pulumi_program")


CASES: dict[str, Any] = {
    "cluster": lambda: ("shared-t4", read_stack_file(ROOT / "stacks" / "Pulumi.shared-t4.yaml")),
    "experiment": lambda: ("cartpole-ppo", stack_config(experiment("cartpole-ppo"))),
    "experiment on a shared cluster": lambda: ("cartpole-ppo", stack_config(experiment("cartpole-ppo"), shared=True)),
    "sweep": lambda: ("cartpole-lr", sweep_config()),
    "sweep on a shared cluster": lambda: ("cartpole-lr", sweep_config(**{"tfcli:sharedClusterStack": SHARED_STACK})),
    "experiment pulling the built trainer": lambda: (
        "cartpole-ppo",
        stack_config(experiment("cartpole-ppo"), **{"tfcli:imageStack": "image.test-project"}),
    ),
    "sweep pulling the built trainer": lambda: ("cartpole-lr", sweep_config(**{"tfcli:imageStack": "image.p"})),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_fake_reports_what_the_program_declares_and_exports(fake: ModuleType, case: str) -> None:
    stack, config = CASES[case]()
    plan = plan_stack(config, stack=stack)

    declared = sorted((resource.type, resource.name) for resource in plan.resources)
    assert sorted(fake.program_resources(config)) == declared
    engine = [("pulumi:pulumi:Stack", f"tfcli-{stack}"), ("pulumi:providers:gcp", "default_10_2_0")]
    assert fake.resources_for(stack, config) == engine + fake.program_resources(config)

    reported = fake.outputs_for(stack, config)
    # kubeconfig is a secret the fake hands out only when a test gives it one (control.json), to reach the fake
    # API server; the rest are the program's outputs, with the program's values.
    assert set(reported) == set(plan.outputs) - {"kubeconfig"}
    for key, value in plan.outputs.items():
        if key == "jobs":  # <role>-<digest of the manifest>: the fake names them by role with a fixed digest
            assert [job.split("-")[0] for job in reported[key]] == [job.split("-")[0] for job in value]
            assert all(re.fullmatch(r"(learner|trials)-[0-9a-f]+", job) for job in reported[key] + value)
        elif key != "kubeconfig":
            assert reported[key] == value, key


def test_the_fakes_image_stack_declares_what_the_image_program_does(fake: ModuleType) -> None:
    config = {"tfcli:images": {"variants": ["cpu", "gpu"]}, "gcp:project": "p", "gcp:region": "us-central1"}
    plan = plan_stack(config, stack="image.p")
    assert sorted(fake.program_resources(config)) == sorted((r.type, r.name) for r in plan.resources)
    images = importlib.import_module("fake_pulumi_images")
    props = images.build_props(config)
    for build in plan.of_type(images.DYNAMIC):  # the inputs the fake diffs and builds with are the program's
        expected = {k: v for k, v in props[build.name].items() if v is not None}
        assert {k: v for k, v in build.inputs.items() if k != "__provider"} == expected


def test_the_fakes_bucket_names_are_literal_not_infras() -> None:
    # The rule written out in the fake, checked against names known by heart (tests/infra/test_naming.py pins them).
    source = (ROOT / "tests" / "gke" / "fake_pulumi_program.py").read_text()
    assert "bucket_name" not in source and "infra.naming" not in source
