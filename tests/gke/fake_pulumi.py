"""A stand-in for the ``pulumi`` CLI at the Automation API's boundary (the real one is not installed here).

Put first on PATH (as ``pulumi``, see ``gke_testkit.FakePulumi``), it answers what ``pulumi.automation`` asks of a
LocalWorkspace: ``version``, ``stack select [--create]``, ``stack init``, ``config get`` (secrets "decrypted"),
``config set``/``set-all`` (written into ``stacks/Pulumi.<stack>.yaml`` as Pulumi does: plaintext values as strings,
secrets as ``{secure: ...}`` ciphertext), ``up`` and ``destroy``, ``stack output --json``, ``stack history --json``
and ``stack rm``.

The Jobs an ``up`` applies (rendered from the stack's config by infra's own code) pass the API server's admission as
tests/job_controller.py models it, and are kept in the state (``jobs``), where the Job controller stand-in reads what
was deployed. It is as strict as Pulumi 3.272 where tfcli could go wrong: flags a command does not have are rejected
(``unknown flag``); every command but ``stack init``/``stack select --create`` needs a stack that was initialised; a
stack with the passphrase secrets provider (the default of self-managed backends) gets an ``encryptionsalt`` at
``stack init`` and every command that encrypts or decrypts (init, secret config, ``config get`` of a secret, up,
destroy, outputs with secrets) needs ``PULUMI_CONFIG_PASSPHRASE``/``_FILE`` and the same passphrase. Engine events go
where the SDK asks: CLI versions above 3.205 stream them over gRPC (``--event-log tcp://127.0.0.1:PORT``, the SDK's
``pulumirpc.Events/StreamEvents`` server), older ones append JSON lines to the ``--event-log`` file.

Everything lives in ``$FAKE_PULUMI_STATE``: ``calls.jsonl`` (argv, cwd and the relevant environment of every call,
and the config keys of the stack file when ``stack init`` and ``up`` ran), ``state.json`` (stacks: outputs,
resources, history) and ``control.json`` (the version to report, failures to inject: ``{"fail": [{"command": "up",
"stack": "x", "stderr": "...", "stdout": "...", "diagnostic": "...", "times": 1}]}``, the results bucket of each
stack, and what "the trainer" writes to it when an ``up`` suspends its Jobs).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

VERSION = "v3.272.0"  # the SDK's own version; above 3.205 the Automation API takes engine events over gRPC
ENV_KEYS = (
    "PULUMI_BACKEND_URL",
    "PULUMI_CONFIG_PASSPHRASE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "PULUMI_AUTOMATION_API",
    "PULUMI_SKIP_UPDATE_CHECK",
)
STATE = Path(os.environ["FAKE_PULUMI_STATE"])
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.000Z"

# Flags of Pulumi 3.272's commands (True: takes a value). Cobra rejects any other with "unknown flag".
GLOBAL_FLAGS = {
    "--color": True, "--cwd": True, "-C": True, "--disable-integrity-checking": False, "--emoji": False, "-e": False,
    "--fully-qualify-stack-names": False, "-Q": False, "--logflow": False, "--logtostderr": False,
    "--memprofilerate": True, "--non-interactive": False, "--otel-traces": True, "--profiling": True,
    "--tracing": True, "--tracing-header": True, "--verbose": True, "-v": True,
}  # fmt: skip
_STACK = {"--stack": True, "-s": True}
_UPDATE = {
    **_STACK, "--yes": False, "-y": False, "--skip-preview": False, "-f": False, "--event-log": True,
    "--exec-kind": True, "--exec-agent": True, "--client": True, "--message": True, "-m": True, "--parallel": True,
    "-p": True, "--diff": False, "--debug": False, "-d": False, "--refresh": False, "-r": False, "--target": True,
    "-t": True, "--exclude": True, "--target-dependents": False, "--exclude-dependents": False,
    "--suppress-outputs": False, "--suppress-progress": False, "--suppress-permalink": False,
    "--continue-on-error": False, "--attach-debugger": False, "--config-file": True, "--run-program": True,
    "--json": False, "-j": False, "--show-config": False, "--show-reads": False, "--show-replacement-steps": False,
    "--show-sames": False, "--show-full-output": False, "--show-secrets": False, "--policy-pack": True,
    "--policy-pack-config": True, "--config": True, "-c": True, "--config-path": False,
}  # fmt: skip
COMMAND_FLAGS: dict[str, dict[str, bool]] = {
    "version": {},
    "stack select": {**_STACK, "--create": False, "-c": False, "--secrets-provider": True},
    "stack init": {**_STACK, "--secrets-provider": True, "--copy-config-from": True, "--no-select": False,
                   "--teams": True, "--remote-stack-config": False},
    "config set-all": {**_STACK, "--path": False, "--plaintext": True, "--secret": True, "--json": True,
                       "--config-file": True},
    "config get": {**_STACK, "--path": False, "--json": False, "-j": False, "--open": False, "--config-file": True},
    "config set": {**_STACK, "--path": False, "--plaintext": False, "--secret": False, "--config-file": True,
                   "--type": True},
    "up": {**_UPDATE, "--expect-no-changes": False, "--replace": True, "--plan": True, "--import-file": True},
    "destroy": {**_UPDATE, "--exclude-protected": False, "--remove": False, "--preview-only": False},
    "stack output": {**_STACK, "--json": False, "-j": False, "--shell": False, "--show-secrets": False},
    "stack history": {**_STACK, "--json": False, "-j": False, "--page-size": True, "--page": True,
                      "--show-secrets": False, "--full-dates": False},
    "stack rm": {**_STACK, "--yes": False, "-y": False, "--force": False, "-f": False, "--preserve-config": False,
                 "--remove-backups": False},
    "cancel": {**_STACK, "--yes": False, "-y": False},
}  # fmt: skip
SECRETS_PROVIDERS = ("default", "passphrase", "awskms://", "azurekeyvault://", "gcpkms://", "hashivault://")
NO_PASSPHRASE = (  # Pulumi 3.x, non-interactive, neither variable set (github.com/pulumi/pulumi/issues/11886)
    "error: getting secrets manager: passphrase must be set with PULUMI_CONFIG_PASSPHRASE or "
    "PULUMI_CONFIG_PASSPHRASE_FILE environment variables"
)
WRONG_PASSPHRASE = (
    "error: incorrect passphrase, please set PULUMI_CONFIG_PASSPHRASE to the correct passphrase or set "
    "PULUMI_CONFIG_PASSPHRASE_FILE to a file containing the passphrase"
)


def parse(args: list[str]) -> tuple[str, list[str], dict[str, list[str]]]:
    """(command, positional words after it, options) as cobra would see them; unknown flags end the process."""
    sep = "--" in args
    head, tail = (args[: args.index("--")], args[args.index("--") + 1 :]) if sep else (args, [])
    takes_value = {flag for table in (GLOBAL_FLAGS, *COMMAND_FLAGS.values()) for flag, value in table.items() if value}
    takes_value.discard("--json")  # a value only in `config set-all --json`
    words = []
    index = 0
    while index < len(head):
        arg = head[index]
        if arg.startswith("-"):
            index += 2 if ("=" not in arg and arg in takes_value) else 1
            continue
        words.append(arg)
        index += 1
    command = " ".join(words[:2]) if words[:1] in (["stack"], ["config"]) else (words[0] if words else "")
    if command not in COMMAND_FLAGS:
        fail(f"fake pulumi: unsupported command {args}", 2)
    table = {**GLOBAL_FLAGS, **COMMAND_FLAGS[command]}
    options: dict[str, list[str]] = {}
    positional: list[str] = []
    index = 0
    while index < len(head):
        arg = head[index]
        index += 1
        if not arg.startswith("-"):
            positional.append(arg)
            continue
        name, has_value, value = arg.partition("=")
        if name not in table:
            fail(f"error: unknown flag: {name}", 255)
        if table[name] and not has_value:
            if index >= len(head):
                fail(f"error: flag needs an argument: {name}", 255)
            value = head[index]
            index += 1
        options.setdefault(name, []).append(value if (table[name] or has_value) else "true")
    positional = positional[len(command.split()) :] + (tail if sep else [])
    return command, positional, options


def the_stack(options: dict[str, list[str]]) -> str | None:
    values = options.get("--stack") or options.get("-s")
    return values[-1] if values else None


def passphrase() -> str | None:
    if (value := os.environ.get("PULUMI_CONFIG_PASSPHRASE")) is not None:
        return value
    if path := os.environ.get("PULUMI_CONFIG_PASSPHRASE_FILE"):
        return Path(path).read_text().rstrip("\n")
    return None


def check_phrase(salt: str, phrase: str) -> str:
    return base64.b64encode(hashlib.sha256(f"{salt}:{phrase}".encode()).digest()[:12]).decode()


def unlock(stack: str, record: dict[str, Any]) -> None:
    """What Pulumi's passphrase secrets manager does before it encrypts or decrypts: needs the right passphrase."""
    if record.get("secrets_provider", "passphrase") not in ("passphrase", "default"):
        return
    document, _ = read_config(stack)
    phrase = passphrase()
    if phrase is None:
        fail(NO_PASSPHRASE)
    assert phrase is not None
    salt = document.get("encryptionsalt")
    if salt is None:  # (a stack file written without Pulumi's salt: Pulumi makes one)
        write_document(stack, {"encryptionsalt": new_salt(phrase)})
    elif salt.split(":")[-1] != check_phrase(salt.split(":")[1], phrase):
        fail(WRONG_PASSPHRASE)


