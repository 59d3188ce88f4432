"""Which prices ``plan`` and ``start`` use: the Cloud Billing Catalog's current ones when this machine has GCP
credentials (read at most once a day per region, cached in the user's cache folder), else the bundled table.

Credentials are only ever read from a file — the project's ``key_file`` (``credentials: key-file``), the file
``GOOGLE_APPLICATION_CREDENTIALS`` names, or gcloud's application-default file — never looked for on a metadata server,
so an offline machine answers at once. Any failure to read the catalog (no network, no permission) falls back to the
bundled table, with a note saying why.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from infra import naming, prices

if TYPE_CHECKING:
    from infra.billing_catalog import Session
    from tfcli.project import Project, ProjectDir
    from trainer.kernel.spec import Experiment

CACHE_FOR = timedelta(days=1)
ADC_FILE = Path("gcloud") / "application_default_credentials.json"


@dataclass(frozen=True)
class Prices:
    """The book an estimate uses and the notes to show with it (where it came from, how old, why not current)."""

    book: prices.PriceBook
    notes: tuple[str, ...] = ()


def cache_file(region: str) -> Path:
    """``$TFCLI_CACHE_DIR/prices-<region>.json``; without it ``$XDG_CACHE_HOME/tfcli/`` (``~/.cache`` without that;
    ``~/Library/Caches`` on macOS). tfcli's own variable lets the tests move tfcli's cache alone, not uv's or
    matplotlib's, which share ``$XDG_CACHE_HOME``."""
    import sys

    if own := os.environ.get("TFCLI_CACHE_DIR"):
        return Path(own) / f"prices-{region}.json"
    default = Path.home() / ("Library/Caches" if sys.platform == "darwin" else ".cache")
    return Path(os.environ.get("XDG_CACHE_HOME") or default) / "tfcli" / f"prices-{region}.json"


def credentials_file(settings: Project, root: Path) -> Path | None:
    """The credentials file this machine has for GCP, or None (see the module's docstring)."""
    if settings.credentials == "key-file" and settings.key_file:
        path = Path(settings.key_file).expanduser()
        return path if path.is_absolute() else root / path
    if named := os.environ.get("GOOGLE_APPLICATION_CREDENTIALS"):
        return Path(named)
    config = Path(os.environ.get("CLOUDSDK_CONFIG") or Path.home() / ".config" / "gcloud")
    adc = config / ADC_FILE.name
    return adc if adc.is_file() else None


def _read_cache(path: Path, now: datetime) -> prices.PriceBook | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        fetched = datetime.fromisoformat(data["fetched_at"])
        if now - fetched > CACHE_FOR:
            return None
        return prices.PriceBook(
            as_of=data["as_of"],
            source=data["source"],
            region=data["region"],
            machines={
                (family, bool(custom)): (prices.Rates(*on_demand), prices.Rates(*spot))
                for family, custom, on_demand, spot in data["machines"]
            },
            gpus={gpu: (float(a), float(b)) for gpu, (a, b) in data["gpus"].items()},
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no cache, an old one or a damaged one: read the catalog again


def _write_cache(path: Path, book: prices.PriceBook, now: datetime) -> None:
    data: dict[str, Any] = {
        "fetched_at": now.isoformat(),
        "as_of": book.as_of,
        "source": book.source,
        "region": book.region,
        "machines": [
            [family, custom, [od.vcpu, od.memory_gib], [sp.vcpu, sp.memory_gib]]
            for (family, custom), (od, sp) in book.machines.items()
        ],
        "gpus": {gpu: list(rates) for gpu, rates in book.gpus.items()},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data), encoding="utf-8")
    temporary.replace(path)  # whole or not at all


def _authorized_session(credentials: Path) -> Session:
    import google.auth
    from google.auth.transport.requests import AuthorizedSession

    from infra.billing_catalog import SCOPE

    loaded, _ = google.auth.load_credentials_from_file(str(credentials), scopes=[SCOPE])
    return AuthorizedSession(loaded)


def current_prices(
    settings: Project,
    root: Path,
    location: str,
    *,
    now: datetime | None = None,
    session_for: Callable[[Path], Session] = _authorized_session,
) -> Prices:
    """The catalog's prices for ``location``'s region (cached a day), else the bundled table with its notes."""
    from infra.billing_catalog import CatalogError, book_from_skus, list_skus

    now = now or datetime.now(UTC)
    region = naming.region_of(location)
    path = cache_file(region)
    if (cached := _read_cache(path, now)) is not None:
        return Prices(cached)
    bundled = prices.BUNDLED
    stale = bundled.staleness_note(now.date())
    credentials = credentials_file(settings, root)
    if credentials is None:
        return Prices(bundled, tuple(filter(None, [stale])))
    try:
        skus = list(list_skus(session_for(credentials)))
    except (CatalogError, OSError, ValueError) as error:
        return Prices(bundled, tuple(filter(None, [f"current prices not read ({error}); the bundled table", stale])))
    except Exception as error:  # google.auth's and requests' own errors: never fatal for an estimate
        note = f"current prices not read ({type(error).__name__}: {error}); the bundled table"
        return Prices(bundled, tuple(filter(None, [note, stale])))
    book = book_from_skus(skus, region=region, fetched_on=now.date().isoformat())
    _write_cache(path, book, now)
    return Prices(book)


def stack_prices(project: ProjectDir, config: dict[str, Any]) -> Prices:
    """The prices for a stack's location (its ``gcp:zone``, else ``gcp:region``, else the project's)."""
    location = config.get("gcp:zone") or config.get("gcp:region") or project.settings.location
    return current_prices(project.settings, project.root, str(location))


def fix_prices(project: ProjectDir, config: dict[str, Any], runs: list[Experiment]) -> None:
    """Write ``tfcli:prices`` into the stack config ``start`` deploys: the rates of the runs' pools as ``plan`` shows
    them now, so that ``max_cost`` is counted at the price the user saw (:mod:`infra.price_config`)."""
    from infra.price_config import book_config
    from infra.shapes import machine_shape
    from infra.sizing import CPU_POOL_MACHINE
    from trainer.kernel.config_keys import PRICES_KEY

    clusters = [run.cluster for run in runs if run.cluster is not None]
    machines = [CPU_POOL_MACHINE, *(cluster.machine_type for cluster in clusters if cluster.machine_type)]
    families = {shape.family for shape in map(machine_shape, machines) if shape is not None}
    gpus = {cluster.gpu_type for cluster in clusters if cluster.gpu_type}
    config[PRICES_KEY] = book_config(stack_prices(project, config).book, families=families, gpus=gpus)
