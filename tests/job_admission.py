"""Admission of a Job by the API server: the cross-field rules of ``ValidateJobSpec`` and ``ValidateJobSpecUpdate``
(Kubernetes 1.33, ``pkg/apis/batch/validation``) that tfcli's Jobs meet, as the stand-in of tests/job_controller.py
applies them.

Kept apart from the controller (tests/job_controller.py) because admission is the API server's, not the Job
controller's: it answers ``kubectl apply`` with 422 before any pod exists, and the fake API server
(tests/gke/fake_k8s_provider.py) uses it alone. tests/job_controller.py re-exports every name here.
"""

from __future__ import annotations

from typing import Any


class Invalid(Exception):
    """What the API server answers 422 with: ``Job.batch "<name>" is invalid: <field>: <problem>; ...``."""


def validate(job: dict[str, Any]) -> None:
    """Raise :class:`Invalid` for what ``ValidateJobSpec`` refuses among the fields tfcli sets."""
    spec, name = job["spec"], job["metadata"]["name"]
    errors: list[str] = []
    indexed = spec.get("completionMode") == "Indexed"
    per_index = spec.get("backoffLimitPerIndex")
    for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
        if key in spec and not indexed:
            errors.append(f"spec.{key}: Invalid value: {spec[key]}: requires indexed completion mode")
    if "maxFailedIndexes" in spec:
        if per_index is None:
            errors.append("spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified")
        if spec["maxFailedIndexes"] > spec.get("completions", 1):
            errors.append(
                f"spec.maxFailedIndexes: Invalid value: {spec['maxFailedIndexes']}: must be less than or "
                "equal to completions"
            )
    if per_index is not None and spec.get("completions", 1) > 100_000:
        errors.append("spec.completions: must be less than or equal to 100000 when backoffLimitPerIndex is specified")
    policy = spec.get("podFailurePolicy")
    pod = spec["template"]["spec"]
    if policy is not None:
        if pod.get("restartPolicy") != "Never":
            errors.append(
                'spec.template.spec.restartPolicy: Invalid value: only "Never" is supported when '
                "podFailurePolicy is specified"
            )
        containers = {c["name"] for c in pod["containers"]} | {c["name"] for c in pod.get("initContainers", [])}
        for number, rule in enumerate(policy["rules"]):
            where = f"spec.podFailurePolicy.rules[{number}]"
            if rule["action"] == "FailIndex" and per_index is None:
                errors.append(f"{where}.action: FailIndex rule action requires the backoffLimitPerIndex to be set")
            if rule["action"] not in ("FailJob", "FailIndex", "Ignore", "Count"):
                errors.append(f"{where}.action: Unsupported value: {rule['action']!r}")
            codes = rule.get("onExitCodes")
            if codes is not None:
                values = codes["values"]
                if codes.get("containerName") not in (None, *containers):
                    errors.append(
                        f"{where}.onExitCodes.containerName: Invalid value: {codes['containerName']!r}: "
                        "must be one of the container or initContainer names in the pod template"
                    )
                if values != sorted(set(values)):
                    errors.append(f"{where}.onExitCodes.values: Invalid value: must be ordered and unique")
                if codes["operator"] == "In" and 0 in values:
                    errors.append(f"{where}.onExitCodes.values: Invalid value: 0: must not be 0 for the In operator")
    if errors:
        raise Invalid(f'Job.batch "{name}" is invalid: ' + "; ".join(errors))


MUTABLE = (
    "parallelism",
    "suspend",
    "maxFailedIndexes",
    "backoffLimit",
    "backoffLimitPerIndex",
    "activeDeadlineSeconds",
)


def validate_update(old: dict[str, Any], new: dict[str, Any]) -> None:
    """``ValidateJobSpecUpdate``: a Job of the same name may change only its mutable fields (the pod template and
    ``completions``, ``completionMode`` and ``podFailurePolicy`` are immutable)."""
    validate(new)
    changed = sorted(
        key
        for key in {*old["spec"], *new["spec"]}
        if key not in MUTABLE and old["spec"].get(key) != new["spec"].get(key)
    )
    if changed:
        raise Invalid(
            f'Job.batch "{new["metadata"]["name"]}" is invalid: '
            + "; ".join(f"spec.{key}: Invalid value: field is immutable" for key in changed)
        )
