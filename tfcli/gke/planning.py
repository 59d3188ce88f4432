"""``experiment plan`` and ``experiment render``: what an experiment's stack would deploy, offline.

Both start from the stack config ``start`` would deploy (:func:`tfcli.stackfiles.files.experiment_stack`: the
experiment's stack file updated with its spec, or a new one) and need no Pulumi CLI, no credentials and no GCP
project: without one, the placeholder project stands in (and the output says so). ``plan`` runs the stack program
under Pulumi's mocks (:mod:`infra.plan`); ``render`` prints the Kubernetes objects
(:func:`infra.manifests.render_stack_file`; a sweep's: :func:`infra.sweep_program.render_sweep_config`). A sweep's
stack config is built as ``start -s`` builds it (:func:`tfcli.stackfiles.sweep.deploy_stack`).
"""

from __future__ import annotations

import dataclasses
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcli.experiments.store import ExperimentStore, checked_flag
from tfcli.project import ProjectDir
from tfcli.stackfiles.files import PLACEHOLDER_PROJECT, StackFile, cluster_spec, experiment_stack
from tfcli.stackfiles.sweep import deploy_stack
from tfcli.sweeps.store import SweepDir
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.parallel import checked_parallel

if TYPE_CHECKING:
    from infra.plan import Plan
    from infra.prices import CostEstimate
    from tfcli.gke.price_source import Prices


@dataclass(frozen=True)
class Planned:
    """The stack config to plan or render (an experiment's or a sweep's), and whether its GCP project is the
    placeholder."""

    file: StackFile
    name: str
    trials: int | None = None  # a sweep's: they run in one Indexed Job
    trial_usd_per_hour: float | None = None  # a sweep's: one trial's share of the nodes and fee
    run_usd_per_hour: float | None = None  # an experiment's: its run's price, as max_cost counts it (infra/run_price)

    @property
    def config(self) -> dict[str, Any]:
        return self.file.config

    @property
    def placeholder(self) -> bool:
        return self.config.get("gcp:project") == PLACEHOLDER_PROJECT

    def note(self) -> str | None:
        if not self.placeholder:
            return None
        return (
            f"GCP project: the placeholder '{PLACEHOLDER_PROJECT}' (tfcli.yaml names none); names, images and "
            "accounts use it. Set one with `tfcli init -r PROJECT_ID` before starting on GKE."
        )


def planned(store: ExperimentStore, *, experiment: str | None, file: str | None, cluster: str | None = None) -> Planned:
    """The stack config of experiment ``experiment`` (``-e``) or of the spec ``file`` (``-f``), optionally on the
    shared cluster ``cluster`` (``-c``)."""
    from trainer.kernel.spec import ConfigLibrary, load_experiment

    if (experiment is None) == (file is None):
        raise InvalidInput("give exactly one of -e NAME (an existing experiment) or -f SPEC")
    if experiment is not None:
        spec = store.get(experiment).spec()
    else:
        assert file is not None
        spec = load_experiment(file, library=ConfigLibrary.for_project(store.project.root)).spec
    if cluster is not None:
        checked_flag(cluster, "--cluster")
    stack = experiment_stack(store.project, spec, shared_cluster=cluster)
    from infra.stack_config import settings_from_config

    settings = settings_from_config(stack.config, stack=spec.name)  # every mistake before Pulumi, exit code 2
    from infra.run_price import run_estimate

    assert settings.experiment is not None  # an experiment's stack config holds its spec
    shared = settings.shared_cluster_stack is not None
    price = run_estimate(settings.experiment, shared_cluster=shared, book=settings.book)
    return Planned(stack.file, spec.name, run_usd_per_hour=None if price is None else price.usd_per_hour)


