from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from trainer.kernel.spec import Cluster


def problems(**fields: Any) -> dict[str, str]:
    with pytest.raises(ValidationError) as caught:
        Cluster(**fields)
    return {".".join(map(str, error["loc"])): error["msg"] for error in caught.value.errors()}


def test_custom_shape_becomes_machine_type() -> None:
    cluster = Cluster(name="c", cpus_per_node=8, memory_per_node=32, num_nodes=1)
    assert cluster.machine_type == "custom-8-32768"


def test_custom_shape_off_the_256_mb_grid_names_the_nearest_valid_shape() -> None:
    found = problems(name="c", cpus_per_node=7, memory_per_node=33.3)
    message = found["memory_per_node"]
    assert "not a multiple of 256 MB" in message
    assert "1, or an even number" in message
    assert "cpus_per_node: 8, memory_per_node: 33.25 (custom-8-34048)" in message


def test_custom_shape_outside_memory_per_vcpu_range() -> None:
    message = problems(name="c", cpus_per_node=2, memory_per_node=64)["memory_per_node"]
    assert "per vCPU" in message
    assert "memory_per_node: 13 (custom-2-13312)" in message


def test_retired_k80_suggests_t4() -> None:
    message = problems(name="c", machine_type="n1-standard-4", gpus_per_node=1, gpu_type="nvidia-tesla-k80")["gpu_type"]
    assert "retired" in message and "nvidia-tesla-t4" in message


@pytest.mark.parametrize(
    ("gpu_type", "machine_type", "family"),
    [("nvidia-l4", "n1-standard-8", "G2"), ("nvidia-tesla-t4", "g2-standard-8", "N1"), ("h100", "a2-highgpu-1g", "A3")],
)
def test_gpu_type_is_checked_against_the_machine_family(gpu_type: str, machine_type: str, family: str) -> None:
    found = problems(name="c", machine_type=machine_type, gpus_per_node=1, gpu_type=gpu_type)
    assert any(family in message for message in found.values()), found


def test_accelerator_machine_types_imply_their_gpus() -> None:
    cluster = Cluster(name="c", machine_type="a3-highgpu-8g", num_nodes=1)
    assert (cluster.gpus_per_node, cluster.gpu_type) == (8, "nvidia-h100-80gb")
    assert "always carries 1" in problems(name="c", machine_type="g2-standard-8", gpus_per_node=2)["gpus_per_node"]


def test_gpu_aliases_resolve_and_default_gpu_is_t4() -> None:
    assert Cluster(name="c", machine_type="n1-standard-4", gpus_per_node=1, gpu_type="T4").gpu_type == "nvidia-tesla-t4"
    assert Cluster(name="c", machine_type="n1-standard-4", gpus_per_node=2).gpu_type == "nvidia-tesla-t4"
    assert (
        "comes 1, 2, 4 per node" in problems(name="c", machine_type="n1-standard-4", gpus_per_node=3)["gpus_per_node"]
    )


def test_gpu_type_without_gpus_is_an_error() -> None:
    assert "gpus_per_node is 0" in problems(name="c", machine_type="n1-standard-4", gpu_type="t4")["gpu_type"]


def test_autoscaling_range_defaults_and_rules() -> None:
    cluster = Cluster(name="c", machine_type="e2-standard-2", num_nodes=2, spot=True)
    assert (cluster.min_nodes, cluster.max_nodes, cluster.spot) == (0, 2, True)
    assert (
        "min_nodes <= num_nodes <= max_nodes"
        in problems(name="c", machine_type="e2-standard-2", num_nodes=3, min_nodes=4)["num_nodes"]
    )


def test_all_problems_reported_at_once() -> None:
    found = problems(name="Bad Name", machine_type="n1-standard-4", gpus_per_node=1, gpu_type="k80", location="mars")
    assert {"name", "gpu_type", "location"} <= set(found)


def test_unknown_machine_type_and_missing_shape() -> None:
    assert "not a GCE machine type" in problems(name="c", machine_type="x9-superfast")["machine_type"]
    assert "set machine_type" in problems(name="c")["machine_type"]
    assert "go together" in problems(name="c", cpus_per_node=4)["memory_per_node"]


def test_resolved_cluster_validates_again_unchanged() -> None:
    cluster = Cluster(name="c", cpus_per_node=4, memory_per_node=15, gpus_per_node=1, gpu_type="v100")
    assert Cluster.model_validate(cluster.model_dump(mode="json")) == cluster
