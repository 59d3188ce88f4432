"""A sweep's default parallelism: the learner pool's nodes times the trials a node holds by GPUs *and* by CPU and
memory (the learner's requests plus the GCS FUSE sidecar's), so no trial waits Pending beside a free GPU."""

from __future__ import annotations

import pytest
from infra_testkit import experiment

from infra.sizing import default_parallelism, learner_pods_per_node, learner_resources, millicores
from trainer.kernel.spec import Experiment

# Room a node leaves to our pods, by hand from GKE's reservations (infra/sizing.py's table): n1-standard-8 is 8 vCPU,
# reserved 60 + 10 + 2 x 5 + 4 x 2.5 = 90m, less 400m of DaemonSets; a GPU node's taint keeps kube-system's
# Deployments off. e2-standard-16: 16 vCPU, reserved 60 + 10 + 10 + 12 x 2.5 = 110m, less 400m and 500m.
N1_STANDARD_8_GPU_ROOM = 8000 - 90 - 400  # 7510m
E2_STANDARD_16_ROOM = 16000 - 110 - 400 - 500  # 14990m
SIDECAR = 250  # the GCS FUSE sidecar's CPU request, per pod


def trial(machine_type: str, *, gpus: int, environments: int, nodes: int = 2) -> Experiment:
    cluster = {"name": "pool", "machine_type": machine_type, "num_nodes": nodes, "max_nodes": nodes}
    if gpus:
        cluster |= {"gpus_per_node": gpus, "gpu_type": "nvidia-tesla-t4"}
    mode = {"run_mode": "single", "num_workers": None} if environments == 1 else {"run_mode": "multi-threaded"}
    return experiment(
        "space-invaders-dqn", cluster=cluster, **mode, **({"num_workers": environments} if environments > 1 else {})
    )


def test_two_t4s_on_8_vcpus_hold_one_4_environment_trial_not_two() -> None:
    """5 cores (+ the sidecar's 250m) a trial: the second would stay Pending with its GPU free."""
    spec = trial("n1-standard-8", gpus=2, environments=4)
    assert millicores(learner_resources(spec)["requests"]["cpu"]) == 5000
    assert 2 * (5000 + SIDECAR) > N1_STANDARD_8_GPU_ROOM >= 5000 + SIDECAR
    assert learner_pods_per_node(spec) == 1
    assert default_parallelism([spec] * 10) == 2  # 2 nodes x 1


def test_two_t4s_on_8_vcpus_hold_two_2_environment_trials() -> None:
    """3 cores + 250m a trial: CPU allows 2, and so do the GPUs."""
    spec = trial("n1-standard-8", gpus=2, environments=2)
    assert 2 * (3000 + SIDECAR) <= N1_STANDARD_8_GPU_ROOM
    assert learner_pods_per_node(spec) == 2
    assert default_parallelism([spec] * 10) == 4


def test_gpus_still_bound_a_node_with_cores_to_spare() -> None:
    spec = trial("n1-standard-8", gpus=1, environments=1)  # 2 cores: 3 would fit by CPU, 1 GPU
    assert learner_pods_per_node(spec) == 1
    assert default_parallelism([spec] * 10) == 2


def test_a_cpu_only_node_counts_its_pods_with_the_fuse_sidecar() -> None:
    """e2-standard-16, single mode: 2 cores a learner + 250m: 6 fit (7 if the sidecar were forgotten)."""
    spec = trial("e2-standard-16", gpus=0, environments=1, nodes=1)
    assert millicores(learner_resources(spec)["requests"]["cpu"]) == 2000
    assert E2_STANDARD_16_ROOM // (2000 + SIDECAR) == 6 < E2_STANDARD_16_ROOM // 2000
    assert default_parallelism([spec] * 10) == 6
    assert default_parallelism([spec] * 4) == 4  # never more than the trials


@pytest.mark.parametrize("environments", [1, 2, 4, 8])
def test_what_a_node_holds_fits_its_room(environments: int) -> None:
    spec = trial("n1-standard-8", gpus=4, environments=environments)
    per_node = learner_pods_per_node(spec)
    assert per_node * (millicores(learner_resources(spec)["requests"]["cpu"]) + SIDECAR) <= N1_STANDARD_8_GPU_ROOM
