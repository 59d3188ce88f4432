"""A stand-in for the ``pulumi`` CLI at the Automation API's boundary (the real one is not installed here).

Put first on PATH (as ``pulumi``, see ``gke_testkit.FakePulumi``), it answers what ``pulumi.automation`` asks of a
LocalWorkspace: ``version``, ``stack select [--create]``, ``stack init``, ``config get`` (secrets "decrypted"),
``config set``/``set-all`` (written into ``stacks/Pulumi.<stack>.yaml`` as Pulumi does: plaintext values as strings,
secrets as ``{secure: ...}`` ciphertext, an ``encryptionsalt`` added), ``up`` and ``destroy`` (engine events in
Pulumi's JSON format, one per line, to the ``--event-log`` file), ``stack output --json``, ``stack history --json``
and ``stack rm``.

Everything lives in ``$FAKE_PULUMI_STATE``: ``calls.jsonl`` (argv, cwd and the relevant environment of every
call), ``state.json`` (stacks: outputs, resources, history) and ``control.json`` (failures to inject:
``{"fail": [{"command": "up", "stack": "x", "stderr": "...", "stdout": "...", "diagnostic": "...", "times": 1}]}``,
the results bucket of each stack, and what "the trainer" writes to it when an ``up`` suspends its Jobs).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

VERSION = "v3.200.0"  # below 3.205: the Automation API then reads engine events from the --event-log file
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


def option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


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


def write_config(stack: str, values: dict[str, tuple[str, bool]]) -> None:
    import yaml

    path = stack_file(stack)
    document, config = read_config(stack)
    state = load("state.json", {"stacks": {}})
    for key, (value, secret) in values.items():
        state.setdefault("secrets", {}).setdefault(stack, {})[key] = value if secret else None
        if secret:
            digest = base64.b64encode(hashlib.sha256(value.encode()).digest()).decode()
            config[key] = {"secure": f"v1:{digest}"}
            if "encryptionsalt" not in document:
                document = {"encryptionsalt": "v1:ZmFrZS1zYWx0:v1:ZmFrZQ==", **document}
        else:
            config[key] = value
    save("state.json", state)
    document["config"] = config
    text = (
        "".join(line + "\n" for line in path.read_text().splitlines() if line.startswith("#")) if path.is_file() else ""
    )
    path.write_text(text + yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=120))


def injected(command: str, stack: str | None) -> dict[str, Any] | None:
    control = load("control.json", {})
    for entry in control.get("fail", []):
        if entry.get("command") == command and entry.get("stack") in (None, stack) and entry.get("times", 1) > 0:
            entry["times"] = entry.get("times", 1) - 1
            save("control.json", control)
            return dict(entry)
    return None


def resources_for(stack: str, config: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, name) of what the program would declare, in the order the engine reports them."""
    found = [("pulumi:pulumi:Stack", f"tfcli-{stack}"), ("pulumi:providers:gcp", "default_10_2_0")]
    experiment = config.get("tfcli:experiment")
    own_cluster = experiment is None or not config.get("tfcli:sharedClusterStack")
    if own_cluster:
        found += [
            ("gcp:container/cluster:Cluster", f"{stack}-cluster"),
            ("gcp:container/nodePool:NodePool", f"{stack}-learner-pool"),
            ("gcp:container/nodePool:NodePool", f"{stack}-cpu-pool"),
        ]
    if experiment is not None:
        found += [
            ("gcp:storage/bucket:Bucket", f"{stack}-bucket"),
            ("kubernetes:core/v1:Namespace", f"{stack}-namespace"),
            ("kubernetes:batch/v1:Job", f"{stack}-job-learner"),
        ]
    return found


def urn(stack: str, type_: str, name: str) -> str:
    return f"urn:pulumi:{stack}::tfcli::{type_}::{name}"


def mapping(value: Any) -> dict[str, Any]:
    return json.loads(value) if isinstance(value, str) else dict(value or {})


