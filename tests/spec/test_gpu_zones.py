"""The bundled table of zones that offer a GPU: ``tfcli init``'s default zone comes from it."""

from __future__ import annotations

import pytest

from trainer.kernel.spec.cluster import DEFAULT_GPU_TYPE
from trainer.kernel.spec.gpu_zones import AS_OF, GPU_ZONES, SOURCE, default_zone, zones_offering
from trainer.kernel.spec.machines import GPU_BY_NAME


def test_the_table_names_its_source_and_date_and_only_gke_gpu_names_and_zones_of_their_region() -> None:
    assert SOURCE.startswith("https://cloud.google.com/") and len(AS_OF) == 10
    for gpu, regions in GPU_ZONES.items():
        assert GPU_BY_NAME[gpu].name == gpu
        for region, zones in regions.items():
            assert zones and all(zone.rsplit("-", 1)[0] == region and len(zone) == len(region) + 2 for zone in zones)


def test_the_default_zone_is_the_first_zone_of_the_region_offering_the_gpu() -> None:
    assert default_zone(DEFAULT_GPU_TYPE) == "us-central1-a"
    assert default_zone(DEFAULT_GPU_TYPE, "us-east1") == "us-east1-c"  # us-east1-b has no T4
    assert zones_offering("nvidia-tesla-t4", "mars-north1") == () == zones_offering("nvidia-l4", "us-central1")
    with pytest.raises(KeyError, match="no zone of mars-north1 offers nvidia-tesla-t4"):
        default_zone(DEFAULT_GPU_TYPE, "mars-north1")
