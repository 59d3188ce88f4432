"""Where GKE offers a GPU: the zones of a region that carry it, so ``tfcli init`` can default to one zone.

A zonal cluster costs the least: a regional one spreads every node pool over the region's zones (GKE's default is
three), so each pool's node count is multiplied by three, and GKE's free tier credits the management fee of one
zonal (or Autopilot) cluster per billing account, never a regional one. A zone, though, must offer the GPU the
cluster asks for, which not every zone does.

Source: Google Cloud, "GPU regions and zones availability"
(https://cloud.google.com/compute/docs/gpus/gpu-regions-zones), the rows of the regions below as that page listed
them when written (:data:`AS_OF`). The page itself could not be re-read from this project's machines (no network but
the package registries, and no stored copy of it); what could be checked agrees: T4 in us-east1-c and us-east1-d
(a `gcloud compute accelerator-types list` output of 2021 and GitLab's GPU-runner planning issue 16345). Check a row
with ``gcloud compute accelerator-types list --filter="name=nvidia-tesla-t4 AND zone~REGION"``. Zones gain and lose
GPUs: the table is a default's source, not a gate (a zone it does not list is still accepted).
"""

from __future__ import annotations

AS_OF = "2026-11-26"
SOURCE = "https://cloud.google.com/compute/docs/gpus/gpu-regions-zones"

DEFAULT_REGION = "us-central1"

# GKE accelerator name -> region -> its zones that offer it, in the order a default is taken from.
GPU_ZONES: dict[str, dict[str, tuple[str, ...]]] = {
    "nvidia-tesla-t4": {
        "us-central1": ("us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"),
        "us-east1": ("us-east1-c", "us-east1-d"),
        "us-west1": ("us-west1-a", "us-west1-b"),
        "europe-west4": ("europe-west4-a", "europe-west4-b", "europe-west4-c"),
        "asia-east1": ("asia-east1-a", "asia-east1-c"),
    },
}


def zones_offering(gpu_type: str, region: str) -> tuple[str, ...]:
    """The zones of ``region`` that offer ``gpu_type`` (GKE's name), in the table's order; () when it lists none."""
    return GPU_ZONES.get(gpu_type, {}).get(region, ())


def default_zone(gpu_type: str, region: str = DEFAULT_REGION) -> str:
    """The zone a new project defaults to: the first zone of ``region`` that offers ``gpu_type``.

    Raises KeyError when the table lists none there (a caller picking a default has a region that does)."""
    zones = zones_offering(gpu_type, region)
    if not zones:
        raise KeyError(f"no zone of {region} offers {gpu_type} in the bundled table ({SOURCE}, {AS_OF})")
    return zones[0]
