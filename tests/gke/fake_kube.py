"""A Kubernetes API server on 127.0.0.1 that speaks the few endpoints tfcli uses, as strictly as the real one.

Pods, events, Jobs and nodes (filtered by ``labelSelector`` and ``fieldSelector`` as the API server reads them: the
whole label grammar, only the fields it supports per kind, 400 for the rest), a namespace, and a pod's log
(``follow``, ``tailLines``, ``container``; an HTTP chunk per line, or pieces of ``log_piece`` bytes that cut
lines and characters anywhere).
Like the real API server it answers 401 without the bearer token (which the fake ``gke-gcloud-auth-plugin`` hands
out), 404 for an unknown namespace or pod, 400 for a query parameter the endpoint does not take and for a log request
that names no container (or an unknown one) of a pod with several.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "fake-gke-token"
LIST_PARAMETERS = {
    "labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "resourceVersionMatch", "watch",
    "allowWatchBookmarks", "timeoutSeconds", "pretty", "sendInitialEvents",
}  # fmt: skip
LOG_PARAMETERS = {
    "container", "follow", "previous", "sinceSeconds", "sinceTime", "timestamps", "tailLines", "limitBytes",
    "insecureSkipTLSVerifyBackend", "pretty",
}  # fmt: skip


@dataclass
class Cluster:
    """What the fake serves: namespaces with their pods, events and Jobs; nodes; pod logs (lines)."""

    namespaces: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # name -> {"metadata", "pods", "events", "jobs"}
    nodes: list[dict[str, Any]] = field(default_factory=list)
    logs: dict[str, list[str]] = field(default_factory=dict)  # pod name -> lines (with their newlines)
    log_piece: int = 0  # > 0: send logs in pieces of this many bytes, cutting lines and UTF-8 characters anywhere
    requests: list[str] = field(default_factory=list)

    def add_namespace(self, name: str, created: str = "2026-11-24T08:00:00Z", **lists: list[dict[str, Any]]) -> None:
        self.namespaces[name] = {
            "metadata": {"name": name, "creationTimestamp": created},
            **{kind: lists.get(kind, []) for kind in ("pods", "events", "jobs")},
        }


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}  # fmt: skip


_REQUIREMENT = re.compile(
    r"^\s*(?P<not>!)?\s*(?P<key>[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?)\s*"
    r"(?:(?P<op>==|!=|=|\s+in\s+|\s+notin\s+)\s*(?P<value>\([^()]*\)|[-A-Za-z0-9_.]*))?\s*$"
)
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
# The fields the API server selects on, per kind (its field-label conversion functions); any other is a 400.
FIELDS: dict[str, dict[str, Callable[[dict[str, Any]], Any]]] = {
    "PodList": {
        "metadata.name": lambda o: o["metadata"].get("name"),
        "metadata.namespace": lambda o: o["metadata"].get("namespace"),
        "spec.nodeName": lambda o: o.get("spec", {}).get("nodeName", ""),
        "spec.restartPolicy": lambda o: o.get("spec", {}).get("restartPolicy"),
        "spec.schedulerName": lambda o: o.get("spec", {}).get("schedulerName"),
        "spec.serviceAccountName": lambda o: o.get("spec", {}).get("serviceAccountName"),
        "status.phase": lambda o: o.get("status", {}).get("phase"),
        "status.podIP": lambda o: o.get("status", {}).get("podIP", ""),
        "status.nominatedNodeName": lambda o: o.get("status", {}).get("nominatedNodeName", ""),
    },
    "EventList": {
        "metadata.name": lambda o: o["metadata"].get("name"),
        "metadata.namespace": lambda o: o["metadata"].get("namespace"),
        **{
            f"involvedObject.{key}": partial(lambda key, o: o.get("involvedObject", {}).get(key, ""), key)
            for key in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
        },
        "reason": lambda o: o.get("reason", ""),
        "reportingComponent": lambda o: o.get("reportingComponent", ""),
        "source": lambda o: o.get("source", {}).get("component", ""),
        "type": lambda o: o.get("type", ""),
    },
    "JobList": {
        "metadata.name": lambda o: o["metadata"].get("name"),
        "metadata.namespace": lambda o: o["metadata"].get("namespace"),
        "status.successful": lambda o: str(o.get("status", {}).get("succeeded", 0)),
    },
    "NodeList": {
        "metadata.name": lambda o: o["metadata"].get("name"),
        "spec.unschedulable": lambda o: str(bool(o.get("spec", {}).get("unschedulable", False))).lower(),
    },
}


class BadSelector(ValueError):
    """What the API server answers 400 to."""


def _split(selector: str) -> list[str]:
    """Requirements split at the commas outside ``( )`` (``a in (x,y),b=c``)."""
    terms, depth, current = [], 0, ""
    for char in selector:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    return [*terms, current] if selector else []


@dataclass(frozen=True)
class Requirement:
    """One term of a selector: ``key`` (a label, or a field's value read by ``read``) against ``values``."""

    key: str
    op: str  # "exists" | "absent" | "in" | "notin"
    values: frozenset[str] = frozenset()

    def holds(self, value: str | None) -> bool:
        if self.op == "exists":
            return value is not None
        if self.op == "absent":
            return value is None
        if self.op == "in":
            return value in self.values
        return value not in self.values  # notin, and !=: an object without the label matches


def label_requirements(selector: str) -> list[Requirement]:
    """A ``labelSelector`` as the API server reads it: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``,
    ``k notin (a,b)``, ``k`` (exists), ``!k`` (does not exist). A malformed one raises :class:`BadSelector`."""
    requirements = []
    for term in _split(selector):
        found = _REQUIREMENT.match(term)
        if found is None or (found["not"] and found["op"]) or (found["op"] is None and found["value"]):
            raise BadSelector(f"unable to parse requirement: {term!r}")
        key, op, value = found["key"], (found["op"] or "").strip(), found["value"] or ""
        if op in ("in", "notin"):
            if not value.startswith("("):
                raise BadSelector(f"unable to parse requirement: {term!r}: found '{value}', expected: '('")
            values = frozenset(v.strip() for v in value[1:-1].split(","))
        else:
            values = frozenset({value})
        if any(not _VALUE.match(v) for v in values):
            raise BadSelector(f"invalid label value in {term!r}")
        kind = "absent" if found["not"] else "exists" if not op else "notin" if op in ("!=", "notin") else "in"
        requirements.append(Requirement(key, kind, values))
    return requirements


def field_requirements(kind: str, selector: str) -> list[Requirement]:
    """A ``fieldSelector`` (``f=v``, ``f==v``, ``f!=v``, comma-separated) over the fields the server supports for
    ``kind``; an unsupported field raises :class:`BadSelector` ("field label not supported")."""
    requirements = []
    for term in filter(None, selector.split(",")):
        found = re.match(r"^\s*([A-Za-z.]+)\s*(==|!=|=)\s*(.*?)\s*$", term)
        if found is None:
            raise BadSelector(f"invalid selector: '{selector}'; can't understand '{term}'")
        name, op, value = found.groups()
        if name not in FIELDS[kind]:
            raise BadSelector(f"field label not supported: {name}")
        requirements.append(Requirement(name, "notin" if op == "!=" else "in", frozenset({value})))
    return requirements


def selected(kind: str, item: dict[str, Any], labels: list[Requirement], fields: list[Requirement]) -> bool:
    """Whether ``item`` (of a ``kind`` list) meets every label and field requirement."""
    own = item["metadata"].get("labels") or {}
    return all(r.holds(own.get(r.key)) for r in labels) and all(r.holds(str(FIELDS[kind][r.key](item))) for r in fields)


class _Handler(BaseHTTPRequestHandler):
    cluster: Cluster
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {key: values[-1] for key, values in parse_qs(url.query, keep_blank_values=True).items()}
        self.cluster.requests.append(self.path)
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._send(401, _status(401, "Unauthorized", "Unauthorized"))
        parts = url.path.strip("/").split("/")
        allowed = LOG_PARAMETERS if parts[-1] == "log" else LIST_PARAMETERS
        if unknown := sorted(set(query) - allowed):
            return self._send(400, _status(400, "BadRequest", f"unknown query parameter(s): {', '.join(unknown)}"))
        if parts == ["api", "v1", "nodes"]:
            return self._list("NodeList", "v1", self.cluster.nodes, query)
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 4:
            found = self.cluster.namespaces.get(parts[3])
            if found is None:
                return self._send(404, _status(404, "NotFound", f'namespaces "{parts[3]}" not found'))
            return self._send(200, {"kind": "Namespace", "apiVersion": "v1", "metadata": found["metadata"]})
        if "namespaces" in parts:
            return self._namespaced(parts, query)
        return self._send(404, _status(404, "NotFound", "the server could not find the requested resource"))

    def _namespaced(self, parts: list[str], query: dict[str, str]) -> None:
        prefix = parts.index("namespaces")
        api, namespace, rest = parts[:prefix], parts[prefix + 1], parts[prefix + 2 :]
        found = self.cluster.namespaces.get(namespace)
        if found is None:
            return self._send(404, _status(404, "NotFound", f'namespaces "{namespace}" not found'))
        if api == ["api", "v1"] and rest == ["pods"]:
            return self._list("PodList", "v1", found["pods"], query)
        if api == ["api", "v1"] and rest == ["events"]:
            return self._list("EventList", "v1", found["events"], query)
        if api == ["apis", "batch", "v1"] and rest == ["jobs"]:
            return self._list("JobList", "batch/v1", found["jobs"], query)
        if api == ["api", "v1"] and len(rest) == 3 and rest[0] == "pods" and rest[2] == "log":
            return self._log(found, rest[1], query)
        return self._send(404, _status(404, "NotFound", "the server could not find the requested resource"))

    def _list(self, kind: str, version: str, items: list[dict[str, Any]], query: dict[str, str]) -> None:
        try:
            labels = label_requirements(query.get("labelSelector", ""))
            fields = field_requirements(kind, query.get("fieldSelector", ""))
        except BadSelector as error:
            return self._send(400, _status(400, "BadRequest", str(error)))
        chosen = [item for item in items if selected(kind, item, labels, fields)]
        self._send(200, {"kind": kind, "apiVersion": version, "metadata": {"resourceVersion": "1"}, "items": chosen})

    def _log(self, namespace: dict[str, Any], name: str, query: dict[str, str]) -> None:
        pod = next((p for p in namespace["pods"] if p["metadata"]["name"] == name), None)
        if pod is None:
            return self._send(404, _status(404, "NotFound", f'pods "{name}" not found'))
        names = [c["name"] for c in pod["spec"].get("containers", []) + pod["spec"].get("initContainers", [])]
        container = query.get("container")
        if container is None and len(names) > 1:
            message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
            return self._send(400, _status(400, "BadRequest", message))
        if container is not None and container not in names:
            return self._send(400, _status(400, "BadRequest", f"container {container} is not valid for pod {name}"))
        if pod["status"].get("phase") == "Pending":
            message = f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'
            return self._send(400, _status(400, "BadRequest", message))
        lines = self.cluster.logs.get(name, [])
        if "tailLines" in query:
            tail = int(query["tailLines"])
            lines = lines[len(lines) - tail :] if tail else []
        follow = query.get("follow") == "true"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pieces = [line.encode() for line in lines]
        if self.cluster.log_piece > 0:  # the log's bytes as the kubelet may hand them on: cut anywhere
            data, size = b"".join(pieces), self.cluster.log_piece
            pieces = [data[start : start + size] for start in range(0, len(data), size)]
        for data in pieces:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
            if follow:
                time.sleep(0.01)  # a running container's lines arrive one by one
        self.wfile.write(b"0\r\n\r\n")


def serve(cluster: Cluster) -> Iterator[str]:
    """Serve ``cluster`` on a free loopback port; yields the server's address (``127.0.0.1:PORT``)."""
    handler = type("Handler", (_Handler,), {"cluster": cluster})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
