"""Names of what the stacks declare, in one place, so the program, ``render`` and the CLI agree.

Everything here is a pure function of the experiment or cluster name and the GCP project: the bucket name and the
Google service account's e-mail are known before anything is deployed, which is what lets ``render`` print the same
manifests that ``pulumi up`` applies.
"""

from __future__ import annotations

import hashlib
import math
import re

# Kubernetes object names inside an experiment's namespace (one experiment per namespace, so they can be short).
LEARNER_JOB = "learner"
WORKERS_JOB = "env-workers"
WORKERS_SERVICE = "env-workers"
SPEC_CONFIG_MAP = "experiment-spec"
TOKEN_SECRET = "transport-token"
TOKEN_KEY = "token"
RUNNER_SERVICE_ACCOUNT = "trainer"

# Where the containers find things (docs/design.md §11).
SPEC_DIR = "/etc/tfcli"
SPEC_FILE = "experiment.yaml"
RESULTS_DIR = "/results"
WORKER_PORT = 7000

# Node pools: GKE pool names (unique within a cluster) and the node label pods select them by.
POOL_LABEL = "tfcli-pool"
LEARNER_POOL = "learner"
CPU_POOL = "cpu"

# GKE spreads a regional cluster's node pools over this many zones unless node_locations says otherwise.
ZONES_PER_REGION = 3

_ZONE = re.compile(r"^(?P<region>[a-z]+-[a-z]+[0-9]+)-[a-z]$")
_REGION = re.compile(r"^[a-z]+-[a-z]+[0-9]+$")
SERVICE_ACCOUNT_ID_MAX = 30
BUCKET_NAME_MAX = 63


def is_zone(location: str) -> bool:
    """``us-central1-a`` is a zone (a zonal cluster); ``us-central1`` a region (a regional cluster)."""
    return bool(_ZONE.match(location))


def region_of(location: str) -> str:
    """The region of a zone or region: ``us-central1-a`` -> ``us-central1``."""
    if match := _ZONE.match(location):
        return match.group("region")
    if _REGION.match(location):
        return location
    raise ValueError(f"'{location}' is not a GCP region or zone")


def zones_of(location: str) -> int:
    """How many zones a node pool in this location spans (GKE's default for regional clusters)."""
    return 1 if is_zone(location) else ZONES_PER_REGION


def nodes_per_zone(total: int, location: str) -> int:
    """A node pool's per-zone count that gives at least ``total`` nodes in all."""
    return math.ceil(total / zones_of(location))


def _digest(text: str, length: int = 6) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def fit(base: str, limit: int, suffix: str = "") -> str:
    """``base + suffix`` if it fits in ``limit`` characters, else ``base`` cut short plus a digest of it."""
    if len(base) + len(suffix) <= limit:
        return base + suffix
    keep = limit - len(suffix) - 7
    return f"{base[:keep].rstrip('-')}-{_digest(base)}{suffix}"


def service_account_id(owner: str, role: str) -> str:
    """A Google service account id (6-30 characters) for ``owner`` (an experiment or cluster) and its role."""
    return fit(owner, SERVICE_ACCOUNT_ID_MAX, f"-{role}")


def service_account_email(account_id: str, project: str) -> str:
    return f"{account_id}@{project}.iam.gserviceaccount.com"


def writer_account_id(experiment: str) -> str:
    """The Google service account that may write only the experiment's results bucket."""
    return service_account_id(experiment, "results")


def node_account_id(cluster: str) -> str:
    """The least-privilege service account the cluster's nodes run as."""
    return service_account_id(cluster, "nodes")


def bucket_name(experiment: str, project: str) -> str:
    """The results bucket: globally unique (a digest of the project), at most 63 characters.

    GCS refuses bucket names that contain "google", so such experiment names are replaced by a digest.
    """
    stem = experiment if "google" not in experiment else f"x-{_digest(experiment, length=10)}"
    return fit(f"tfcli-{stem}", BUCKET_NAME_MAX - 9) + f"-{_digest(project, length=8)}"


def namespace(experiment: str) -> str:
    """The experiment's Kubernetes namespace (prefixed, so no experiment name collides with a system one)."""
    return f"tfcli-{experiment}"


def worker_addresses(num_workers: int) -> list[str]:
    """``host:port`` of each env worker: the indexed Job's pods behind the headless Service."""
    return [f"{WORKERS_JOB}-{index}.{WORKERS_SERVICE}:{WORKER_PORT}" for index in range(num_workers)]


def results_path(experiment: str) -> str:
    """The trainer's ``--output`` inside the learner container (the bucket is mounted at ``/results``)."""
    return f"{RESULTS_DIR}/{experiment}"
