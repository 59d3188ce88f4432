"""The stack program of a sweep stack (``tfcli:sweep``): the sweep's own cluster (from its base spec's cluster) or a
shared one, a results bucket named after the sweep, and :class:`infra.workloads.Workloads` of one Indexed Job — one
pod per trial, ``parallelism`` of them at a time, trial ``k`` writing ``gs://<bucket>/<sweep>/<sweep>-<k>/``.

The program (:func:`declare_sweep`) and ``tfcli experiment render -s`` (:func:`render_sweep_config`) take the
sweep's Kubernetes objects from one function, :func:`sweep_objects`, so what is rendered offline is what is
deployed. Pulumi is imported by the program only: rendering needs none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from infra import naming
from infra.image_choice import run_images
from infra.pod_parts import ManifestContext
from infra.run_price import trial_hourly_price
from infra.sizing import cpu_pool, learner_gpus, sweep_learner_nodes, widest
from infra.sweep_config import SweepSettings, read_sweep_config, sweep_settings_from_config
from infra.sweep_manifests import build_sweep_manifests, has_workers, slot_trials


def sweep_context(sweep: SweepSettings) -> ManifestContext:
    """Names from the sweep's (not a trial's) name; the image by whether the trials' learner has a GPU; each trial's
    hourly price for ``max_cost`` (:func:`infra.run_price.trial_hourly_price`)."""
    settings, name = sweep.settings, sweep.name
    trial = widest(sweep.trials)
    gpu = learner_gpus(trial) > 0
    learner, worker = run_images(  # as an experiment's (context_for)
        chosen=(trial.cluster.image if trial.cluster else None) or settings.image,
        image_stack=settings.image_stack,
        project=settings.project,
        location=settings.location,
        gpu=gpu,
    )
    return ManifestContext(
        namespace=naming.namespace(name),
        image=learner,
        worker_image=worker,
        bucket=naming.bucket_name(name, settings.project),
        service_account_email=naming.service_account_email(naming.writer_account_id(name), settings.project),
        suspend=settings.suspend,
        hourly_price=trial_hourly_price(
            sweep.trials, shared_cluster=settings.shared_cluster_stack is not None, book=settings.book
        ),
        code=settings.code,
    )


def sweep_objects(sweep: SweepSettings) -> list[dict[str, Any]]:
    """The sweep's Kubernetes objects: what the program hands to its Workloads, and what ``render -s`` prints."""
    return build_sweep_manifests(
        sweep.name,
        sweep.trials,
        sweep_context(sweep),
        parallelism=sweep.parallelism,
        held=sweep.held,
        rerun=sweep.rerun,
    )


def render_sweep_config(config: Mapping[str, Any], *, stack: str) -> str:
    """The objects of the sweep stack ``stack`` with this config, as one multi-document YAML (no Pulumi needed);
    a mistake in the config is an :class:`~trainer.kernel.errors.InvalidInput`, as the program's would be."""
    objects = sweep_objects(sweep_settings_from_config(config, stack=stack))
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, allow_unicode=True)


def declare_sweep(sweep: SweepSettings) -> None:
    import pulumi

    from infra.run_stack import RunStack, declare_run

    trial = widest(sweep.trials)
    learners = sweep_learner_nodes(sweep.trials, sweep.parallelism)
    run = RunStack(sweep.name, sweep.settings, trial.cluster, cpu_pool(trial), learners=learners)
    declare_run(run, sweep_context(sweep), sweep_objects(sweep), kind="sweep")
    pulumi.export("sweep", sweep.name)
    pulumi.export("trials", [trial.name for trial in sweep.trials])
    pulumi.export("parallelism", min(sweep.parallelism, len(sweep.trials)))
    pulumi.export("slots", slot_trials(len(sweep.trials), sweep.held))  # the trial of each completion index
    pulumi.export("workers", has_workers(sweep.trials))  # pods are workers, not trials (infra/sweep_manifests.py)
    pulumi.export("rerun", sweep.rerun)  # what tfcli checks a stack file against before an up (no rollback)


def run_sweep() -> None:
    declare_sweep(read_sweep_config())
