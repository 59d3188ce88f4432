"""The cost levers of a cluster's GPU pool: GPU sharing (several pods on one GPU) and the provisioning model.

GKE's GPU sharing (https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus and
https://cloud.google.com/kubernetes-engine/docs/how-to/nvidia-mps-gpus): a node pool's accelerator carries a
``gpu_sharing_config`` (``TIME_SHARING`` or ``MPS``, ``max_shared_clients_per_gpu`` 2 to 48); GKE labels its nodes
``cloud.google.com/gke-gpu-sharing-strategy`` (``time-sharing`` / ``mps``) and
``cloud.google.com/gke-max-shared-clients-per-gpu``, and each pod asks for ``nvidia.com/gpu: 1`` — one share. MPS
allows at most 48 clients per GPU; neither strategy isolates memory, so small models are the use.

Provisioning (https://cloud.google.com/kubernetes-engine/docs/concepts/dws): ``spot`` (cheapest, reclaimable),
``on-demand``, or ``flex-start`` (Dynamic Workload Scheduler: GPU nodes that wait for capacity, then run without
preemption for at most seven days, at a discount).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainer.kernel.spec.base import StrictModel

Provisioning = Literal["spot", "on-demand", "flex-start"]
MAX_SHARED_CLIENTS = 48  # GKE's limit for both strategies (max_shared_clients_per_gpu)
FLEX_START_MAX_DAYS = 7


class GpuSharing(StrictModel):
    """``gpu_sharing: {strategy: mps | time-sharing, clients_per_gpu: N}``: N pods share each GPU of the pool."""

    strategy: Literal["time-sharing", "mps"]
    clients_per_gpu: int = Field(ge=2, le=MAX_SHARED_CLIENTS, description="pods per physical GPU")

    @property
    def gke_strategy(self) -> str:
        """The API's enum value (``TIME_SHARING`` / ``MPS``)."""
        return self.strategy.replace("-", "_").upper()
