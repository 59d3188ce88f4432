"""The Kubernetes objects of a sweep: one Indexed Job whose pod ``i`` (its *slot*) trains the trial of slot ``i``.

- Namespace ``tfcli-<sweep>``, the runner ServiceAccount (Workload Identity to the sweep's bucket writer), and the
  ConfigMap ``sweep-trials`` holding, as ``slot-<i>.yaml``, the resolved spec of the trial slot ``i`` runs; mounted
  at ``/etc/tfcli``.
- The slots (:func:`slot_trials`) are the trials the Job trains: all of them at a first start (slot ``i`` = trial
  ``i``), the ones a resume did not leave as they ended (``held``: completed, pruned, failed) after it, so that a
  re-run Job has one pod per trial that still trains, not one per finished trial. The stack exports them
  (``slots``): tfcli reads a pod's or a failed index's trial through them (tfcli/gke/sweep_job.py).
- Job ``trials-<digest>``: ``completionMode: Indexed``, ``completions`` = the number of slots, ``parallelism`` = P.
  Each pod reads its completion index from the ``batch.kubernetes.io/job-completion-index`` annotation into
  ``TRIAL_INDEX`` and runs ``run --spec /etc/tfcli/slot-$(TRIAL_INDEX).yaml --output-parent /results/<sweep>``
  (Kubernetes expands ``$(VAR)`` in args from the container's env): the trainer writes to the spec's own ``name``
  under it, ``/results/<sweep>/<sweep>-<k>``, so no index arithmetic reaches it. ``--output-parent`` also marks the
  run as a sweep's trial: at ``max_cost`` it exits 0, ending its index (not ``FailIndex``).

With early stopping the pods are *workers* instead (``has_workers``; docs/design.md §6.6): ``completions`` =
``parallelism`` = P, each pod runs ``sweep-worker --specs /etc/tfcli --output-parent /results/<sweep> --bucket B
--prefix <sweep>`` (trainer/sweep_worker.py), takes the trials (every ``slot-<i>.yaml``) one at a time through claims
in the bucket, and exits 0 once every trial has ended: a trial waiting at an undecided rung gives its worker to the
next trial, whatever the queue order and P. A worker's index is not a trial (the stack exports ``workers: true``).

The pod is the learner pod of :mod:`infra.manifests` (security, resources, GPU placement, GCS FUSE results volume),
sized for the widest trial. Distributed trials are not offered on GKE: each would need its own env-worker Job and
Service.

A sweep survives its trials: failures are counted per index (``backoffLimitPerIndex``), exit 2 fails that trial's
index (``FailIndex``) and never the Job (a trial paused at ``max_cost`` exits 0: ``--output-parent`` tells the trainer
it is a trial, and its index ends without counting as failed), so the other trials go on and the unstarted ones still
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
from trainer.kernel.spec import Experiment

TRIALS_CONFIG_MAP = "sweep-trials"
TRIALS_JOB = "trials"
INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
INDEX_VARIABLE = "TRIAL_INDEX"
RERUN_ANNOTATION = "tfcli/rerun"


def slot_trials(trials: int, held: tuple[int, ...]) -> list[int]:
    """The trial each slot (completion index) of the Job runs: every trial that a resume did not hold, in order."""
    return [index for index in range(trials) if index not in held]


def slot_file(slot: int | str) -> str:
    """Slot ``slot``'s key in the sweep's ConfigMap, and its file under the pod's spec folder."""
    return f"slot-{slot}.yaml"


def has_workers(trials: list[Experiment]) -> bool:
    """Whether the sweep's pods are workers (early stopping: trials wait at rungs and are started again) rather than
    one slot per trial."""
    return bool(trials) and trials[0].early_stop is not None


def worker_args(sweep: str, ctx: ManifestContext, rerun: int) -> list[str]:
    """A worker pod's command (trainer/sweep_worker.py): every spec in the ConfigMap is a trial to take, claims go
    through the bucket's API (this Job's own: ``--run``, so that a ``resume -s`` Job trains what an earlier one
    ended), the trials' files to its FUSE mount."""
    return [
        "sweep-worker",
        "--specs",
        naming.SPEC_DIR,
        "--output-parent",
        f"{naming.RESULTS_DIR}/{sweep}",
        "--bucket",
        ctx.bucket,
        "--prefix",
        sweep,
        "--run",
        str(rerun),
        *code_args(ctx),
    ]


def max_failed_trials(trials: int) -> int:
    """``maxFailedIndexes``: the Job fails early once more than half of its trials have failed."""
    return trials // 2


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

    A resumed sweep (``resume -s``): ``held`` trials get no slot (they stay as they ended), and ``rerun`` (when
    not 0) is an annotation of the pod template, so that the Job's digest, its name, changes and an ended Job is
    replaced."""
    from trainer.kernel.spec.loader import to_yaml

    labels = {"app.kubernetes.io/name": "tfcli", "app.kubernetes.io/instance": sweep}
    slots = slot_trials(len(trials), held)
    data = {slot_file(slot): to_yaml(trials[index]) for slot, index in enumerate(slots)}
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
    pods = min(parallelism, len(slots))
    if has_workers(trials):
        container["args"] = worker_args(sweep, ctx, rerun)
    else:
        container["args"] = [
            "run",
            "--spec",
            f"{naming.SPEC_DIR}/{slot_file(index)}",
            "--output-parent",
            f"{naming.RESULTS_DIR}/{sweep}",
            *code_args(ctx),
        ]
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
            "completions": pods if has_workers(trials) else len(slots),
            "parallelism": pods,
            "backoffLimitPerIndex": RETRIES,
            "maxFailedIndexes": min(pods if has_workers(trials) else len(slots), max_failed_trials(len(trials))),
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