def new_salt(phrase: str) -> str:
    salt = base64.b64encode(os.urandom(8)).decode()
    return f"v1:{salt}:v1:{check_phrase(salt, phrase)}"


def load(name: str, default: Any) -> Any:
    try:
        return json.loads((STATE / name).read_text())
    except FileNotFoundError:
        return default


def save(name: str, data: Any) -> None:
    (STATE / name).write_text(json.dumps(data, indent=2))


def fail(message: str, code: int = 255) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.exit(code)


def stack_file(stack: str) -> Path:
    if not Path("Pulumi.yaml").is_file():
        fail(f"error: no Pulumi.yaml project file found (searching upwards from {os.getcwd()}). If you have not "
             "created a project yet, use `pulumi new` to do so: no project file found")  # fmt: skip
    import yaml  # imported only by the commands that read YAML: every call starts a Python process

    settings = yaml.safe_load(Path("Pulumi.yaml").read_text())
    folder = Path((settings or {}).get("stackConfigDir", "."))
    return folder / f"Pulumi.{stack}.yaml"


def read_config(stack: str) -> tuple[dict[str, Any], dict[str, Any]]:
    import yaml

    path = stack_file(stack)
    document = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
    return document, dict(document.get("config") or {})


def write_document(stack: str, entries: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    """Set top-level entries (``encryptionsalt``, ``secretsprovider``, ...) and the config of the stack file."""
    import yaml

    path = stack_file(stack)
    document, current = read_config(stack)
    document = {**entries, **{key: value for key, value in document.items() if key not in entries}}
    if config is not None or current:
        document["config"] = config if config is not None else current
    text = (
        "".join(line + "\n" for line in path.read_text().splitlines() if line.startswith("#")) if path.is_file() else ""
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=120))