def outputs_for(stack: str, config: dict[str, Any]) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from infra.naming import bucket_name

    project = str(config.get("gcp:project", ""))
    location = str(config.get("gcp:zone") or config.get("gcp:region") or "")
    if "tfcli:cluster" in config:
        cluster = mapping(config["tfcli:cluster"])
        return {
            "clusterName": cluster["name"],
            "endpoint": "203.0.113.10",
            "project": project,
            "location": cluster.get("location") or location,
            "gpuType": cluster.get("gpu_type", ""),
            "gpusPerNode": cluster.get("gpus_per_node", 0),
        }
    experiment = mapping(config["tfcli:experiment"])
    name = experiment["name"]
    shared = config.get("tfcli:sharedClusterStack")
    buckets = load("control.json", {}).get("buckets", {})
    bucket = buckets.get(stack) or bucket_name(name, project)
    outputs = {
        "experiment": name,
        "runMode": experiment.get("run_mode", "single"),
        "clusterName": shared or name,
        "clusterLocation": (experiment.get("cluster") or {}).get("location") or location,
        "namespace": f"tfcli-{name}",
        "jobs": ["learner"],
        "bucket": bucket,
        "resultsUrl": f"gs://{bucket}/{name}/",
        "suspended": str(config.get("tfcli:suspend", False)).lower() == "true",
    }
    if shared:
        outputs["sharedClusterStack"] = shared
    return outputs


class EventLog:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self.sequence = 0

    def emit(self, **event: Any) -> None:
        if not self.path:
            return
        self.sequence += 1
        line = json.dumps({"sequence": self.sequence, "timestamp": int(time.time()), **event})
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def step(self, stack: str, op: str, type_: str, name: str) -> None:
        metadata = {"op": op, "urn": urn(stack, type_, name), "type": type_, "provider": ""}
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
    for name, text in files.items():
        bucket.blob(f"{outputs['experiment']}/{name}").upload_from_string(text)


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


def operation(kind: str, stack: str, args: list[str], state: dict[str, Any]) -> None:
    """``up`` or ``destroy``."""
    record = state["stacks"].get(stack)
    if record is None:
        fail(f"error: no stack named '{stack}' found")
    assert record is not None
    log = EventLog(option(args, "--event-log"))
    _, config = read_config(stack)
    log.emit(preludeEvent={"config": {key: str(value) for key, value in config.items()}})
    problem = injected(kind, stack)
    if problem is not None:
        if diagnostic := problem.get("diagnostic"):
            log.emit(diagnosticEvent={"message": diagnostic + "\n", "color": "never", "severity": "error"})
            failed = {"op": "create", "urn": urn(stack, "gcp:container/cluster:Cluster", f"{stack}-cluster"),
                      "type": "gcp:container/cluster:Cluster", "provider": ""}  # fmt: skip
            log.emit(resOpFailedEvent={"metadata": failed, "status": 1, "steps": 1})
        log.emit(cancelEvent={})
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
                op = "update" if record["outputs"].get("suspended") != outputs_for(stack, config)["suspended"] else op
            changes[op] = changes.get(op, 0) + 1
            log.step(stack, op, type_, name)
        record["resources"] = [list(item) for item in resources]
        record["outputs"] = outputs_for(stack, config)
    else:
        changes = {"delete": len(record.get("resources", []))}
        for type_, name in reversed([tuple(item) for item in record.get("resources", [])]):
            log.step(stack, "delete", type_, name)
        record["resources"] = []
        record["outputs"] = {}
    if kind == "up" and record["outputs"].get("suspended"):
        play_the_trainer(stack, record["outputs"])
    log.emit(summaryEvent={"maybeCorrupt": False, "durationSeconds": 1, "resourceChanges": changes, "PolicyPacks": {}})
    log.emit(cancelEvent={})
    record["history"].insert(0, history_entry("update" if kind == "up" else "destroy", "succeeded", changes, 0))
    for number, entry in enumerate(reversed(record["history"]), start=1):
        entry["version"] = number
    save("state.json", state)
    sys.stdout.write(f"{'Updating' if kind == 'up' else 'Destroying'} ({stack}):\nResources:\n    {changes}\n")


