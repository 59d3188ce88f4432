"""Names GCP and Kubernetes accept for any valid experiment name; the default image; machine shapes."""

from __future__ import annotations

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


def test_zones_and_regions() -> None:
    assert naming.region_of("us-central1-a") == "us-central1" and naming.region_of("europe-west4") == "europe-west4"
    assert naming.zones_of("us-central1-a") == 1 and naming.zones_of("us-central1") == 3
    assert naming.nodes_per_zone(4, "us-central1") == 2 and naming.nodes_per_zone(4, "us-central1-f") == 4
    with pytest.raises(ValueError):
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