def write_config(stack: str, values: dict[str, tuple[str, bool]]) -> None:
    _, config = read_config(stack)
    state = load("state.json", {"stacks": {}})
    for key, (value, secret) in values.items():
        state.setdefault("secrets", {}).setdefault(stack, {})[key] = value if secret else None
        if secret:
            digest = base64.b64encode(hashlib.sha256(value.encode()).digest()).decode()
            config[key] = {"secure": f"v1:{digest}"}
        else:
            config[key] = value
    save("state.json", state)
    write_document(stack, {}, config)


def injected(command: str, stack: str | None) -> dict[str, Any] | None:
    control = load("control.json", {})
    for entry in control.get("fail", []):
        if entry.get("command") == command and entry.get("stack") in (None, stack) and entry.get("times", 1) > 0:
            entry["times"] = entry.get("times", 1) - 1
            save("control.json", control)
            return dict(entry)
    return None


# What infra/program.py declares, written out here (not asked of infra): tests/gke/test_fake_pulumi_program.py
# checks these against the real program run under Pulumi's mocks (infra.plan), so the fake's "N created" is the
# program's N. Names are the experiment's, sweep's or cluster's name plus the suffix.
CLUSTER_PARTS = [
    ("tfcli:infra:GkeCluster", ""),
    ("gcp:container/cluster:Cluster", "-cluster"),
    *[("gcp:projects/iAMMember:IAMMember", f"-nodes-{role}") for role in (
        "artifactregistry-reader", "logging-logwriter", "monitoring-metricwriter", "monitoring-viewer",
        "stackdriver-resourcemetadata-writer")],
    ("gcp:serviceaccount/account:Account", "-nodes"),
    ("tfcli:infra:NodePools", ""),
    ("gcp:container/nodePool:NodePool", "-cpu-pool"),
    ("gcp:container/nodePool:NodePool", "-learner-pool"),
]  # fmt: skip
SHARED_CLUSTER_PARTS = [("pulumi:pulumi:StackReference", "-cluster-stack")]
BUCKET_PARTS = [
    ("tfcli:infra:ResultsBucket", ""),
    ("gcp:serviceaccount/account:Account", "-writer"),
    ("gcp:storage/bucket:Bucket", "-bucket"),
    ("gcp:storage/bucketIAMMember:BucketIAMMember", "-writer-access"),
]


