"""The only reader of stack config: ``stacks/Pulumi.<stack>.yaml`` -> one validated :class:`StackSettings`.

:func:`read_stack_config` is what the program calls (through Pulumi's config); :func:`settings_from_config` is the
same validation over a plain mapping — a stack file read as YAML — for what runs without Pulumi (``render``).

Keys (``tfcli:`` is this project's namespace; ``gcp:`` the Google provider's, which it reads too):

==============================  ===================================================================================
``tfcli:experiment``            the fully resolved experiment spec (an experiment stack), or
``tfcli:cluster``               the fully resolved cluster spec (a shared cluster stack) — exactly one of the two
``tfcli:sharedClusterStack``    experiment stacks only: run on that shared cluster stack's cluster (read through a
                                StackReference) instead of a cluster of the experiment's own
``tfcli:suspend``               ``true`` pauses the experiment's Jobs (``spec.suspend``); default ``false``
``tfcli:image``                 the trainer image for every container; default: ``tfcli:imageStack``'s, else
                                :func:`infra.image.default_image`
``tfcli:imageStack``            the image stack (``image.<project>``) whose built trainer the Jobs pull by digest
``tfcli:code``                  the project's code folders (paths under its root, the folder of Pulumi.yaml) the
                                pods import from (:mod:`infra.code_bundle`); default none
``tfcli:location``              zone or region when the cluster spec has no ``location``; else ``gcp:zone``, then
                                ``gcp:region``
``tfcli:resultsRetentionDays``  delete result objects older than this (default 90; 0 keeps them)
``tfcli:transportToken``        secret; the distributed transport's token (default: generated once, see workloads)
``tfcli:prices``                the rates ``start`` fixed for ``max_cost``'s price (:mod:`infra.price_config`);
                                default the bundled table
``gcp:project``                 the GCP project (required)
==============================  ===================================================================================
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra.code_bundle import CodeBundle, read_code
from infra.naming import region_of
from infra.price_config import book_from_config
from infra.prices import BUNDLED, PriceBook
from trainer.kernel.config_keys import (
    CLUSTER_KEY,
    CODE_KEY,
    EXPERIMENT_KEY,
    IMAGE_KEY,
    IMAGE_STACK_KEY,
    LOCATION_KEY,
    NAMESPACE,
    PRICES_KEY,
    PROJECT_KEY,
    REGION_KEY,
    RETENTION_DAYS_KEY,
    SHARED_CLUSTER_STACK_KEY,
    SUSPEND_KEY,
    SWEEP_KEY,
    TRANSPORT_TOKEN_KEY,
    ZONE_KEY,
    short,
)
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import Cluster, ConfigLibrary, Experiment, resolve_cluster, resolve_experiment
from trainer.kernel.spec.library import find_project_root

if TYPE_CHECKING:
    import pulumi

DEFAULT_RETENTION_DAYS = 90
# The keys read, as they appear in a stack file (the token, a secret, is read apart).
KEYS = (
    EXPERIMENT_KEY,
    CLUSTER_KEY,
    SHARED_CLUSTER_STACK_KEY,
    SUSPEND_KEY,
    IMAGE_KEY,
    IMAGE_STACK_KEY,
    CODE_KEY,
    LOCATION_KEY,
    RETENTION_DAYS_KEY,
    PROJECT_KEY,
    ZONE_KEY,
    REGION_KEY,
    PRICES_KEY,
)


@dataclass(frozen=True)
class StackSettings:
    """Everything the program needs from stack config, validated."""

    stack: str
    project: str
    location: str
    experiment: Experiment | None = None
    cluster: Cluster | None = None
    shared_cluster_stack: str | None = None
    suspend: bool = False
    image: str | None = None
    image_stack: str | None = None  # tfcli:imageStack: pull the trainer that stack built (infra/image_choice.py)
    retention_days: int = DEFAULT_RETENTION_DAYS
    transport_token: pulumi.Output[str] | None = None
    code: CodeBundle | None = None
    book: PriceBook = BUNDLED  # tfcli:prices: the rates max_cost's price is computed at


def read_stack_config() -> StackSettings:
    """This stack's config, through Pulumi (the program entry calls this once)."""
    import pulumi

    config = {key: pulumi.Config(key.split(":")[0]).get(key.split(":", 1)[1]) for key in KEYS}
    token = pulumi.Config(NAMESPACE).get_secret(short(TRANSPORT_TOKEN_KEY))
    return settings_from_config(config, stack=pulumi.get_stack(), transport_token=token)


