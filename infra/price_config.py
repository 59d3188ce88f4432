"""``tfcli:prices``: the rates a run was started at, fixed into its stack config so that the learner's ``max_cost``
price (``TFCLI_HOURLY_PRICE``, :mod:`infra.run_price`) is the one ``plan`` showed the user — and stays it on every
later ``pulumi up`` of the stack, with or without tfcli — however the Cloud Billing Catalog's prices move meanwhile.

The value holds only what the run's pools use::

    {asOf: "2026-11-26", source: "...", region: us-central1,
     gpus: {nvidia-tesla-t4: [on-demand, spot]},
     machines: {n1: [[vcpu, memory_gib], [spot vcpu, spot memory_gib]], ...}}

Families and GPUs it does not name keep the bundled table's rates. Without the key: the bundled table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from infra import prices
from trainer.kernel.errors import InvalidInput


def book_config(book: prices.PriceBook, *, families: Iterable[str], gpus: Iterable[str]) -> dict[str, Any]:
    """The part of ``book`` a run with these machine families and GPU types uses, as the stack config's value."""
    return {
        "asOf": book.as_of,
        "source": book.source,
        "region": book.region,
        "gpus": {gpu: list(book.gpus[gpu]) for gpu in sorted(set(gpus)) if gpu in book.gpus},
        "machines": {
            family: [[od.vcpu, od.memory_gib], [sp.vcpu, sp.memory_gib]]
            for family in sorted(set(families))
            if (family, False) in book.machines
            for od, sp in [book.machines[family, False]]
        },
    }


def _rate_pair(value: Any, where: str) -> tuple[float, float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        raise InvalidInput(f"{where}: expected [on-demand, spot] dollars per hour (two numbers >= 0), got {value!r}")
    return float(value[0]), float(value[1])


def book_from_config(value: Mapping[str, Any] | None, where: str) -> prices.PriceBook:
    """The book a stack was started at; the bundled one without the key. Mistakes name ``where`` (file: key)."""
    if value is None:
        return prices.BUNDLED
    if not isinstance(value, Mapping):
        raise InvalidInput(f"{where}: expected a mapping (asOf, source, region, gpus, machines), got {value!r}")
    unknown = sorted(set(value) - {"asOf", "source", "region", "gpus", "machines"})
    if unknown:
        raise InvalidInput(f"{where}: unknown key(s) {', '.join(unknown)}")
    gpus = dict(prices.GPU_RATES)
    for gpu, rates in (value.get("gpus") or {}).items():
        gpus[str(gpu)] = _rate_pair(rates, f"{where}: gpus.{gpu}")
    machines = dict(prices.MACHINE_RATES)
    for family, pair in (value.get("machines") or {}).items():
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise InvalidInput(f"{where}: machines.{family}: expected [[vcpu, memory_gib], [spot vcpu, spot memory]]")
        on_demand = _rate_pair(pair[0], f"{where}: machines.{family}[0]")
        spot = _rate_pair(pair[1], f"{where}: machines.{family}[1]")
        machines[str(family), False] = (prices.Rates(*on_demand), prices.Rates(*spot))
    return prices.PriceBook(
        as_of=str(value.get("asOf") or prices.AS_OF),
        source=str(value.get("source") or prices.BUNDLED_SOURCE),
        region=str(value.get("region") or prices.REGION),
        machines=machines,
        gpus=gpus,
    )