def workload_parts(sweep: bool) -> list[tuple[str, str]]:
    return [
        ("tfcli:infra:Workloads", ""),
        ("gcp:serviceaccount/iAMMember:IAMMember", "-workload-identity"),
        ("kubernetes:batch/v1:Job", "-job-trials" if sweep else "-job-learner"),
        ("kubernetes:core/v1:ConfigMap", "-configmap-sweep-trials" if sweep else "-configmap-experiment-spec"),
        ("kubernetes:core/v1:Namespace", "-namespace"),
        ("kubernetes:core/v1:ServiceAccount", "-serviceaccount-trainer"),
        ("pulumi:providers:kubernetes", "-k8s"),
    ]


def program_resources(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, name) of what the stack program declares for this config (the engine's own two are not in it)."""
    experiment = config.get("tfcli:experiment")
    sweep = config.get("tfcli:sweep")
    if experiment is None and sweep is None:
        name = mapping(config["tfcli:cluster"])["name"]
        parts = CLUSTER_PARTS
    else:
        name = mapping(sweep)["name"] if sweep is not None else mapping(experiment)["name"]
        cluster = SHARED_CLUSTER_PARTS if config.get("tfcli:sharedClusterStack") else CLUSTER_PARTS
        parts = cluster + BUCKET_PARTS + workload_parts(sweep is not None)
    return [(type_, f"{name}{suffix}") for type_, suffix in parts]


def resources_for(stack: str, config: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, name) of what an ``up`` reports: the engine's stack and default provider, then the program's."""
    return [("pulumi:pulumi:Stack", f"tfcli-{stack}"), ("pulumi:providers:gcp", "default_10_2_0"),
            *program_resources(config)]  # fmt: skip


def bucket_for(name: str, project: str) -> str:
    """The results bucket's name by infra/naming.py's rule written out again for the names tests use (short and
    without "google"), so that a change to the rule is caught instead of followed."""
    assert len(name) <= 48 and "google" not in name, f"the fake names buckets of short names only, not {name!r}"
    return f"tfcli-{name}-{hashlib.sha256(project.encode()).hexdigest()[:8]}"


def urn(stack: str, type_: str, name: str) -> str:
    return f"urn:pulumi:{stack}::tfcli::{type_}::{name}"


def mapping(value: Any) -> dict[str, Any]:
    return json.loads(value) if isinstance(value, str) else dict(value or {})


def outputs_for(stack: str, config: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

    project = str(config.get("gcp:project", ""))
    location = str(config.get("gcp:zone") or config.get("gcp:region") or "")
    if "tfcli:cluster" in config:
        cluster = mapping(config["tfcli:cluster"])
        return {
            "clusterName": cluster["name"],
            "endpoint": "203.0.113.10",
            "clusterCaCertificate": base64.b64encode(
                b"-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n"
            ).decode(),
            "project": project,
            "location": cluster.get("location") or location,
            "nodeServiceAccount": f"{cluster['name']}-nodes@{project}.iam.gserviceaccount.com",
            "nodePools": {"learner": "learner", "cpu": "cpu"},
            "gpuType": cluster.get("gpu_type", ""),
            "gpusPerNode": cluster.get("gpus_per_node", 0),
        }
    sweep = mapping(config["tfcli:sweep"]) if "tfcli:sweep" in config else None
    experiment = mapping(sweep["base"] if sweep is not None else config["tfcli:experiment"])
    name = sweep["name"] if sweep is not None else experiment["name"]
    shared = config.get("tfcli:sharedClusterStack")
    buckets = load("control.json", {}).get("buckets", {})
    bucket = buckets.get(stack) or bucket_for(name, project)
    # The program's image outputs (read by nothing in tfcli): the -cpu variant, right for the CPU learners tests use.
    region = location.rsplit("-", 1)[0] if location.count("-") == 2 else location
    image = f"{region}-docker.pkg.dev/{project}/tfcli/trainer:{version('tfcli')}-cpu"
    outputs = {
        "clusterName": shared or name,
        "clusterLocation": (experiment.get("cluster") or {}).get("location") or location,
        "namespace": f"tfcli-{name}",
        "jobs": ["learner-0123456789"],  # named learner-<digest of the spec>, as infra/workloads.py names them
        "bucket": bucket,
        "resultsUrl": f"gs://{bucket}/{name}/",
        "suspended": str(config.get("tfcli:suspend", False)).lower() == "true",
        "writerServiceAccount": f"{name}-results@{project}.iam.gserviceaccount.com",
        "image": image,
    }
    if sweep is None:
        outputs.update({"experiment": name, "runMode": experiment.get("run_mode", "single"),
                        "workerImage": image})  # fmt: skip
    else:  # infra/sweep_program.py: its trials (NAME-0 ..) and the Indexed Job's parallelism, as the program reads them
        from infra.sweep_config import sweep_settings_from_config

        settings = sweep_settings_from_config(config, stack=stack)
        trials = [trial.name for trial in settings.trials]
        outputs.update({"sweep": name, "trials": trials, "parallelism": min(settings.parallelism, len(trials)),
                        "jobs": ["trials-0123456789"]})  # fmt: skip
    if shared:
        outputs["sharedClusterStack"] = shared
    outputs.update(load("control.json", {}).get("extra_outputs", {}).get(stack, {}))  # e.g. a kubeconfig
    return outputs


def admit_jobs(
    stack: str, config: dict[str, Any], applied: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]], str | None]:
    """What the API server does with the Jobs an ``up`` applies, rendered from the stack's config by infra's own
    code: ``ValidateJobSpec`` for a new name, ``ValidateJobSpecUpdate`` for a Job that keeps its name (only its
    mutable fields may change). Returns the Jobs now deployed and the ConfigMaps' data applied with them (a sweep's
    trial specs, which tests/gke/played_sweep.py mounts for its trainer pods), or the error the API server answers
    (422)."""
    root = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(root), str(root / "tests")]
    from job_controller import Invalid, validate, validate_update

    if "tfcli:sweep" in config:
        from infra.sweep_config import sweep_settings_from_config
        from infra.sweep_program import sweep_objects

        objects = sweep_objects(sweep_settings_from_config(config, stack=stack))
    elif "tfcli:experiment" in config:
        import yaml

        from infra.manifests import render_stack_file

        objects = list(yaml.safe_load_all(render_stack_file(stack_file(stack), token="fake-token")))
    else:
        return [], {}, None
    jobs = [obj for obj in objects if obj["kind"] == "Job"]
    config_maps = {obj["metadata"]["name"]: dict(obj["data"]) for obj in objects if obj["kind"] == "ConfigMap"}
    before = {job["metadata"]["name"]: job for job in applied}
    for job in jobs:
        try:
            if job["metadata"]["name"] in before:
                validate_update(before[job["metadata"]["name"]], job)
            else:
                validate(job)
        except Invalid as error:
            return applied, {}, str(error)
    return jobs, config_maps, None


def encode_event(line: str) -> bytes:
    """``pulumirpc.EventRequest{event: line}`` in protobuf's wire format (field 1, length-delimited)."""
    data = line.encode()
    size, prefix = len(data), bytearray()
    while True:
        byte, size = size & 0x7F, size >> 7
        prefix.append(byte | (0x80 if size else 0))
        if not size:
            return b"\x0a" + bytes(prefix) + data


