"""Current list prices from the Cloud Billing Catalog API, as a :class:`infra.prices.PriceBook`.

The API (Cloud Billing Catalog v1 REST reference, https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list):
``GET v1/{parent=services/*}/skus`` with ``currencyCode``, ``pageSize`` and ``pageToken``; a ``ListSkusResponse``
holds ``skus`` and ``nextPageToken`` (empty on the last page). Each ``Sku`` has a ``description``, a ``category``
(``resourceFamily`` ``Compute``, ``resourceGroup`` such as ``GPU``, ``usageType`` ``OnDemand`` / ``Preemptible`` /
commitments), ``serviceRegions`` and ``pricingInfo``, whose ``pricingExpression`` gives the ``usageUnit`` (``h`` for
a vCPU or GPU hour, ``GiBy.h`` for memory) and ``tieredRates`` with a ``unitPrice`` ``Money`` (``units`` a decimal
string, ``nanos``). Compute Engine's SKUs are under ``services/6F81-5844-456A``.

What this reads: the GPUs of :data:`infra.prices.GPU_RATES` and the vCPU and memory rates of the predefined machine
families of :data:`infra.prices.MACHINE_RATES`, on-demand and spot (``Preemptible`` SKUs, described "Spot
Preemptible ..."), in one region. Whatever the catalog does not name that way keeps the bundled rate. The GKE cluster
fee, disks and flex-start are not read (not Compute Engine SKUs of this shape, or discounts): they stay the table's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from infra import prices

API_ROOT = "https://cloudbilling.googleapis.com/v1/"
COMPUTE_ENGINE = "services/6F81-5844-456A"
SCOPE = "https://www.googleapis.com/auth/cloud-billing.readonly"
PAGE_SIZE = 5000  # the API's default and what one page of Compute Engine's SKUs should hold
SPOT_PREFIX = "Spot Preemptible "
# GKE accelerator name -> the start of its GPU SKU's description ("Nvidia Tesla T4 GPU running in Americas").
GPU_SKUS = {
    "nvidia-tesla-t4": "Nvidia Tesla T4 GPU",
    "nvidia-tesla-p4": "Nvidia Tesla P4 GPU",
    "nvidia-tesla-v100": "Nvidia Tesla V100 GPU",
    "nvidia-tesla-p100": "Nvidia Tesla P100 GPU",
    "nvidia-l4": "Nvidia L4 GPU",
    "nvidia-tesla-a100": "Nvidia Tesla A100 GPU",
    "nvidia-a100-80gb": "Nvidia Tesla A100 80GB GPU",
    "nvidia-h100-80gb": "Nvidia H100 80GB GPU",
}
# Machine family -> the start of its predefined vCPU / memory SKUs' descriptions ("N1 Predefined Instance Core ...").
FAMILY_SKUS = {
    "n1": "N1 Predefined Instance",
    "e2": "E2 Instance",
    "n2": "N2 Instance",
    "n2d": "N2D AMD Instance",
    "c2": "Compute optimized",
    "c3": "C3 Instance",
    "g2": "G2 Instance",
    "a2": "A2 Instance",
    "a3": "A3 Instance",
}


class Response(Protocol):
    status_code: int

    def json(self) -> Any: ...


class Session(Protocol):
    """What is used of ``google.auth.transport.requests.AuthorizedSession`` (a ``requests.Session``)."""

    def get(self, url: str, *, params: Mapping[str, Any], timeout: float) -> Response: ...


class CatalogError(Exception):
    """The catalog answered with an error; the caller falls back to the bundled table."""


def list_skus(session: Session, *, parent: str = COMPUTE_ENGINE, timeout: float = 30.0) -> Iterator[dict[str, Any]]:
    """Every SKU of ``parent``, page after page (``services.skus.list``), priced in USD."""
    token = ""
    while True:
        params: dict[str, Any] = {"currencyCode": "USD", "pageSize": PAGE_SIZE}
        if token:
            params["pageToken"] = token
        response = session.get(f"{API_ROOT}{parent}/skus", params=params, timeout=timeout)
        body = response.json()
        if response.status_code != 200:
            message = body.get("error", {}).get("message", "") if isinstance(body, dict) else ""
            raise CatalogError(f"services.skus.list: HTTP {response.status_code} {message}".strip())
        yield from body.get("skus", [])
        token = body.get("nextPageToken", "")
        if not token:
            return


def unit_price(sku: Mapping[str, Any], unit: str) -> float | None:
    """The SKU's current USD price per ``unit`` (its newest pricing's last tier); None in another unit."""
    infos = sku.get("pricingInfo") or []
    if not infos:
        return None
    expression = infos[-1].get("pricingExpression", {})
    rates = expression.get("tieredRates") or []
    if expression.get("usageUnit") != unit or not rates:
        return None
    money = rates[-1].get("unitPrice", {})
    return int(money.get("units") or 0) + int(money.get("nanos") or 0) / 1e9


def _sku_rates(skus: Iterable[Mapping[str, Any]], region: str) -> dict[tuple[str, bool], float]:
    """(description without the spot prefix, spot) -> unit price, for the region's on-demand and spot Compute SKUs."""
    found: dict[tuple[str, bool], float] = {}
    for sku in skus:
        category = sku.get("category", {})
        usage = category.get("usageType")
        if category.get("resourceFamily") != "Compute" or usage not in ("OnDemand", "Preemptible"):
            continue
        if region not in (sku.get("serviceRegions") or []):
            continue
        description = str(sku.get("description", ""))
        base = description.removeprefix(SPOT_PREFIX).split(" running in ")[0]
        unit = "GiBy.h" if base.endswith(" Ram") else "h"
        if (price := unit_price(sku, unit)) is not None:
            found[base, usage == "Preemptible"] = price
    return found


def book_from_skus(skus: Iterable[Mapping[str, Any]], *, region: str, fetched_on: str) -> prices.PriceBook:
    """The bundled book with every rate the catalog names for ``region`` replaced by the catalog's."""
    found = _sku_rates(skus, region)
    gpus = dict(prices.GPU_RATES)
    for gpu, name in GPU_SKUS.items():
        on_demand, spot = found.get((name, False)), found.get((name, True))
        if on_demand is not None and spot is not None:
            gpus[gpu] = (on_demand, spot)
    machines = dict(prices.MACHINE_RATES)
    for family, name in FAMILY_SKUS.items():
        rates = [found.get((f"{name} {part}", spot)) for spot in (False, True) for part in ("Core", "Ram")]
        if all(rate is not None for rate in rates) and (family, False) in machines:
            core, ram, spot_core, spot_ram = (float(rate or 0.0) for rate in rates)
            machines[family, False] = (prices.Rates(core, ram), prices.Rates(spot_core, spot_ram))
    return prices.PriceBook(
        as_of=fetched_on,
        source=f"the Cloud Billing Catalog API (services.skus.list, {region})",
        region=region,
        machines=machines,
        gpus=gpus,
    )
