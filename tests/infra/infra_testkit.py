"""Helpers for the Pulumi tests: stack config for a bundled experiment; the program evaluated under mocks.

Every plan comes from :func:`infra.plan.plan_stack` — the program run under ``pulumi.runtime.set_mocks`` with the
given stack config — and is cached per config, so each parametrized test costs a dictionary lookup after the first.
"""

from __future__ import annotations

import json
from typing import Any

from infra.plan import Plan, PlannedResource, plan_stack
from infra.pod_parts import job_role
from infra.stack_files import experiment_stack_config
from trainer.kernel.spec import ConfigLibrary, Experiment, load_experiment
from trainer.kernel.spec.library import BUNDLED_CONFIGS

LIBRARY = ConfigLibrary((BUNDLED_CONFIGS,))
PROJECT = "test-project"
REGION = "us-central1"
ZONE = "us-central1-a"
SHARED_STACK = "shared-t4"
BUNDLED_EXPERIMENTS = sorted(path.stem for path in (BUNDLED_CONFIGS / "experiments").iterdir())
RUN_MODES = ("single", "multi-threaded", "distributed")

_PLANS: dict[str, Plan] = {}


def experiment(name: str, **overrides: Any) -> Experiment:
    """A bundled experiment, with spec keys overridden (``run_mode=...``, ``num_workers=...``)."""
    return load_experiment(name, library=LIBRARY, overrides=overrides or None).spec


def in_mode(name: str, run_mode: str) -> Experiment:
    return experiment(name, run_mode=run_mode, num_workers=3 if run_mode != "single" else None)


def stack_config(spec: Experiment, *, shared: bool = False, **extra: Any) -> dict[str, Any]:
    config = experiment_stack_config(
        spec, project=PROJECT, region=REGION, zone=ZONE, shared_cluster_stack=SHARED_STACK if shared else None
    )
    return {**config, **extra}


def plan_for(config: dict[str, Any], *, stack: str = "test") -> Plan:
    key = json.dumps([stack, config], sort_keys=True, default=str)
    if key not in _PLANS:
        _PLANS[key] = plan_stack(config, stack=stack)
    return _PLANS[key]


def jobs(plan: Plan) -> dict[str, PlannedResource]:
    """The Jobs by role (``learner``, ``env-workers``); their names carry a digest of what they run."""
    return {job_role(r.inputs): r for r in plan.of_type("kubernetes:batch/v1:Job")}


def containers(job: PlannedResource) -> list[dict[str, Any]]:
    return list(job.inputs["spec"]["template"]["spec"]["containers"])


def k8s_objects(plan: Plan) -> list[PlannedResource]:
    return [r for r in plan.resources if r.type.startswith("kubernetes:") and r.custom]
