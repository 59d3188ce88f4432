"""A Kubernetes API server on 127.0.0.1 that speaks the few endpoints tfcli uses, as strictly as the real one.

Pods (filtered by ``labelSelector``), events, Jobs, nodes, a namespace, and a pod's log (``follow``, ``tailLines``,
``container``; an HTTP chunk per line, or pieces of ``log_piece`` bytes that cut lines and characters anywhere).
Like the real API server it answers 401 without the bearer token (which the fake ``gke-gcloud-auth-plugin`` hands
out), 404 for an unknown namespace or pod, 400 for a query parameter the endpoint does not take and for a log request
that names no container (or an unknown one) of a pod with several.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
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


def _matches(labels: dict[str, str], selector: str) -> bool:
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


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
        selector = query.get("labelSelector", "")
        if parts == ["api", "v1", "nodes"]:
            return self._list("NodeList", "v1", self.cluster.nodes, selector)
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) == 4:
            found = self.cluster.namespaces.get(parts[3])
            if found is None:
                return self._send(404, _status(404, "NotFound", f'namespaces "{parts[3]}" not found'))
            return self._send(200, {"kind": "Namespace", "apiVersion": "v1", "metadata": found["metadata"]})
        if "namespaces" in parts:
            return self._namespaced(parts, query, selector)
        return self._send(404, _status(404, "NotFound", "the server could not find the requested resource"))

    def _namespaced(self, parts: list[str], query: dict[str, str], selector: str) -> None:
        prefix = parts.index("namespaces")
        api, namespace, rest = parts[:prefix], parts[prefix + 1], parts[prefix + 2 :]
        found = self.cluster.namespaces.get(namespace)
        if found is None:
            return self._send(404, _status(404, "NotFound", f'namespaces "{namespace}" not found'))
        if api == ["api", "v1"] and rest == ["pods"]:
            return self._list("PodList", "v1", found["pods"], selector)
        if api == ["api", "v1"] and rest == ["events"]:
            return self._list("EventList", "v1", found["events"], selector)
        if api == ["apis", "batch", "v1"] and rest == ["jobs"]:
            return self._list("JobList", "batch/v1", found["jobs"], selector)
        if api == ["api", "v1"] and len(rest) == 3 and rest[0] == "pods" and rest[2] == "log":
            return self._log(found, rest[1], query)
        return self._send(404, _status(404, "NotFound", "the server could not find the requested resource"))

    def _list(self, kind: str, version: str, items: list[dict[str, Any]], selector: str) -> None:
        chosen = [item for item in items if _matches(item["metadata"].get("labels") or {}, selector)]
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
