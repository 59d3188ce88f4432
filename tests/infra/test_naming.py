"""Names GCP and Kubernetes accept for any valid experiment name; the default image; machine shapes."""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path

import pytest

import infra
from infra import naming
from infra.image import default_image
from infra.shapes import machine_shape
from tfcli import __version__

LONGEST = "a" * 20 + "-" + "b" * 19  # 40 characters, the longest name a spec allows
NAMES = ["x", "cartpole-ppo", "space-invaders-dqn", LONGEST, "my-google-experiment", "a-" * 19 + "zz"]
SERVICE_ACCOUNT_ID = re.compile(r"^[a-z](?:[-a-z0-9]{4,28}[a-z0-9])$")
BUCKET = re.compile(r"^[a-z0-9][-a-z0-9_]{1,61}[a-z0-9]$")
DNS_LABEL = re.compile(r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$")


@pytest.mark.parametrize("name", NAMES)
def test_cloud_names_fit_gcp_rules(name: str) -> None:
    for account in (naming.writer_account_id(name), naming.node_account_id(name)):
        assert SERVICE_ACCOUNT_ID.match(account), account
    bucket = naming.bucket_name(name, "my-gcp-project")
    assert BUCKET.match(bucket) and "google" not in bucket, bucket
    assert naming.bucket_name(name, "my-gcp-project") == bucket  # deterministic: render knows it before deploy
    assert naming.bucket_name(name, "another-project") != bucket  # globally unique per project
    assert DNS_LABEL.match(naming.namespace(name))
    for address in naming.worker_addresses(1000):
        assert DNS_LABEL.match(address.split(".")[0])


def test_long_names_stay_distinct_when_shortened() -> None:
    a, b = "a" * 39 + "x", "a" * 39 + "y"
    assert naming.writer_account_id(a) != naming.writer_account_id(b)
    assert naming.bucket_name(a, "p") != naming.bucket_name(b, "p")


def _cut(base: str, limit: int, suffix: str) -> str:
    """The rule written out once more, independently of ``naming.fit``: a 6-character sha256 prefix of the whole
    base after the part of it that fits, with no dash doubled where the cut falls after one."""
    keep = limit - len(suffix) - 7
    return base[:keep].rstrip("-") + "-" + hashlib.sha256(base.encode()).hexdigest()[:6] + suffix


@pytest.mark.parametrize("length", range(1, 41))
def test_every_name_length_from_1_to_40(length: int) -> None:
    # A dash at every third place, so some cuts fall just after a dash.
    name = "".join("-" if i % 3 == 2 and 0 < i < length - 1 else "abcdefghij"[i % 10] for i in range(length))
    for role, account in (("results", naming.writer_account_id(name)), ("nodes", naming.node_account_id(name))):
        whole = f"{name}-{role}"
        # Up to 30 characters the name is kept whole; one more and it is cut to exactly 30 with a digest.
        assert account == (whole if len(whole) <= 30 else _cut(name, 30, f"-{role}")), account
        assert len(account) <= 30 and SERVICE_ACCOUNT_ID.match(account) and "--" not in account, account
    project = hashlib.sha256(b"my-gcp-project").hexdigest()[:8]
    # A 40-character name leaves 63 - 9 - 6 = 48 >= 40 characters: never cut, never a digest of the name.
    assert naming.bucket_name(name, "my-gcp-project") == f"tfcli-{name}-{project}"


def test_bucket_names_longer_than_a_spec_allows_are_still_cut_to_63() -> None:
    name = "c" * 60
    project = hashlib.sha256(b"p").hexdigest()[:8]
    bucket = naming.bucket_name(name, "p")
    assert bucket == _cut(f"tfcli-{name}", 54, "") + f"-{project}" and len(bucket) == 63
    assert naming.bucket_name("c" * 48, "p") == f"tfcli-{'c' * 48}-{project}"  # exactly 54 before the project part
    assert len(naming.bucket_name("c" * 49, "p")) == 63


# Names of deployed things: a change here renames every bucket and service account already deployed (their data
# and IAM bindings stay with the old names). Change these only with a migration.
GOLDEN = [
    ("x", "x-results", "x-nodes", "tfcli-x-ffe34095"),
    ("cartpole-ppo", "cartpole-ppo-results", "cartpole-ppo-nodes", "tfcli-cartpole-ppo-ffe34095"),
    (LONGEST, "aaaaaaaaaaaaaaa-ffab3f-results", "aaaaaaaaaaaaaaaaa-ffab3f-nodes", f"tfcli-{LONGEST}-ffe34095"),
    ("my-google-experiment", "my-google-experiment-results", "my-google-experiment-nodes",
     "tfcli-x-cd716d8be8-ffe34095"),
    ("abcdefghijklmn-opqrstuvwxyz", "abcdefghijklmn-d47757-results", "abcdefghijklmn-op-d47757-nodes",
     "tfcli-abcdefghijklmn-opqrstuvwxyz-ffe34095"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "writer", "nodes", "bucket"), GOLDEN)
def test_golden_names(name: str, writer: str, nodes: str, bucket: str) -> None:
    assert naming.writer_account_id(name) == writer
    assert naming.node_account_id(name) == nodes
    assert naming.bucket_name(name, "my-gcp-project") == bucket
    assert naming.bucket_name("x", "another-project") == "tfcli-x-e1ef6833"
    assert naming.service_account_email(writer, "proj") == f"{writer}@proj.iam.gserviceaccount.com"


def test_kubernetes_names_and_paths() -> None:
    assert naming.namespace("cartpole-ppo") == "tfcli-cartpole-ppo"
    assert naming.worker_addresses(2) == ["env-workers-0.env-workers:7000", "env-workers-1.env-workers:7000"]
    assert naming.worker_addresses(0) == []
    assert naming.results_path("cartpole-ppo") == "/results/cartpole-ppo"
    assert naming.is_zone("us-central1-a") and not naming.is_zone("us-central1")


def test_zones_and_regions() -> None:
    assert naming.region_of("us-central1-a") == "us-central1" and naming.region_of("europe-west4") == "europe-west4"
    assert naming.zones_of("us-central1-a") == 1 and naming.zones_of("us-central1") == 3
    assert naming.nodes_per_zone(4, "us-central1") == 2 and naming.nodes_per_zone(4, "us-central1-f") == 4
    with pytest.raises(ValueError, match="'mars' is not a GCP region or zone"):
        naming.region_of("mars")


def test_the_default_image_is_built_from_region_project_and_version() -> None:
    assert default_image(project="p", location="europe-west4-b", gpu=True) == (
        f"europe-west4-docker.pkg.dev/p/tfcli/trainer:{__version__}-gpu"
    )
    assert default_image(project="p", location="us-central1", gpu=False).endswith(f":{__version__}-cpu")


def test_machine_shapes() -> None:
    assert machine_shape("n1-standard-8") == machine_shape("n1-standard-8")
    shape = machine_shape("n1-standard-8")
    assert shape is not None and (shape.vcpus, shape.memory_gib) == (8, 30)
    custom = machine_shape("custom-8-32768")
    assert custom is not None and (custom.family, custom.vcpus, custom.memory_gib, custom.custom) == ("n1", 8, 32, True)
    assert machine_shape("e2-medium").vcpus == 2
    assert machine_shape("a2-highgpu-1g").memory_gib == 85
    assert machine_shape("g2-standard-8").memory_gib == 32
    assert machine_shape("bogus") is None


def test_no_infra_module_shadows_an_installed_one() -> None:
    # Pulumi runs infra/__main__.py with infra/ on sys.path, so infra/yaml.py would shadow PyYAML, etc.
    for path in Path(infra.__file__).parent.glob("*.py"):
        if not path.stem.startswith("__"):
            assert importlib.util.find_spec(path.stem) is None, f"infra/{path.name} shadows a top-level module"
