"""A Kubernetes API client for an experiment's cluster, from its stack's ``kubeconfig`` output.

The kubeconfig (``infra/cluster.py``) holds no credentials: it runs ``gke-gcloud-auth-plugin`` for a token from the
project's Application Default Credentials (with ``credentials: key-file``, that key, through
``GOOGLE_APPLICATION_CREDENTIALS`` given to the plugin). Only ``experiment logs`` and the cluster view of ``status``
and ``list`` import the ``kubernetes`` package, inside their functions (``tfcli --help`` stays fast).

Responses are read as the API's own JSON (``_preload_content=False``), so the code that explains them
(:mod:`tfcli.gke.pod_states`, :mod:`tfcli.gke.cost`) works on the same documents the tests record. An error
response is shown with the API's own sentence (its Status document's ``message``, e.g. ``container "trial" in pod
"x" is waiting to start: ContainerCreating``), not only its ``400 Bad Request``.

The kubernetes client (37.x) runs the auth plugin while it builds the client, and catches and only logs whatever goes
wrong there (a plugin that exits non-zero, prints no credential): the client is built without a token, and every call
is then a bare 401. So :func:`kube_for` checks that a token came, and says what the plugin said when none did.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from tfcli.project import ProjectDir
from trainer.kernel.errors import TfcliError

AUTH_PLUGIN = "gke-gcloud-auth-plugin"
AUTH_PLUGIN_INSTALL = (
    "install it with `gcloud components install gke-gcloud-auth-plugin` (or, where gcloud came from a system "
    "package, the google-cloud-cli-gke-gcloud-auth-plugin package), then run the command again"
)


def _kubeconfig(outputs: dict[str, Any], project: ProjectDir) -> dict[str, Any]:
    text = outputs.get("kubeconfig")
    if not text:
        raise TfcliError(
            "the experiment's stack has no kubeconfig output (it was deployed by an older tfcli)",
            hint="`tfcli experiment start -e NAME` updates the stack and adds it",
        )
    config: dict[str, Any] = yaml.safe_load(str(text))
    from tfcli.gke.stacks import key_file

    key = key_file(project)
    for user in config.get("users") or []:
        plugin = (user.get("user") or {}).get("exec")
        if not plugin:
            continue
        command = str(plugin.get("command", ""))
        if shutil.which(command) is None:
            raise TfcliError(
                f"{command} is not on PATH; it gives kubectl and tfcli their token for GKE clusters",
                hint=AUTH_PLUGIN_INSTALL if command == AUTH_PLUGIN else f"install {command}",
            )
        if key is not None:
            plugin["env"] = [*(plugin.get("env") or []), {"name": "GOOGLE_APPLICATION_CREDENTIALS", "value": str(key)}]
    return config


def api_message(body: object) -> str:
    """The ``message`` of the API's error response (a ``Status`` document), or the body itself when it is not one."""
    if isinstance(body, bytes):
        body = body.decode(errors="replace")
    if not isinstance(body, str) or not body.strip():
        return ""
    try:
        status = json.loads(body)
    except ValueError:
        return body.strip()[:500]
    if isinstance(status, dict) and status.get("message"):
        return str(status["message"])
    return ""


@dataclass
class Kube:
    """The API calls tfcli makes, each returning the API's JSON document."""

    api: Any  # kubernetes.client.ApiClient
    cluster: str

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        try:
            yield
        except ApiException as error:
            if error.status in (401, 403):
                said = api_message(error.body)
                raise TfcliError(
                    f"the cluster {self.cluster} refused to {what} ({error.status} {error.reason})"
                    + (f": {said}" if said and said != error.reason else ""),
                    hint="check your Google credentials (`gcloud auth application-default login`) and that the "
                    "account may read the cluster (roles/container.developer)",
                ) from None
            said = api_message(error.body)
            raise TfcliError(
                f"cannot {what} on the cluster {self.cluster}: {error.status} {error.reason}"
                + (f": {said}" if said else "")
            ) from None
        except (HTTPError, OSError) as error:
            raise TfcliError(f"cannot reach the cluster {self.cluster} to {what}: {error}") from None

    def _json(self, what: str, call: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        with self._errors(what):
            response = call(*args, _preload_content=False, **kwargs)
            data: dict[str, Any] = json.loads(response.data)
        return data

    def pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        from kubernetes import client

        core = client.CoreV1Api(self.api)
        found = self._json("list pods", core.list_namespaced_pod, namespace, label_selector=selector)
        return list(found.get("items") or [])

    def events(self, namespace: str) -> list[dict[str, Any]]:
        from kubernetes import client

        found = self._json("list events", client.CoreV1Api(self.api).list_namespaced_event, namespace)
        return list(found.get("items") or [])

    def jobs(self, namespace: str) -> list[dict[str, Any]]:
        from kubernetes import client

        found = self._json("list jobs", client.BatchV1Api(self.api).list_namespaced_job, namespace)
        return list(found.get("items") or [])

    def nodes(self) -> list[dict[str, Any]]:
        from kubernetes import client

        found = self._json("list nodes", client.CoreV1Api(self.api).list_node)
        return list(found.get("items") or [])

    def namespace(self, name: str) -> dict[str, Any]:
        from kubernetes import client

        return self._json(f"read namespace {name}", client.CoreV1Api(self.api).read_namespace, name)

    def log_chunks(
        self, namespace: str, pod: str, container: str, *, follow: bool, tail: int | None
    ) -> Iterator[bytes]:
        """The container's log as it arrives (to its end, or while it runs with ``follow``)."""
        from kubernetes import client

        core = client.CoreV1Api(self.api)
        options: dict[str, Any] = {"container": container, "follow": follow}
        if tail is not None:
            options["tail_lines"] = tail
        with self._errors(f"read the log of {pod}"):
            # with _preload_content=False the client returns the urllib3 response (typed as str)
            response: Any = core.read_namespaced_pod_log(pod, namespace, _preload_content=False, **options)
            try:
                yield from response.stream(4096, decode_content=True)
            finally:
                response.release_conn()


def kube_for(outputs: dict[str, Any], project: ProjectDir) -> Kube:
    """A client for the cluster of the stack with these outputs."""
    config = _kubeconfig(outputs, project)
    from kubernetes import config as kube_config

    cluster = str(outputs.get("clusterName") or "of the experiment")
    logged = _Logged()
    root = logging.getLogger()
    root.addHandler(logged)  # also keeps logging.error from configuring the root logger onto stderr
    try:
        api = kube_config.new_client_from_config_dict(config)
    except Exception as error:  # the loader's own errors (ConfigException)
        raise TfcliError(f"cannot use the kubeconfig of the cluster {cluster}: {error}") from None
    finally:
        root.removeHandler(logged)
    plugins = [str(user["user"]["exec"].get("command")) for user in config.get("users") or []
               if (user.get("user") or {}).get("exec")]  # fmt: skip
    configuration = api.configuration
    if plugins and not configuration.api_key.get("BearerToken") and not configuration.cert_file:
        said = "; ".join(logged.messages) or "it printed no token"
        raise TfcliError(
            f"{plugins[0]} gave no token for the cluster {cluster}: {said}",
            hint="check your Google credentials (`gcloud auth application-default login`, or the project's key "
            f"file), then run the command again; `{plugins[0]}` alone shows what it says",
        )
    return Kube(api, cluster)


class _Logged(logging.Handler):
    """The error lines the kubernetes client logs while it builds a client (instead of raising them)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
