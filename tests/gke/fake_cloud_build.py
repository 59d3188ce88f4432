"""A stand-in for the Cloud Build v1 REST API over real HTTP (nothing here can run a real Cloud Build).

Written from the API reference ("REST Resource: projects.builds", "Method: projects.builds.create"/"get") and the
API's discovery document, ``cloudbuild.v1.json`` as google-api-python-client ships it: every request is matched to a
method of the document (HTTP method and path template), its query parameters must be the method's or the API's
standard ones, and its body is checked against the request schema (``Build``) the way Google's JSON-to-proto parsing
answers: an unknown field is ``400 INVALID_ARGUMENT`` "Invalid JSON payload received. Unknown name ..."; a value of
the wrong type or outside an enum is ``400`` "Invalid value at ..."; a ``google-duration`` must read ``<seconds>s``.
Output-only fields (``readOnly``) sent by the client are ignored, as the API does, and recorded in ``problems``.

What it models:

- ``projects.builds.create`` answers a long-running Operation whose ``metadata.build`` (``@type``
  ``...BuildOperationMetadata``) is the Build in ``QUEUED``; each ``projects.builds.get`` moves it on: ``WORKING``,
  then its final status (``SUCCESS``, or what the test scripted: ``FAILURE``, ``TIMEOUT``, ``CANCELLED``);
- the source: ``storageSource`` is fetched from the GCS emulator (missing: ``FAILURE`` with failureInfo
  ``FETCH_SOURCE_FAILED``); the docker step's ``--file`` must be in the archive, else the step fails as docker does;
- ``images``: an image no step built (``--tag``) fails the push (``PUSH_IMAGE_NOT_FOUND``); a pushed image's digest,
  ``sha256:`` of the context and the build arguments, is in ``results.images[]`` (the same source is the same
  digest, as a reproducible build would give);
- the log: ``log-<id>.txt`` in ``logsBucket``, every line ``Step #N: ...`` as Cloud Build writes it, there from
  ``WORKING`` on (the first step's first line) and whole once the build ends; the steps' ``status`` is set only when
  the build ends ("step status is only updated on build completion", the reference's ``BuildStep.status``);
- errors a project can have: ``error(403, "SERVICE_DISABLED")`` answers the next create with Google's body for a
  disabled API (an ``ErrorInfo`` detail naming the service), ``IAM_PERMISSION_DENIED`` and ``RATE_LIMIT_EXCEEDED``
  (429) likewise.

What it cannot model: the real docker build and push (the digest is made up), the builder's time and the machine
type's speed, Cloud Logging, build triggers and regional pools, and the IAM of the Cloud Build service account.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import googleapiclient

DISCOVERY = Path(googleapiclient.__file__).parent / "discovery_cache" / "documents" / "cloudbuild.v1.json"
TYPES = {"string": str, "boolean": bool, "integer": int, "array": list, "object": dict, "number": (int, float)}
PREFIX = "type.googleapis.com/google.devtools.cloudbuild.v1"


class ApiError(Exception):
    def __init__(self, code: int, status: str, message: str, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.body = {"error": {"code": code, "message": message, "status": status, "details": details or []}}
        self.code = code


def invalid(message: str) -> ApiError:
    return ApiError(400, "INVALID_ARGUMENT", message)


class Discovery:
    """The methods and schemas of cloudbuild v1, and the checks of a request against them."""

    def __init__(self) -> None:
        self.doc = json.loads(DISCOVERY.read_text())
        self.methods: list[tuple[str, re.Pattern[str], dict[str, Any]]] = []
        self._collect(self.doc.get("resources", {}))

    def _collect(self, resources: dict[str, Any]) -> None:
        for resource in resources.values():
            for method in resource.get("methods", {}).values():
                pattern = re.sub(r"\{\+?(\w+)\}", r"(?P<\1>[^/]+)", method["path"])
                self.methods.append((method["httpMethod"], re.compile(f"^/{pattern}$"), method))
            self._collect(resource.get("resources", {}))

    def method(self, verb: str, path: str, query: dict[str, list[str]]) -> tuple[str, dict[str, str]]:
        for http, pattern, method in self.methods:
            if http == verb and (match := pattern.match(path)):
                allowed = set(method.get("parameters", {})) | set(self.doc.get("parameters", {}))
                unknown = sorted(set(query) - allowed)
                if unknown:
                    raise invalid(
                        f'Invalid JSON payload received. Unknown name "{unknown[0]}": Cannot bind query parameter.'
                    )
                return str(method["id"]), match.groupdict()
        raise ApiError(404, "NOT_FOUND", f"The requested URL {path} was not found on this server.")

    def check(self, value: Any, schema: dict[str, Any], where: str, ignored: list[str]) -> None:
        """``value`` against a schema (a ``$ref``, a type, an enum, a format), as the API's parser answers."""
        if "$ref" in schema:
            schema = self.doc["schemas"][schema["$ref"]]
        kind = schema.get("type")
        if kind == "object" and "properties" in schema:
            if not isinstance(value, dict):
                raise invalid(f"Invalid value at '{where}', expected an object")
            for key, item in value.items():
                if key not in schema["properties"]:
                    raise invalid(
                        f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field."
                    )
                prop = schema["properties"][key]
                if prop.get("readOnly"):
                    ignored.append(f"{where}.{key}")
                self.check(item, prop, f"{where}.{key}", ignored)
        elif kind == "object" and "additionalProperties" in schema:
            for key, item in (value or {}).items():
                self.check(item, schema["additionalProperties"], f"{where}[{key}]", ignored)
        elif kind == "array":
            if not isinstance(value, list):
                raise invalid(f"Invalid value at '{where}', expected a list")
            for index, item in enumerate(value):
                self.check(item, schema.get("items", {}), f"{where}[{index}]", ignored)
        elif kind in TYPES:
            wanted = TYPES[kind]
            if kind == "integer" and isinstance(value, str) and value.lstrip("-").isdigit():
                return  # int64 travels as a JSON string
            if not isinstance(value, wanted) or (kind != "boolean" and isinstance(value, bool)):
                raise invalid(f"Invalid value at '{where}' ({kind}), {json.dumps(value)}")
            if "enum" in schema and value not in schema["enum"]:
                raise invalid(f"Invalid value at '{where}', \"{value}\"")
            if schema.get("format") == "google-duration" and not re.fullmatch(r"\d+(\.\d{1,9})?s", value):
                raise invalid(f"Invalid value at '{where}' (type.googleapis.com/google.protobuf.Duration), \"{value}\"")


