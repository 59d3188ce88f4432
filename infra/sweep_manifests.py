"""The Kubernetes objects of a sweep: one Indexed Job whose pod ``k`` trains trial ``k``.

- Namespace ``tfcli-<sweep>``, the runner ServiceAccount (Workload Identity to the sweep's bucket writer), and the
  ConfigMap ``sweep-trials`` holding every trial's resolved spec as ``trial-<k>.yaml``, mounted at ``/etc/tfcli``.
- Job ``trials-<digest>``: ``completionMode: Indexed``, ``completions`` = the number of trials, ``parallelism`` = P.
  Each pod reads its completion index from the ``batch.kubernetes.io/job-completion-index`` annotation into
  ``TRIAL_INDEX`` and runs ``run --spec /etc/tfcli/trial-$(TRIAL_INDEX).yaml --output
  /results/<sweep>/<sweep>-$(TRIAL_INDEX) --index $(TRIAL_INDEX)`` (Kubernetes expands ``$(VAR)`` in args from the
  container's env).

The pod is the learner pod of :mod:`infra.manifests` (security, resources, GPU placement, GCS FUSE results volume),
sized for the widest trial. Distributed trials are not offered on GKE: each would need its own env-worker Job and
Service.

A sweep survives its trials: failures are counted per index (``backoffLimitPerIndex``), exit 2 fails that trial's
index (``FailIndex``) and never the Job (a trial paused at ``max_cost`` exits 0: ``--index`` tells the trainer it is
a trial, and its index ends without counting as failed), so the other trials go on and the unstarted ones still
start. When
every index has completed or failed, the Job ends: ``Complete``, or ``Failed`` (reason ``FailedIndexes``) with the
failed ones in ``status.failedIndexes``. Only when more than half of the trials have failed does the Job end early
(``maxFailedIndexes``, reason ``MaxFailedIndexesExceeded``): what would be left is no fair comparison, and a fault
every trial shares (an image that crashes, a node too small) stops spending.
"""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from infra import naming
from infra.code_bundle import CODE_CONFIG_MAP
from infra.manifests import learner_job
from infra.pod_parts import RETRIES, SPEC_DIGEST, ManifestContext, code_args, failure_policy, named_job
from infra.sizing import widest
from tfcli.spec import Experiment
from tfcli.spec.sweep import trial_file, trials_data

TRIALS_CONFIG_MAP = "sweep-trials"
TRIALS_JOB = "trials"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
INDEX_VARIABLE = "TRIAL_INDEX"
RERUN_ANNOTATION = "tfcli/rerun"


def max_failed_trials(trials: int) -> int:
    """``maxFailedIndexes``: the Job fails early once more than half of its trials have failed."""
    return trials // 2


def trial_results(sweep: str, index: int | str) -> str:
    """Where trial ``index`` writes inside the pod: ``/results/<sweep>/<sweep>-<index>`` (its bucket prefix)."""
    return f"{naming.RESULTS_DIR}/{sweep}/{sweep}-{index}"


def build_sweep_manifests(
    sweep: str,
    trials: list[Experiment],
    ctx: ManifestContext,
    *,
    parallelism: int,
    held: tuple[int, ...] = (),
    rerun: int = 0,
) -> list[dict[str, Any]]:
    """The objects that run every trial of ``sweep``, namespace first, the Job last.

    A resumed sweep (``resume -s``): ``held`` trials' pods end at once (``trainer run --hold``: a failed one fails
    its index again, without retries, so it counts beside ``maxFailedIndexes``), and ``rerun`` (when not 0) is an
    annotation of the pod template, so that the Job's digest, its name, changes and an ended Job is replaced."""
    labels = {"app.kubernetes.io/name": "tfcli", "app.kubernetes.io/instance": sweep}
    data = trials_data(trials)
    digest = hashlib.sha256(yaml.safe_dump(data, sort_keys=True).encode()).hexdigest()[:16]
    job = learner_job(widest(trials), ctx, None)
    meta = job["metadata"]
    meta["labels"] = {**labels, "app.kubernetes.io/component": "trial"}
    spec = job["spec"]
    template = spec["template"]
    template["metadata"]["labels"] = {**labels, "app.kubernetes.io/component": "trial"}
    template["metadata"]["annotations"][SPEC_DIGEST] = digest
    pod = template["spec"]
    (container,) = pod["containers"]
    container["name"] = "trial"
    index = f"$({INDEX_VARIABLE})"
    container["args"] = [
        "run",
        "--spec",
        f"{naming.SPEC_DIR}/{trial_file(index)}",
        "--output",
        trial_results(sweep, index),
        *code_args(ctx),
    ]
    if held:
        container["args"] += ["--hold", ",".join(map(str, held))]
    container["args"] += ["--index", index]  # a trial: at max_cost it exits 0, ending its index (not FailIndex)
    if rerun:
        template["metadata"]["annotations"][RERUN_ANNOTATION] = str(rerun)
    container["env"] = [
        {
            "name": INDEX_VARIABLE,
            "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{INDEX_ANNOTATION}']"}},
        },
        *container["env"],
    ]
    pod["volumes"] = [
        {"name": "spec", "configMap": {"name": TRIALS_CONFIG_MAP}} if volume["name"] == "spec" else volume
        for volume in pod["volumes"]
    ]
    del spec["backoffLimit"]  # with backoffLimitPerIndex the API server defaults it to "no limit"
    spec.update(
        {
            "completionMode": "Indexed",
            "completions": len(trials),
            "parallelism": min(parallelism, len(trials)),
            "backoffLimitPerIndex": RETRIES,
            "maxFailedIndexes": min(len(trials), max_failed_trials(len(trials)) + len(held)),
            "podFailurePolicy": failure_policy("trial", per_index=True),
        }
    )
    meta["name"] = TRIALS_JOB
    job = named_job(job, TRIALS_JOB)
    code_meta = {"name": CODE_CONFIG_MAP, "namespace": ctx.namespace, "labels": labels}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ctx.namespace, "labels": labels}},
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": naming.RUNNER_SERVICE_ACCOUNT,
                "namespace": ctx.namespace,
                "labels": labels,
                "annotations": {"iam.gke.io/gcp-service-account": ctx.service_account_email},
            },
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": TRIALS_CONFIG_MAP, "namespace": ctx.namespace, "labels": labels},
            "data": data,
        },
        *([ctx.code.config_map(code_meta)] if ctx.code is not None else []),
        job,
    ]


def render_sweep(sweep: str, trials: list[Experiment], ctx: ManifestContext, *, parallelism: int) -> str:
    """The manifests as one multi-document YAML (what ``pulumi up`` of the sweep stack applies)."""
    objects = build_sweep_manifests(sweep, trials, ctx, parallelism=parallelism)
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, allow_unicode=True)
