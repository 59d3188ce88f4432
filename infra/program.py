"""The stack program: stack config (read once, by :mod:`infra.stack_config`) -> components.

- A shared cluster stack (``tfcli:cluster``): GkeCluster + NodePools; exports what experiment stacks need.
- An experiment stack (``tfcli:experiment``): its own GkeCluster + NodePools (named after the experiment), or —
  with ``tfcli:sharedClusterStack`` — the outputs of that stack through a StackReference; then ResultsBucket and
  Workloads (:func:`infra.run_stack.declare_run`, as a sweep stack's).
- A sweep stack (``tfcli:sweep``): :mod:`infra.sweep_program`.
"""

from __future__ import annotations

import pulumi

from infra.manifests import build_manifests, context_for, new_token
from infra.run_stack import RunStack, declare_cluster, declare_run
from infra.sizing import cpu_pool
from infra.stack_config import StackSettings, read_stack_config
from trainer.kernel.spec import Cluster, Experiment


def _shared_cluster(settings: StackSettings, spec: Cluster) -> None:
    gke, pools = declare_cluster(spec.name, spec, settings, cpu_pool(None))
    pulumi.export("clusterName", gke.cluster.name)
    pulumi.export("endpoint", gke.cluster.endpoint)
    pulumi.export("clusterCaCertificate", gke.connection.ca_certificate)
    pulumi.export("kubeconfig", gke.connection.kubeconfig())
    pulumi.export("project", settings.project)
    pulumi.export("location", settings.location)
    pulumi.export("nodeServiceAccount", gke.node_service_account.email)
    pulumi.export("nodePools", {"learner": pools.learner.name, "cpu": pools.cpu.name})
    pulumi.export("gpuType", spec.gpu_type or "")
    pulumi.export("gpusPerNode", spec.gpus_per_node or 0)


def _experiment(settings: StackSettings, experiment: Experiment) -> None:
    from infra.run_price import run_hourly_price  # imports the pools' shapes: a program's run, not infra's import

    context = context_for(
        experiment,
        project=settings.project,
        location=settings.location,
        image=settings.image,
        image_stack=settings.image_stack,
        suspend=settings.suspend,
        hourly_price=run_hourly_price(
            experiment, shared_cluster=settings.shared_cluster_stack is not None, book=settings.book
        ),
        code=settings.code,
    )
    generated = settings.transport_token is None
    token = pulumi.Output.secret(new_token()) if settings.transport_token is None else settings.transport_token
    run = RunStack(experiment.name, settings, experiment.cluster, cpu_pool(experiment))
    objects = build_manifests(experiment, context, token=token)
    declare_run(run, context, objects, kind="experiment", keep_deployed_token=generated)
    pulumi.export("experiment", experiment.name)
    pulumi.export("runMode", experiment.run_mode)
    pulumi.export("workerImage", context.worker_image)


def run() -> None:
    """Declare this stack's resources from its config."""
    from infra.stack_config import images_stack_requested, sweep_stack_requested

    if images_stack_requested():  # an image stack (tfcli:images): infra.image_program
        from infra.image_program import run_images

        run_images()
        return
    if sweep_stack_requested():  # a sweep stack (tfcli:sweep): infra.sweep_program
        from infra.sweep_program import run_sweep

        run_sweep()
        return
    settings = read_stack_config()
    if settings.cluster is not None:
        _shared_cluster(settings, settings.cluster)
    else:
        assert settings.experiment is not None
        _experiment(settings, settings.experiment)