def main(argv: list[str]) -> None:
    args = [arg for arg in argv if arg != "--non-interactive"]
    calls = STATE / "calls.jsonl"
    with open(calls, "a", encoding="utf-8") as handle:
        env = {key: os.environ[key] for key in ENV_KEYS if key in os.environ}
        handle.write(json.dumps({"argv": args, "cwd": os.getcwd(), "env": env}) + "\n")
    if args[:1] == ["version"]:
        print(load("control.json", {}).get("version", VERSION))
        return
    state = load("state.json", {"stacks": {}})
    stack = option(args, "--stack")
    words = [arg for arg in args if not arg.startswith("-")]
    command = " ".join(words[:2]) if words[:1] in (["stack"], ["config"]) else (words[0] if words else "")
    if command not in ("up", "destroy") and (problem := injected(command, stack)) is not None:
        sys.stdout.write(problem.get("stdout", ""))
        fail(problem.get("stderr", "error: failed"), int(problem.get("code", 255)))
    if command == "stack select":
        assert stack is not None
        if stack not in state["stacks"]:
            if "--create" not in args:
                fail(f"error: no stack named '{stack}' found")
            state["stacks"][stack] = {"outputs": {}, "resources": [], "history": []}
        save("state.json", state)
    elif command == "stack init":
        name = words[2]
        if name in state["stacks"]:
            fail(f"error: stack '{name}' already exists")
        state["stacks"][name] = {"outputs": {}, "resources": [], "history": []}
        save("state.json", state)
    elif command == "config set-all":
        assert stack is not None
        values: dict[str, tuple[str, bool]] = {}
        for index, arg in enumerate(args):
            if arg in ("--plaintext", "--secret"):
                key, _, value = args[index + 1].partition("=")
                values[key] = (value, arg == "--secret")
        write_config(stack, values)
    elif command == "config get":
        assert stack is not None
        key = words[2]
        _, config = read_config(stack)
        if key not in config:
            fail(f"error: configuration key '{key}' not found for stack '{stack}'")
        secret = isinstance(config[key], dict) and "secure" in config[key]
        value = state.get("secrets", {}).get(stack, {}).get(key) if secret else config[key]  # "decrypted"
        print(json.dumps({"value": value, "secret": secret}))
    elif command == "config set":
        assert stack is not None
        key = words[2]
        value = args[args.index("--") + 1]
        write_config(stack, {key: (value, "--secret" in args)})
    elif command in ("up", "destroy"):
        assert stack is not None
        operation(command, stack, args, state)
    elif command == "stack output":
        record = state["stacks"].get(stack)
        if record is None:
            fail(f"error: no stack named '{stack}' found")
        print(json.dumps(record["outputs"]))
    elif command == "stack history":
        record = state["stacks"].get(stack)
        if record is None:
            fail(f"error: no stack named '{stack}' found")
        size = option(args, "--page-size")
        entries = record["history"][: int(size)] if size else record["history"]
        print(json.dumps(entries))
    elif command == "stack rm":
        name = words[2]
        record = state["stacks"].get(name)
        if record is None:
            fail(f"error: no stack named '{name}' found")
        if record.get("resources") and "--force" not in args:
            fail(
                f"error: '{name}' still has resources; removal rejected. Possible actions:\n- Make sure that "
                f"'{name}' is the stack that you want to destroy\n- Run `pulumi destroy` to delete the resources"
            )
        del state["stacks"][name]
        save("state.json", state)
        if "--preserve-config" not in args:
            stack_file(name).unlink(missing_ok=True)
    else:
        fail(f"fake pulumi: unsupported command {args}", 2)


if __name__ == "__main__":
    main(sys.argv[1:])