@dataclass
class Outcome:
    """How the next build ends: its status, the step that fails and that step's log lines."""

    status: str = "SUCCESS"
    step_log: list[str] = field(default_factory=list)


@dataclass
class FakeCloudBuild:
    """The API's state: builds by id, the requests seen, and what the test scripted."""

    storage: Any  # a google.cloud.storage.Client on the GCS emulator
    discovery: Discovery = field(default_factory=Discovery)
    builds: dict[str, dict[str, Any]] = field(default_factory=dict)
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # build id -> how it ends
    requests: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    scripted: list[Outcome] = field(default_factory=list)  # for the next creates, in order
    errors: list[ApiError] = field(default_factory=list)  # for the next creates, in order
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def created(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["method"] == "cloudbuild.projects.builds.create"]

    def fail_next(self, status: str = "FAILURE", step_log: list[str] | None = None) -> None:
        self.scripted.append(Outcome(status, step_log or ["error: the step failed"]))

    def error(self, code: int, reason: str, project: str = "my-project") -> None:
        """The next create answers an error as Google's APIs write it (google.rpc.Status with a
        ``google.rpc.ErrorInfo`` detail, the API Design Guide's "Errors"): a disabled API (``SERVICE_DISABLED``,
        the message that names the console page enabling it), a missing permission (``IAM_PERMISSION_DENIED``,
        the permission and resource in the metadata) or a used-up rate quota (``RATE_LIMIT_EXCEEDED``, 429)."""
        service = "cloudbuild.googleapis.com"
        permission = "cloudbuild.builds.create"
        messages = {
            "SERVICE_DISABLED": f"Cloud Build API has not been used in project {project} before or it is disabled. "
            f"Enable it by visiting https://console.developers.google.com/apis/api/{service}/overview?project="
            f"{project} then retry. If you enabled this API recently, wait a few minutes for the action to propagate "
            "to our systems and retry.",
            "IAM_PERMISSION_DENIED": f"Permission '{permission}' denied on resource 'projects/{project}' (or it may "
            "not exist).",
            "RATE_LIMIT_EXCEEDED": "Quota exceeded for quota metric 'Build and Operation Create requests' and limit "
            f"'Build and Operation Create requests per minute' of service '{service}' for consumer "
            f"'project_number:{project}'.",
        }
        metadata = {
            "SERVICE_DISABLED": {"service": service, "consumer": f"projects/{project}"},
            "IAM_PERMISSION_DENIED": {"permission": permission, "resource": f"projects/{project}"},
            "RATE_LIMIT_EXCEEDED": {"service": service, "consumer": f"projects/{project}",
                                    "quota_metric": f"{service}/create_requests"},
        }  # fmt: skip
        status = {403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED"}[code]
        domain = "iam.googleapis.com" if reason == "IAM_PERMISSION_DENIED" else "googleapis.com"
        detail = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": domain,
                  "metadata": metadata[reason]}  # fmt: skip
        self.errors.append(ApiError(code, status, messages[reason], [detail]))

    def handle(self, verb: str, url: str, body: Any) -> tuple[int, dict[str, Any]]:
        parts = urlsplit(url)
        with self.lock:
            try:
                method, params = self.discovery.method(verb, parts.path, parse_qs(parts.query))
                self.requests.append({"method": method, "params": params, "body": body})
                if method == "cloudbuild.projects.builds.create":
                    return 200, self.create(params["projectId"], body)
                if method == "cloudbuild.projects.builds.get":
                    return 200, self.get(params["projectId"], params["id"])
                raise ApiError(501, "UNIMPLEMENTED", f"the stand-in does not model {method}")
            except ApiError as error:
                return error.code, error.body

    def create(self, project: str, body: Any) -> dict[str, Any]:
        ignored: list[str] = []
        self.discovery.check(body, {"$ref": "Build"}, "build", ignored)
        self.problems += [f"output-only field sent: {name}" for name in ignored]
        if not body.get("steps"):
            raise invalid("invalid build: no build steps")
        if self.errors:
            raise self.errors.pop(0)
        number = len(self.builds) + 1
        build_id = f"{number:08x}-0000-4000-8000-{hashlib.sha256(str(number).encode()).hexdigest()[:12]}"
        console = f"https://console.cloud.google.com/cloud-build/builds/{build_id}?project={project}"
        build = {**body, "id": build_id, "projectId": project, "status": "QUEUED",
                 "createTime": "2026-01-01T00:00:00Z", "logUrl": console}  # fmt: skip
        self.builds[build_id] = build
        self.outcomes[build_id] = self.scripted.pop(0) if self.scripted else Outcome()
        name = base64.b64encode(build_id.encode()).decode()
        return {"name": f"operations/build/{project}/{name}",
                "metadata": {"@type": f"{PREFIX}.BuildOperationMetadata", "build": build}}  # fmt: skip

    def get(self, project: str, build_id: str) -> dict[str, Any]:
        build = self.builds.get(build_id)
        if build is None or build["projectId"] != project:
            raise ApiError(404, "NOT_FOUND", f'Build "{build_id}" not found')
        if build["status"] == "QUEUED":
            build["status"] = "WORKING"
            build["startTime"] = "2026-01-01T00:00:10Z"
            self.write_log(build, [f'starting build "{build["id"]}"', "", "FETCHSOURCE", "BUILD",
                                   "Step #0: Sending build context to Docker daemon"])  # fmt: skip
        elif build["status"] == "WORKING":
            self.finish(build)
        return build

    def finish(self, build: dict[str, Any]) -> None:
        """Run the build: fetch the source, check the steps and images, write the log, set the final status."""
        outcome = self.outcomes[build["id"]]
        log: list[str] = [f'starting build "{build["id"]}"', "", "FETCHSOURCE"]
        source = build.get("source", {}).get("storageSource", {})
        blob = self.storage.bucket(source.get("bucket", "-")).blob(source.get("object", "-"))
        try:
            archive = blob.download_as_bytes()
        except Exception:
            missing = f"ERROR: storage object gs://{source.get('bucket')}/{source.get('object')} not found"
            self.end(build, [*log, missing], "FAILURE", "FETCH_SOURCE_FAILED")
            return
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            names = set(tar.getnames())
        tags: set[str] = set()
        for index, step in enumerate(build["steps"]):
            args = step.get("args", [])
            step["status"] = "SUCCESS"
            dockerfile = args[args.index("--file") + 1] if "--file" in args else "Dockerfile"
            if dockerfile not in names:
                step["status"] = "FAILURE"
                log += [f"Step #{index}: unable to prepare context: unable to evaluate symlinks in Dockerfile path: "
                        f"lstat /workspace/{dockerfile}: no such file or directory"]  # fmt: skip
                self.end(build, log, "FAILURE", "USER_BUILD_STEP")
                return
            if outcome.status != "SUCCESS":
                step["status"] = outcome.status
                log += [f"Step #{index}: {line}" for line in outcome.step_log]
                self.end(build, log, outcome.status, "USER_BUILD_STEP" if outcome.status == "FAILURE" else None)
                return
            log += [f"Step #{index}: Successfully built", f"Step #{index}: Successfully tagged"]
            tags |= {args[i + 1] for i, arg in enumerate(args[:-1]) if arg in ("--tag", "-t")}
        results = []
        for image in build.get("images", []):
            if image not in tags:
                missing = f"ERROR: An image does not exist locally with the tag: {image}"
                self.end(build, [*log, missing], "FAILURE", "PUSH_IMAGE_NOT_FOUND")
                return
            args_text = json.dumps([s.get("args") for s in build["steps"]], sort_keys=True)
            digest = "sha256:" + hashlib.sha256(hashlib.sha256(archive).digest() + args_text.encode()).hexdigest()
            results.append({"name": image, "digest": digest})
            log.append(f"PUSH\nPushing {image}\n{image.rsplit(':', 1)[-1]}: digest: {digest} size: 4321")
        build["results"] = {"images": results}
        self.end(build, [*log, "DONE"], "SUCCESS", None)

    def end(self, build: dict[str, Any], log: list[str], status: str, failure: str | None) -> None:
        build["status"] = status
        build["finishTime"] = "2026-01-01T00:05:00Z"
        if failure:
            build["failureInfo"] = {"type": failure, "detail": log[-1]}
            build["statusDetail"] = {"TIMEOUT": "Build timeout", "CANCELLED": "Build was cancelled"}.get(
                status, "Build failed; check build logs for details"
            )
        self.write_log(build, log)

    def write_log(self, build: dict[str, Any], log: list[str]) -> None:
        """The log so far, as Cloud Build keeps ``log-<id>.txt`` in ``logsBucket`` while the build runs."""
        bucket = str(build.get("logsBucket", "")).removeprefix("gs://")
        if bucket:
            self.storage.bucket(bucket).blob(f"log-{build['id']}.txt").upload_from_string("\n".join(log) + "\n")


def handler_for(api: FakeCloudBuild) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, verb: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                code, answer = 400, invalid("Invalid JSON payload received.").body
            else:
                code, answer = api.handle(verb, self.path, body)
            data = json.dumps(answer).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, *args: Any) -> None:
            return None

    return Handler


def serve(storage: Any) -> Iterator[tuple[FakeCloudBuild, str]]:
    """The stand-in on a free local port, for a fixture: ``(api, "http://127.0.0.1:PORT")``."""
    api = FakeCloudBuild(storage)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(api))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