class EventLog:
    """Engine events, one JSON object each, to where ``--event-log`` says: a file, or the SDK's gRPC server."""

    def __init__(self, target: str | None) -> None:
        self.target = target
        self.sequence = 0
        self.queue: Any = None
        self.problem: BaseException | None = None
        if target and target.startswith("tcp://"):
            import queue
            import threading

            import grpc

            self.queue = queue.Queue()
            channel = grpc.insecure_channel(target.removeprefix("tcp://"))
            stream = channel.stream_unary(
                "/pulumirpc.Events/StreamEvents", request_serializer=encode_event, response_deserializer=bytes
            )

            def send() -> None:
                try:
                    stream(iter(self.queue.get, None), timeout=60)
                except Exception as error:  # reported by close()
                    self.problem = error
                finally:
                    channel.close()

            self.thread = threading.Thread(target=send)
            self.thread.start()

    def emit(self, **event: Any) -> None:
        if not self.target:
            return
        self.sequence += 1
        line = json.dumps({"sequence": self.sequence, "timestamp": int(time.time()), **event})
        if self.queue is not None:
            self.queue.put(line)
            return
        with open(self.target, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def close(self) -> None:
        if self.queue is not None:
            self.queue.put(None)
            self.thread.join()
            self.queue = None
            if self.problem is not None:
                fail(f"error: could not send engine events to {self.target}: {self.problem}")

    def step(self, stack: str, op: str, type_: str, name: str, *, id_: str = "") -> None:
        """A resource step as Pulumi 3.272 reports it (``resourcePreEvent`` then ``resOutputsEvent``)."""
        state = {"type": type_, "urn": urn(stack, type_, name), "id": id_, "parent": "", "provider": "",
                 "inputs": {}, "outputs": {}}  # fmt: skip
        metadata = {
            "op": op,
            "urn": urn(stack, type_, name),
            "type": type_,
            "old": state if op != "create" else None,
            "new": state if op != "delete" else None,
            "detailedDiff": None,
            "provider": "" if type_.startswith("pulumi:") else urn(stack, "pulumi:providers:gcp", "default_10_2_0"),
        }
        self.emit(resourcePreEvent={"metadata": metadata})
        self.emit(resOutputsEvent={"metadata": metadata})


def play_the_trainer(stack: str, outputs: dict[str, Any]) -> None:
    """What the trainer does when its Job is suspended: checkpoint and write result.json (``control.json``'s
    ``on_suspend: {stack: {object: text}}``), into the bucket on the GCS emulator the tests run."""
    files = load("control.json", {}).get("on_suspend", {}).get(stack)
    if not files:
        return
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    bucket = storage.Client(project="test", credentials=AnonymousCredentials()).bucket(outputs["bucket"])
    prefix = outputs.get("experiment") or outputs["sweep"]  # a sweep's trials write <sweep>/<trial>/...
    for name, text in files.items():
        bucket.blob(f"{prefix}/{name}").upload_from_string(text)


def history_entry(kind: str, result: str, changes: dict[str, int], number: int) -> dict[str, Any]:
    now = time.strftime(TIME_FORMAT, time.gmtime())
    return {
        "version": number,
        "kind": kind,
        "startTime": now,
        "endTime": now,
        "message": "",
        "environment": {"exec.kind": "auto.local"},
        "config": {},
        "result": result,
        "resourceChanges": changes,
    }


def operation(kind: str, stack: str, options: dict[str, list[str]], state: dict[str, Any]) -> None:
    """``up`` or ``destroy``."""
    record = state["stacks"][stack]
    if "--yes" not in options and "-y" not in options:
        fail("error: --yes or --skip-preview must be passed in to proceed when running in non-interactive mode")
    unlock(stack, record)
    log = EventLog((options.get("--event-log") or [None])[-1])
    _, config = read_config(stack)
    log.emit(preludeEvent={"config": {key: str(value) for key, value in config.items()}})
    download = {"type": "plugin-download", "id": "gcp", "message": "gcp", "received": 1, "total": 1, "done": True}
    log.emit(progressEvent=download)  # a kind of event the SDK does not model: it must pass unharmed
    problem = injected(kind, stack)
    jobs: list[dict[str, Any]] = []
    config_maps: dict[str, dict[str, str]] = {}
    if problem is None and kind == "up":
        jobs, config_maps, refused = admit_jobs(stack, config, record.get("jobs", []))
        if refused is not None:  # as pulumi-kubernetes reports the API server's 422
            problem = {"stderr": "error: update failed", "diagnostic": f"resource job failed: {refused}"}
    if problem is not None:
        if diagnostic := problem.get("diagnostic"):
            cluster = urn(stack, "gcp:container/cluster:Cluster", f"{stack}-cluster")
            log.emit(diagnosticEvent={"urn": cluster, "prefix": "error: ", "message": diagnostic + "\n",
                                      "color": "never", "severity": "error"})  # fmt: skip
            failed = {"op": "create", "urn": cluster, "type": "gcp:container/cluster:Cluster", "old": None,
                      "new": None, "detailedDiff": None, "provider": ""}  # fmt: skip
            log.emit(resOpFailedEvent={"metadata": failed, "status": 1, "steps": 1})
        log.emit(summaryEvent={"maybeCorrupt": False, "durationSeconds": 1, "resourceChanges": {},
                               "PolicyPacks": {}, "isPreview": False})  # fmt: skip
        log.emit(cancelEvent={})
        log.close()
        record["history"].insert(0, history_entry(kind if kind == "destroy" else "update", "failed", {}, 0))
        save("state.json", state)
        sys.stdout.write(problem.get("stdout", ""))
        fail(problem.get("stderr", "error: update failed"), int(problem.get("code", 255)))
    if kind == "up":
        previous = {tuple(item) for item in record.get("resources", [])}
        resources = resources_for(stack, config)
        changes: dict[str, int] = {}
        for type_, name in resources:
            op = "same" if (type_, name) in previous else "create"
            if type_ == "kubernetes:batch/v1:Job" and (type_, name) in previous:
                now = outputs_for(stack, config)
                changed = any(record["outputs"].get(key) != now.get(key) for key in ("suspended", "parallelism"))
                op = "update" if changed else op
            changes[op] = changes.get(op, 0) + 1
            log.step(stack, op, type_, name)
        record["resources"] = [list(item) for item in resources]
        record["outputs"] = outputs_for(stack, config)
        record["jobs"] = jobs
        record["config_maps"] = config_maps
    else:
        changes = {"delete": len(record.get("resources", []))}
        for type_, name in reversed([tuple(item) for item in record.get("resources", [])]):
            log.step(stack, "delete", type_, name)
        record["resources"] = []
        record["outputs"] = {}
    if kind == "up" and record["outputs"].get("suspended"):
        play_the_trainer(stack, record["outputs"])
    log.emit(summaryEvent={"maybeCorrupt": False, "durationSeconds": 1, "resourceChanges": changes,
                           "PolicyPacks": {}, "isPreview": False})  # fmt: skip
    log.emit(cancelEvent={})
    log.close()
    record["history"].insert(0, history_entry("update" if kind == "up" else "destroy", "succeeded", changes, 0))
    for number, entry in enumerate(reversed(record["history"]), start=1):
        entry["version"] = number
    save("state.json", state)
    sys.stdout.write(f"{'Updating' if kind == 'up' else 'Destroying'} ({stack}):\nResources:\n    {changes}\n")


def main(argv: list[str]) -> None:
    args = [arg for arg in argv if arg != "--non-interactive"]
    command, words, options = parse(argv)
    stack = the_stack(options)
    named = words[0] if command in ("stack init", "stack rm") and words else stack
    entry: dict[str, Any] = {"argv": args, "cwd": os.getcwd()}
    entry["env"] = {key: os.environ[key] for key in ENV_KEYS if key in os.environ}
    if command in ("stack init", "up") and named:  # what the stack file held when Pulumi was asked
        entry["config_keys"] = sorted(read_config(named)[1])
    with open(STATE / "calls.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")
    if command == "version":
        print(load("control.json", {}).get("version", VERSION))
        return
    state = load("state.json", {"stacks": {}})
    if command not in ("up", "destroy") and (problem := injected(command, named)) is not None:
        sys.stdout.write(problem.get("stdout", ""))
        fail(problem.get("stderr", "error: failed"), int(problem.get("code", 255)))
    if command in ("stack init", "stack select") or (command == "stack rm" and not named):
        pass
    elif named is None:
        fail("error: no stack selected; please use `pulumi stack select` to choose one")  # tfcli always names it
    elif named not in state["stacks"]:
        fail(f"error: no stack named '{named}' found")
    record = state["stacks"].get(named or "")
    if command in ("stack select", "stack init"):
        name = words[0] if command == "stack init" else stack
        if command == "stack init" and (stack is None) == (not words):
            fail("error: only one of --stack or argument stack name may be specified")
        name = name or stack
        assert name is not None
        if name in state["stacks"]:
            if command == "stack init":
                fail(f"error: stack '{name}' already exists")
            return
        if command == "stack select" and "--create" not in options and "-c" not in options:
            fail(f"error: no stack named '{name}' found")
        provider = (options.get("--secrets-provider") or ["passphrase"])[-1]
        if not provider.startswith(SECRETS_PROVIDERS):
            fail(f"error: unknown secrets provider type '{provider}'")
        record = {"outputs": {}, "resources": [], "history": [], "secrets_provider": provider}
        if provider in ("passphrase", "default"):
            unlock(name, record)  # the salt is made (or an existing one checked) with the passphrase
        else:
            write_document(name, {"secretsprovider": provider, "encryptedkey": "ZmFrZS1rZXk="})
        state = load("state.json", {"stacks": {}})
        state["stacks"][name] = record
        save("state.json", state)
    elif command == "config set-all":
        assert stack is not None and record is not None
        if "--json" in options:
            fail("fake pulumi: config set-all --json is not modelled", 2)
        values: dict[str, tuple[str, bool]] = {}
        for flag in ("--plaintext", "--secret"):
            for item in options.get(flag, []):
                key, equals, value = item.partition("=")
                if not equals:
                    fail(f"error: invalid key-value pair: {item}")
                values[key] = (value, flag == "--secret")
        if any(secret for _, secret in values.values()):
            unlock(stack, record)
        write_config(stack, values)
    elif command == "config get":
        assert stack is not None and record is not None
        if len(words) != 1:
            fail(f"error: accepts 1 arg(s), received {len(words)}")
        key = words[0]
        _, config = read_config(stack)
        if key not in config:
            fail(f"error: configuration key '{key}' not found for stack '{stack}'")
        secret = isinstance(config[key], dict) and "secure" in config[key]
        if secret:
            unlock(stack, record)
        value = state.get("secrets", {}).get(stack, {}).get(key) if secret else config[key]  # "decrypted"
        print(json.dumps({"value": value, "secret": secret}) if "--json" in options else value)
    elif command == "config set":
        assert stack is not None and record is not None
        if len(words) == 1 and not sys.stdin.isatty():  # as Pulumi: a value not on the command line is read from a
            value = sys.stdin.read().removesuffix("\n").removesuffix("\r")  # piped stdin, its last newline dropped
        elif len(words) == 2:
            value = words[1]
        else:
            fail(f"error: accepts between 1 and 2 arg(s), received {len(words)}")
        if "--secret" in options:
            unlock(stack, record)
        write_config(stack, {words[0]: (value, "--secret" in options)})
    elif command in ("up", "destroy"):
        assert stack is not None
        operation(command, stack, options, state)
    elif command == "stack output":
        assert record is not None
        if "--show-secrets" in options:
            unlock(str(named), record)
        print(json.dumps(record["outputs"]))
    elif command == "stack history":
        assert record is not None
        size = (options.get("--page-size") or [None])[-1]
        entries = record["history"][: int(size)] if size else record["history"]
        print(json.dumps(entries))
    elif command == "stack rm":
        assert named is not None and record is not None
        if "--yes" not in options and "-y" not in options:
            fail("error: --yes must be passed in to proceed when running in non-interactive mode")
        if record.get("resources") and "--force" not in options:
            fail(
                f"error: '{named}' still has resources; removal rejected. Possible actions:\n- Make sure that "
                f"'{named}' is the stack that you want to destroy\n- Run `pulumi destroy` to delete the resources"
            )
        del state["stacks"][named]
        save("state.json", state)
        if "--preserve-config" not in options:
            stack_file(named).unlink(missing_ok=True)
    else:
        fail(f"fake pulumi: unsupported command {args}", 2)


if __name__ == "__main__":
    main(sys.argv[1:])