def planned_sweep(
    project: ProjectDir, sweep: SweepDir, *, shared_cluster: str | None = None, parallelism: int | None = None
) -> Planned:
    """The sweep's stack config as ``start -s`` would deploy it, built by the same
    :func:`tfcli.stackfiles.sweep.deploy_stack` (``shared_cluster``: on that cluster, else the file's choice while
    that cluster's stack exists; ``parallelism``: that many trials at a time, else the file's or the default)."""
    from infra.sweep_config import sweep_settings_from_config

    checked_parallel(parallelism)
    if shared_cluster is not None:
        cluster_spec(project, checked_flag(shared_cluster, "--cluster"))  # an unknown one lists the known ones
    stack_file, _ = deploy_stack(project, sweep.definition(), shared_cluster=shared_cluster, parallelism=parallelism)
    from infra.run_price import trial_price

    # every mistake before Pulumi runs, exit code 2
    settings = sweep_settings_from_config(stack_file.config, stack=sweep.name)
    price = trial_price(settings.trials, shared_cluster=settings.settings.shared_cluster_stack is not None)
    return Planned(stack_file, sweep.name, trials=len(sweep.trials()), trial_usd_per_hour=price)


def plan(target: Planned, current: Prices | None = None) -> Plan:
    """The stack under Pulumi's mocks, priced at ``current`` (default: the bundled table)."""
    from infra.plan import plan_stack

    if current is None:
        return plan_stack(target.config, stack=target.name)
    return plan_stack(target.config, stack=target.name, book=current.book, price_notes=current.notes)


def prices_for(project: ProjectDir, target: Planned) -> Prices:
    """The prices ``plan`` shows for this stack: current ones for its location where credentials allow
    (:mod:`tfcli.gke.price_source`)."""
    from tfcli.gke.price_source import stack_prices

    return stack_prices(project, target.config)


def spot_alternative(result: Plan) -> tuple[str, CostEstimate] | None:
    """(how the learner pool is provisioned now, the estimate with it spot — on-demand when it is spot); None without
    a learner pool."""
    from infra import prices
    from infra.naming import LEARNER_POOL
    from infra.plan import CLUSTER_TYPE, node_groups

    groups = node_groups(list(result.resources))
    learners = [group for group in groups if group.pool == LEARNER_POOL]
    if not learners:
        return None
    spot = not learners[0].spot
    flipped = [dataclasses.replace(g, spot=spot, flex_start=False) if g.pool == LEARNER_POOL else g for g in groups]
    clusters = len(result.of_type(CLUSTER_TYPE))
    return learners[0].provisioning, prices.estimate(flipped, clusters=clusters)


def plan_data(target: Planned, result: Plan) -> dict[str, Any]:
    """``--json``: the plan, the placeholder flag and the spot/on-demand alternative."""
    data = result.to_data()
    data["placeholder_project"] = target.placeholder
    if (price := target.trial_usd_per_hour or target.run_usd_per_hour) is not None:
        from trainer.kernel.budget import START_ALLOWANCE_SECONDS, counted_usd

        data["start_allowance"] = {
            "seconds": START_ALLOWANCE_SECONDS,
            "usd_per_hour": price,
            "usd": round(counted_usd(price, 0.0, 1, START_ALLOWANCE_SECONDS), 4),
        }
    if target.trials is not None:
        data.update(
            {
                "trials": target.trials,
                "parallelism": int(result.outputs.get("parallelism", 1)),
                "trial_usd_per_hour": target.trial_usd_per_hour,
            }
        )
    if (alternative := spot_alternative(result)) is not None:
        provisioning, estimate = alternative
        data["cost"]["learner_spot"] = provisioning == "spot"
        data["cost"]["learner_provisioning"] = provisioning
        data["cost"]["other_learner_pricing"] = {
            "learner_spot": provisioning != "spot",
            "usd_per_hour": estimate.usd_per_hour,
            "idle_usd_per_hour": estimate.idle_usd_per_hour,
            "max_usd_per_hour": estimate.max_usd_per_hour,
        }
    return data


def render(target: Planned) -> str:
    """The Kubernetes YAML ``pulumi up`` would apply (an experiment's: a freshly generated transport token in its
    Secret; a sweep's: its one Indexed Job, from the sweep program's own :func:`infra.sweep_program.sweep_objects`)."""
    if target.trials is not None:
        from infra.sweep_program import render_sweep_config

        text = render_sweep_config(target.config, stack=target.name)
    else:
        from infra.manifests import render_stack_file

        with tempfile.TemporaryDirectory(prefix="tfcli-render-") as folder:
            path = Path(folder) / f"Pulumi.{target.name}.yaml"
            path.write_text(target.file.text(), encoding="utf-8")
            text = render_stack_file(path)
    if target.placeholder:
        text = f"# {target.note()}\n{text}"
    return text