def read_config_values(extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keys this program reads and ``extra`` ones (a sweep stack's), as Pulumi hands them over."""
    import pulumi

    return {key: pulumi.Config(key.split(":")[0]).get(key.split(":", 1)[1]) for key in (*KEYS, *extra)}


def sweep_stack_requested() -> bool:
    """Whether this stack is a sweep stack (``tfcli:sweep``; :mod:`infra.sweep_config` validates it)."""
    import pulumi

    return pulumi.Config(NAMESPACE).get(short(SWEEP_KEY)) is not None


def images_stack_requested() -> bool:
    """Whether this stack is a project's image stack (``tfcli:images``; :mod:`infra.image_program` validates it)."""
    import pulumi

    from trainer.kernel.config_keys import IMAGES_KEY

    return pulumi.Config(NAMESPACE).get(short(IMAGES_KEY)) is not None


def config_where(stack: str, key: str) -> str:
    return f"Pulumi.{stack}.yaml: {key}"


def config_mapping(stack: str, key: str, value: Any) -> Any:
    """An object value: a mapping from a YAML file, or the JSON text Pulumi hands over."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as error:
            raise InvalidInput(f"{config_where(stack, key)}: not a mapping ({error})") from None
    return value


def _bool(stack: str, key: str, value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise InvalidInput(f"{config_where(stack, key)}: expected true or false, got {value!r}")


def config_int(stack: str, key: str, value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise InvalidInput(f"{config_where(stack, key)}: expected a whole number, got {value!r}")


def _code(stack: str, value: Any) -> CodeBundle | None:
    """``tfcli:code``: folders under the project's root (Pulumi runs the program there; tfcli finds it above the
    current folder), read now: what is deployed is the code as it is at ``up``."""
    if value is None or value == "":
        return None
    folders = json.loads(value) if isinstance(value, str) and value.startswith("[") else value
    if isinstance(folders, str):
        folders = [folders]
    if not isinstance(folders, list) or not all(isinstance(folder, str) and folder for folder in folders):
        raise InvalidInput(f"{config_where(stack, CODE_KEY)}: expected a list of folders, got {value!r}")
    root = find_project_root() or Path.cwd()
    return read_code(root, folders, where=config_where(stack, CODE_KEY))


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def settings_from_config(
    config: Mapping[str, Any], *, stack: str, transport_token: pulumi.Output[str] | None = None
) -> StackSettings:
    """Validate stack config (``{"tfcli:experiment": ..., "gcp:project": ...}``); every mistake is an
    :class:`InvalidInput` naming the stack file and the key."""
    experiment_key, cluster_key = EXPERIMENT_KEY, CLUSTER_KEY
    shared_key, location_key = SHARED_CLUSTER_STACK_KEY, LOCATION_KEY
    retention_key = RETENTION_DAYS_KEY
    experiment_data = config_mapping(stack, experiment_key, config.get(experiment_key))
    cluster_data = config_mapping(stack, cluster_key, config.get(cluster_key))
    if (experiment_data is None) == (cluster_data is None):
        raise InvalidInput(
            f"Pulumi.{stack}.yaml: set exactly one of {experiment_key} (an experiment stack) and "
            f"{cluster_key} (a shared cluster stack)"
        )
    project = _text(config.get(PROJECT_KEY))
    if not project:
        raise InvalidInput(f"Pulumi.{stack}.yaml: gcp:project is not set (pulumi config set gcp:project PROJECT)")
    experiment = cluster = None
    if experiment_data is not None:
        experiment = resolve_experiment(
            experiment_data,
            shown=config_where(stack, experiment_key),
            base=Path.cwd(),
            library=ConfigLibrary.for_project(),
        )
    else:
        cluster = resolve_cluster(cluster_data, shown=config_where(stack, cluster_key))
    shared = _text(config.get(shared_key))
    if shared and cluster is not None:
        raise InvalidInput(f"{config_where(stack, shared_key)}: only an experiment stack runs on a shared cluster")
    if experiment is not None and experiment.cluster is None and not shared:
        raise InvalidInput(
            f"{config_where(stack, experiment_key)}: cluster: the experiment names no cluster; give it one or set "
            f"{shared_key} to a shared cluster stack"
        )
    spec_cluster = cluster if cluster is not None else experiment.cluster if experiment is not None else None
    candidates = [
        (
            spec_cluster.location if spec_cluster else None,
            f"{config_where(stack, experiment_key)}: cluster.location"
            if experiment
            else f"{config_where(stack, cluster_key)}: location",
        ),
        (_text(config.get(location_key)), config_where(stack, location_key)),
        (_text(config.get(ZONE_KEY)), config_where(stack, ZONE_KEY)),
        (_text(config.get(REGION_KEY)), config_where(stack, REGION_KEY)),
    ]
    location, source = next(((value, key) for value, key in candidates if value), (None, ""))
    if location is None:
        raise InvalidInput(
            f"Pulumi.{stack}.yaml: no location: set the cluster spec's location, {location_key}, gcp:zone or gcp:region"
        )
    try:
        region_of(location)
    except ValueError as error:
        raise InvalidInput(f"{source}: {error}") from None
    retention = config_int(stack, retention_key, config.get(retention_key))
    if retention is not None and retention < 0:
        raise InvalidInput(
            f"{config_where(stack, retention_key)}: must be 0 (keep results) or a number of days, got {retention}"
        )
    return StackSettings(
        stack=stack,
        project=project,
        location=location,
        experiment=experiment,
        cluster=cluster,
        shared_cluster_stack=shared,
        suspend=_bool(stack, SUSPEND_KEY, config.get(SUSPEND_KEY)),
        image=_text(config.get(IMAGE_KEY)),
        image_stack=_text(config.get(IMAGE_STACK_KEY)),
        retention_days=DEFAULT_RETENTION_DAYS if retention is None else retention,
        transport_token=transport_token,
        code=_code(stack, config.get(CODE_KEY)) if experiment is not None else None,
        book=book_from_config(
            config_mapping(stack, PRICES_KEY, config.get(PRICES_KEY)), config_where(stack, PRICES_KEY)
        ),
    )
