"""Current prices: with credentials, ``plan`` reads the Cloud Billing Catalog (``services.skus.list`` of Compute
Engine, through the stand-in ``tests/billing_catalog_standin.py``, which checks each request against the API's discovery
document) once a day per region, cached in the user's cache folder; offline, the bundled table with its date, and a
warning once it is older than 30 days."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from billing_catalog_standin import COMPUTE_ENGINE, FakeCatalog, sku

from infra import prices
from infra.billing_catalog import API_ROOT, CatalogError, book_from_skus, list_skus
from tfcli.gke.price_source import current_prices
from tfcli.project import Project

NOW = datetime(2026, 11, 26, 12, tzinfo=UTC)
SKUS = [
    sku("Nvidia Tesla T4 GPU running in Americas", "OnDemand", "h", 0.40),
    sku("Spot Preemptible Nvidia Tesla T4 GPU running in Americas", "Preemptible", "h", 0.11),
    sku("Commitment v1: Nvidia Tesla T4 GPU in Americas for 1 Year", "Commit1Yr", "h", 0.22),
    sku("Nvidia Tesla T4 GPU running in Belgium", "OnDemand", "h", 0.99, region="europe-west1"),
    sku("N1 Predefined Instance Core running in Americas", "OnDemand", "h", 0.0333, group="N1Standard"),
    sku("N1 Predefined Instance Ram running in Americas", "OnDemand", "GiBy.h", 0.0045, group="N1Standard"),
    sku("Spot Preemptible N1 Predefined Instance Core running in Americas", "Preemptible", "h", 0.007, group="N1"),
    sku("Spot Preemptible N1 Predefined Instance Ram running in Americas", "Preemptible", "GiBy.h", 0.0009, group="N1"),
]


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("TFCLI_CACHE_DIR")  # the user's default place, under XDG_CACHE_HOME
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    return tmp_path / "cache"


def with_key(tmp_path: Path) -> Project:
    return Project(name="lab", gcp_project="my-lab-123", credentials="key-file", key_file=str(tmp_path / "key.json"))


def test_the_catalogs_rates_replace_the_tables_page_after_page() -> None:
    catalog = FakeCatalog(SKUS, page_limit=3)
    book = book_from_skus(list_skus(catalog), region="us-central1", fetched_on="2026-11-26")
    assert len(catalog.requests) == 3  # 8 SKUs, 3 a page
    assert [params.get("pageToken") for _, params in catalog.requests] == [None, "page-3", "page-6"]
    assert book.gpus["nvidia-tesla-t4"] == pytest.approx((0.40, 0.11))  # not the commitment, not Belgium's
    on_demand, spot = book.machines["n1", False]
    assert (on_demand.vcpu, on_demand.memory_gib, spot.vcpu, spot.memory_gib) == pytest.approx(
        (0.0333, 0.0045, 0.007, 0.0009)
    )
    assert book.gpus["nvidia-l4"] == prices.GPU_RATES["nvidia-l4"]  # not in the catalog's answer: the table's
    assert book.machines["e2", False] == prices.MACHINE_RATES["e2", False]
    assert (book.as_of, book.region) == ("2026-11-26", "us-central1") and "Cloud Billing Catalog" in book.source
    assert prices.gpu_hourly("nvidia-tesla-t4", spot=True, book=book) == pytest.approx(0.11)


def test_the_stand_in_refuses_what_the_api_refuses() -> None:
    catalog = FakeCatalog(SKUS)
    url = f"{API_ROOT}{COMPUTE_ENGINE}/skus"
    assert catalog.get(url, params={"pageSize": 10}, timeout=5).status_code == 200
    assert catalog.get(url, params={"filter": "gpu"}, timeout=5).status_code == 400  # not a parameter of the method
    assert catalog.get(url, params={"pageSize": "ten"}, timeout=5).status_code == 400
    assert catalog.get(url, params={"pageToken": "forged"}, timeout=5).status_code == 400
    assert catalog.get(f"{API_ROOT}services/NOPE/skus", params={}, timeout=5).status_code == 404
    assert catalog.get(f"{API_ROOT}skus", params={}, timeout=5).status_code == 400
    with pytest.raises(CatalogError, match="HTTP 404"):
        list(list_skus(catalog, parent="services/NOPE"))


def test_with_credentials_plan_reads_the_catalog_once_a_day(tmp_path: Path, cache_home: Path) -> None:
    catalog = FakeCatalog(SKUS)
    used: list[Path] = []

    def session(credentials: Path) -> FakeCatalog:
        used.append(credentials)
        return catalog

    first = current_prices(with_key(tmp_path), tmp_path, "us-central1-a", now=NOW, session_for=session)
    assert used == [tmp_path / "key.json"] and first.notes == ()
    assert first.book.gpus["nvidia-tesla-t4"] == pytest.approx((0.40, 0.11))
    assert (cache_home / "tfcli" / "prices-us-central1.json").is_file()
    later = current_prices(
        with_key(tmp_path), tmp_path, "us-central1", now=NOW + timedelta(hours=23), session_for=session
    )
    assert len(catalog.requests) == 1 and later.book == first.book  # from the cache
    current_prices(with_key(tmp_path), tmp_path, "us-central1", now=NOW + timedelta(hours=25), session_for=session)
    assert len(catalog.requests) == 2  # a day old: read again


def test_offline_the_bundled_table_with_its_date_and_a_warning_once_old(tmp_path: Path) -> None:
    no_key = Project(name="lab")
    fresh = current_prices(no_key, tmp_path, "us-central1", now=NOW)
    assert fresh.book == prices.BUNDLED and fresh.notes == ()
    old = current_prices(no_key, tmp_path, "us-central1", now=datetime(2027, 1, 15, tzinfo=UTC))
    assert old.book == prices.BUNDLED
    assert old.notes == (
        "the bundled prices are 55 days old (of 2026-11-21): spot prices move daily; with GCP "
        "credentials `plan` reads current ones from the Cloud Billing Catalog",
    )


def test_a_catalog_that_fails_falls_back_to_the_table_saying_why(tmp_path: Path) -> None:
    broken = FakeCatalog(SKUS)
    broken.document = {**broken.document, "rootUrl": "https://elsewhere.invalid/"}  # every URL unknown: 400
    result = current_prices(with_key(tmp_path), tmp_path, "us-central1", now=NOW, session_for=lambda _: broken)
    assert result.book == prices.BUNDLED
    assert result.notes and result.notes[0].startswith("current prices not read (services.skus.list: HTTP 400")


def test_plan_shows_where_its_prices_come_from(lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_kit import invoke

    code, text, stderr = invoke("experiment", "plan", "-f", "cartpole-ppo")
    assert code == 0, stderr
    assert "list prices of 2026-11-21, from the bundled table (infra/prices.py)" in text
    key = lab / "key.json"
    current_prices(with_key(lab), lab, "us-central1", now=datetime.now(UTC), session_for=lambda _: FakeCatalog(SKUS))
    code, text, stderr = invoke("experiment", "plan", "-f", "cartpole-ppo")
    assert code == 0, stderr
    assert "from the Cloud Billing Catalog API (services.skus.list, us-central1)" in " ".join(text.split())
    assert not key.exists()  # read from the cache: no credentials needed within the day
