"""The fake API server selects as the real one does (issue 22: it understood only ``k=v`` and ignored
``fieldSelector``, so a reader that sent a wrong selector still got the right pods).

Expected answers are written from the Kubernetes documentation ("Labels and Selectors", "Field Selectors"), not from
the fake: ``!=`` and ``notin`` also match objects without the label, a field the server does not index is a 400,
and so is a malformed requirement.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from fake_kube import TOKEN, Cluster, serve


def pod(name: str, labels: dict[str, str], phase: str = "Running", node: str = "") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": labels},
        "spec": {"nodeName": node, "restartPolicy": "Never", "containers": [{"name": "c"}]},
        "status": {"phase": phase},
    }


PODS = [
    pod("learner", {"app": "tfcli", "role": "learner", "run": "a"}, node="n1"),
    pod("worker-0", {"app": "tfcli", "role": "env-worker", "run": "a"}, phase="Pending"),
    pod("worker-1", {"app": "tfcli", "role": "env-worker", "run": "b"}, node="n2"),
    pod("other", {"team": "x"}, phase="Succeeded", node="n1"),
]


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    cluster = Cluster()
    cluster.add_namespace("ns", pods=PODS)
    yield from serve(cluster)


def names(address: str, **query: str) -> list[str] | tuple[int, str]:
    url = f"http://{address}/api/v1/namespaces/ns/pods?{urllib.parse.urlencode(query)}"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return [item["metadata"]["name"] for item in json.loads(response.read())["items"]]
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())["message"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", ["learner", "worker-0", "worker-1", "other"]),
        ("app=tfcli", ["learner", "worker-0", "worker-1"]),
        ("app==tfcli,role=env-worker", ["worker-0", "worker-1"]),
        ("role!=learner", ["worker-0", "worker-1", "other"]),  # "other" has no role: != matches it
        ("role in (learner, env-worker),run notin (b)", ["learner", "worker-0"]),
        ("run notin (a)", ["worker-1", "other"]),
        ("team", ["other"]),
        ("!team", ["learner", "worker-0", "worker-1"]),
        ("app=tfcli,!run", []),
    ],
)
def test_label_selectors_follow_the_kubernetes_grammar(address: str, selector: str, expected: list[str]) -> None:
    assert names(address, labelSelector=selector) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("status.phase=Running", ["learner", "worker-1"]),
        ("status.phase!=Running", ["worker-0", "other"]),
        ("spec.nodeName=n1,status.phase==Running", ["learner"]),
        ("spec.nodeName=", ["worker-0"]),  # not scheduled yet
        ("metadata.name=worker-1", ["worker-1"]),
    ],
)
def test_field_selectors_filter_on_the_fields_the_server_indexes(
    address: str, selector: str, expected: list[str]
) -> None:
    assert names(address, fieldSelector=selector) == expected


def test_both_selectors_apply_together(address: str) -> None:
    assert names(address, labelSelector="app=tfcli", fieldSelector="spec.nodeName=n1") == ["learner"]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"fieldSelector": "metadata.labels.app=tfcli"}, "field label not supported: metadata.labels.app"),
        ({"fieldSelector": "status.startTime=x"}, "field label not supported: status.startTime"),
        ({"labelSelector": "role in learner"}, "unable to parse requirement"),
        ({"labelSelector": "!role=learner"}, "unable to parse requirement"),
        ({"labelSelector": "app=tf cli"}, "unable to parse requirement"),
        ({"labelSelector": "app=-bad-"}, "invalid label value"),
    ],
)
def test_what_the_server_refuses_is_a_400(address: str, query: dict[str, str], message: str) -> None:
    code, text = names(address, **query)  # type: ignore[misc]
    assert code == 400 and message in text
