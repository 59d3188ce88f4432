"""A stand-in for the Cloud Billing Catalog API's ``services.skus.list``, for the price source's tests (no network).

Written from the Cloud Billing Catalog v1 REST reference
(https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list and the ``Sku``, ``PricingInfo``,
``PricingExpression``, ``TierRate`` and ``Money`` resources it links) and checked against the API's own discovery
document, the ``cloudbilling.v1.json`` that google-api-python-client ships:

- every request must be a method of the document: its HTTP method, its URL (``rootUrl`` + ``path`` with ``parent``
  matching the parameter's ``pattern``), and only the method's query parameters, each of its declared type
  (``pageSize`` an int32); anything else is answered 400 ``INVALID_ARGUMENT``, as the API answers;
- an unknown ``parent`` is 404 ``NOT_FOUND``; a ``pageToken`` the server did not hand out is 400;
- answers page by ``pageSize`` (default 5000), with ``nextPageToken`` empty on the last page, and every key of every
  answer is one the document's schemas (``ListSkusResponse`` and what it references) define.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import googleapiclient

DISCOVERY = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / "cloudbilling.v1.json"
COMPUTE_ENGINE = "services/6F81-5844-456A"


def discovery() -> dict[str, Any]:
    return dict(json.loads(DISCOVERY.read_text(encoding="utf-8")))


def list_method() -> dict[str, Any]:
    return dict(discovery()["resources"]["services"]["resources"]["skus"]["methods"]["list"])


@dataclass
class Answer:
    """What ``requests.Response`` offers the client: the status and the JSON body."""

    status_code: int
    body: dict[str, Any]

    def json(self) -> dict[str, Any]:
        return self.body


def error(code: int, status: str, message: str) -> Answer:
    return Answer(code, {"error": {"code": code, "message": message, "status": status}})


def check_keys(value: Any, schema: Mapping[str, Any], schemas: Mapping[str, Any], where: str) -> None:
    """Every key of ``value`` is a property of ``schema`` (following ``$ref``s and arrays)."""
    if "$ref" in schema:
        schema = schemas[schema["$ref"]]
    if schema.get("type") == "array":
        for index, item in enumerate(value):
            check_keys(item, schema["items"], schemas, f"{where}[{index}]")
    elif schema.get("type") == "object" and "properties" in schema:
        for key, item in value.items():
            assert key in schema["properties"], f"{where}.{key}: not in the discovery document's {schema.get('id')}"
            check_keys(item, schema["properties"][key], schemas, f"{where}.{key}")


def sku(
    description: str, usage: str, unit: str, usd: float, *, region: str = "us-central1", group: str = "GPU"
) -> dict:
    """One ``Sku`` as the reference shapes it (``units`` a decimal string, ``nanos`` the rest)."""
    units = int(usd)
    return {
        "name": f"services/6F81-5844-456A/skus/{abs(hash((description, region))) % 10**12:012d}",
        "skuId": f"{abs(hash((description, region))) % 10**12:012d}",
        "description": description,
        "category": {
            "serviceDisplayName": "Compute Engine",
            "resourceFamily": "Compute",
            "resourceGroup": group,
            "usageType": usage,
        },
        "serviceRegions": [region],
        "pricingInfo": [
            {
                "effectiveTime": "2026-11-26T00:00:00Z",
                "pricingExpression": {
                    "usageUnit": unit,
                    "usageUnitDescription": "hour" if unit == "h" else "gibibyte hour",
                    "displayQuantity": 1,
                    "tieredRates": [
                        {
                            "startUsageAmount": 0,
                            "unitPrice": {
                                "currencyCode": "USD",
                                "units": str(units),
                                "nanos": round((usd - units) * 1e9),
                            },
                        }
                    ],
                },
                "currencyConversionRate": 1,
            }
        ],
        "serviceProviderName": "Google",
    }


@dataclass
class FakeCatalog:
    """A ``requests.Session``-like ``get`` serving ``skus`` of Compute Engine; ``requests`` records every call."""

    skus: list[dict[str, Any]]
    page_limit: int = 5000  # the server may answer fewer than pageSize (the reference: "Requested page size")
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    method: dict[str, Any] = field(default_factory=list_method)
    document: dict[str, Any] = field(default_factory=discovery)

    def get(self, url: str, *, params: Mapping[str, Any], timeout: float) -> Answer:
        self.requests.append((url, dict(params)))
        assert timeout > 0, "a request without a timeout can hang `plan` forever"
        if self.method["httpMethod"] != "GET":
            return error(405, "INVALID_ARGUMENT", "method")
        parent = self._parent(url)
        if parent is None:
            return error(400, "INVALID_ARGUMENT", f"no method of cloudbilling v1 at {url}")
        declared = self.method["parameters"]
        for name, value in params.items():
            spec = declared.get(name)
            if spec is None or spec["location"] != "query":
                return error(400, "INVALID_ARGUMENT", f"Invalid JSON payload received. Unknown name {name!r}")
            if spec["type"] == "integer" and not (isinstance(value, int) and -(2**31) <= value < 2**31):
                return error(400, "INVALID_ARGUMENT", f"Invalid value at {name!r} (TYPE_INT32), {value!r}")
        if parent != COMPUTE_ENGINE:
            return error(404, "NOT_FOUND", f"Service {parent} not found")
        size = min(int(params.get("pageSize") or 5000), self.page_limit)
        token = str(params.get("pageToken") or "")
        if token and not (token.startswith("page-") and token[5:].isdigit()):
            return error(400, "INVALID_ARGUMENT", "Invalid page token")
        start = int(token[5:]) if token else 0
        page = self.skus[start : start + size]
        following = start + size
        body = {"skus": page, "nextPageToken": f"page-{following}" if following < len(self.skus) else ""}
        schemas = self.document["schemas"]
        check_keys(body, {"$ref": self.method["response"]["$ref"]}, schemas, "ListSkusResponse")
        return Answer(200, body)

    def _parent(self, url: str) -> str | None:
        """``parent`` from ``rootUrl`` + ``path`` (``v1/{+parent}/skus``), if the URL is that and matches its
        pattern."""
        root = self.document["rootUrl"] + self.document["servicePath"]
        if not url.startswith(root) or urlsplit(url).query:
            return None
        pattern = re.escape(self.method["path"]).replace(re.escape("{+parent}"), "(?P<parent>.+)")
        match = re.fullmatch(pattern, url[len(root) :])
        if match is None:
            return None
        parent = match["parent"]
        return parent if re.match(self.method["parameters"]["parent"]["pattern"], parent) else None
