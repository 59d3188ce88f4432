"""tfcli against pulumi 3.272's own ``pulumi.automation``, not only against the fake executable:

- every call tfcli makes into the SDK binds to the real signature (recorded while commands run, and found in the
  source, so a call site the tests do not reach is checked too) — a wrong keyword fails here;
- engine events built by the SDK (``EngineEvent.from_json``) from JSON shaped as Pulumi 3.272 emits it (Go's
  ``apitype.EngineEvent``: ``old``/``new``/``detailedDiff``, ``streamID``, kinds the SDK does not model) drive the
  tracker;
- events reach tfcli the way the SDK receives them: over gRPC from CLI 3.206 on, from the log file before.
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from gke_testkit import FakePulumi, make_gke_project
from pulumi import automation as auto
from pulumi.automation import EngineEvent
from typer.testing import CliRunner

from tfcli.cli.app import app
from tfcli.gke.events import UpdateTracker

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

# What tfcli calls, as "<Class>.<name>" -> the SDK function whose signature it must bind to (self/cls first).
SDK = {
    "LocalWorkspace": auto.LocalWorkspace.__init__,
    "Stack.create_or_select": auto.Stack.create_or_select.__func__,  # type: ignore[attr-defined]
    "Stack.select": auto.Stack.select.__func__,  # type: ignore[attr-defined]
    "Stack.up": auto.Stack.up,
    "Stack.destroy": auto.Stack.destroy,
    "Stack.refresh": auto.Stack.refresh,
    "Stack.preview": auto.Stack.preview,
    "Stack.outputs": auto.Stack.outputs,
    "Stack.history": auto.Stack.history,
    "Stack.get_config": auto.Stack.get_config,
    "Stack.set_config": auto.Stack.set_config,
    "Stack.set_all_config": auto.Stack.set_all_config,
    "LocalWorkspace.remove_stack": auto.LocalWorkspace.remove_stack,
    "ConfigValue": auto.ConfigValue.__init__,
    "PulumiCommand": auto.PulumiCommand.__init__,
    "PulumiCommand.install": auto.PulumiCommand.install.__func__,  # type: ignore[attr-defined]
}
_IS_METHOD = {"LocalWorkspace", "ConfigValue", "PulumiCommand", "PulumiCommand.install"} | {
    name for name in SDK if name.startswith(("Stack.", "LocalWorkspace."))
}


def bind(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Bind a call of ``name`` (self/cls included in ``args`` for methods) to the SDK's signature: TypeError if not."""
    inspect.signature(SDK[name]).bind(*args, **kwargs)


# --- calls recorded while commands run -------------------------------------------------------------------------


def record_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[Any, ...], dict[str, Any]]]:
    """Wrap the SDK callables tfcli uses (they still run): each call is recorded with its arguments."""
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def spy(name: str, target: Any, attribute: str, original: Callable[..., Any], kind: str) -> None:
        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, args, kwargs))
            return original(*args, **kwargs)

        wrapped: Any = {"class": classmethod, "static": staticmethod}.get(kind, lambda f: f)(wrapper)
        monkeypatch.setattr(target, attribute, wrapped)

    for name in SDK:
        owner, _, attribute = name.partition(".")
        cls = getattr(auto, owner)
        attribute = attribute or "__init__"
        raw = inspect.getattr_static(cls, attribute)
        if isinstance(raw, classmethod):
            spy(name, cls, attribute, raw.__func__, "class")
        else:
            spy(name, cls, attribute, raw, "plain")
    return calls


def test_every_call_tfcli_makes_into_pulumi_automation_binds_to_the_sdk(
    project: Path, fake_pulumi: FakePulumi, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "sa.json").write_text('{"private_key": "k"}')
    make_gke_project(project, credentials="key-file", key_file="sa.json")
    calls = record_calls(monkeypatch)
    commands = [
        ("cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4"),
        ("cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4"),  # the key is read back: config get
        ("experiment", "new", "-f", "cartpole-ppo", "-n", "si1", "--run-mode", "distributed", "-w", "2"),
        ("experiment", "start", "-e", "si1", "--detach"),
        ("experiment", "stop", "-e", "si1", "--no-download"),
        ("cluster", "delete", "-c", "shared-t4"),
    ]
    for command in commands:
        result = runner.invoke(app, list(command))
        assert result.exit_code == 0, (command, result.stdout, result.stderr)

    used = {name for name, _, _ in calls}
    assert {
        "LocalWorkspace", "PulumiCommand", "Stack.create_or_select", "Stack.select", "Stack.up", "Stack.destroy",
        "Stack.outputs", "Stack.history", "Stack.get_config", "Stack.set_all_config", "LocalWorkspace.remove_stack",
        "ConfigValue",
    } <= used  # fmt: skip
    for name, args, kwargs in calls:
        bind(name, args, kwargs)
    # The arguments that matter, as the SDK names them.
    workspace = next(kwargs for name, _, kwargs in calls if name == "LocalWorkspace")
    assert workspace["secrets_provider"] == "passphrase" and workspace["work_dir"] == str(project)
    assert isinstance(workspace["pulumi_command"], auto.PulumiCommand)
    up = next(kwargs for name, _, kwargs in calls if name == "Stack.up")
    assert callable(up["on_event"]) and up["color"] == "never"


def test_a_wrong_keyword_is_caught_by_the_binding_check() -> None:
    stack = object.__new__(auto.Stack)
    bind("Stack.up", (stack,), {"on_event": print, "color": "never"})
    with pytest.raises(TypeError, match="on_events"):
        bind("Stack.up", (stack,), {"on_events": print, "color": "never"})
    with pytest.raises(TypeError, match="env"):
        bind("LocalWorkspace", (object(),), {"work_dir": ".", "env": {}})
    with pytest.raises(TypeError):
        bind("PulumiCommand.install", (auto.PulumiCommand,), {"install_root": "/x"})
    assert check_source("stack.history(page_size=1, show_secrets=False)") == []
    assert check_source("stack.history(page_size=1, show_secret=False)") != []
    assert check_source("auto.LocalWorkspace(work_dir='.', env_vars={}, pulumi_cmd=None)") != []


# --- calls found in the source ------------------------------------------------------------------------------------

RECEIVERS = {  # the receiver as written in tfcli -> the SDK class it is
    "stack": "Stack",
    "auto.Stack": "Stack",
    "stack.workspace": "LocalWorkspace",
    "auto": "",
    "": "",
    "PulumiCommand": "PulumiCommand",
}


def check_source(source: str, seen: set[str] | None = None) -> list[str]:
    """Bind every call into the SDK in ``source`` (placeholders for the values); the problems found."""
    problems = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or any(isinstance(arg, ast.Starred) for arg in node.args):
            continue
        if isinstance(node.func, ast.Attribute):
            receiver, attribute = ast.unparse(node.func.value), node.func.attr
        elif isinstance(node.func, ast.Name):
            receiver, attribute = "", node.func.id
        else:
            continue
        if receiver not in RECEIVERS:
            continue
        owner = RECEIVERS[receiver]
        name = f"{owner}.{attribute}" if owner else attribute
        if name not in SDK:
            continue
        args = (object(),) * len(node.args)
        if name in _IS_METHOD:
            args = (object(), *args)
        kwargs = {keyword.arg: object() for keyword in node.keywords if keyword.arg is not None}
        if seen is not None:
            seen.add(name)
        try:
            bind(name, args, kwargs)
        except TypeError as error:
            problems.append(f"line {node.lineno}: {ast.unparse(node)}: {error}")
    return problems


def test_every_call_into_pulumi_automation_in_the_source_binds_to_the_sdk() -> None:
    files = sorted((ROOT / "tfcli").rglob("*.py"))
    found: list[str] = []
    seen: set[str] = set()
    for path in files:
        text = path.read_text()
        if "pulumi" in text:
            found += [f"{path.relative_to(ROOT)}: {problem}" for problem in check_source(text, seen)]
    assert found == []
    assert {
        "LocalWorkspace",
        "PulumiCommand",
        "PulumiCommand.install",
        "Stack.up",
        "Stack.destroy",
        "Stack.set_all_config",
        "Stack.create_or_select",
    } <= seen  # fmt: skip  (it does see the call sites)


# --- engine events ------------------------------------------------------------------------------------------------

URN = "urn:pulumi:si1::tfcli::{type}::{name}"


def metadata(op: str, type_: str, name: str) -> dict[str, Any]:
    """A StepEventMetadata as Go's apitype serialises it (Pulumi 3.272)."""
    urn = URN.format(type=type_, name=name)
    state = {"type": type_, "urn": urn, "custom": True, "id": "", "parent": "", "provider": "", "inputs": {},
             "outputs": {}}  # fmt: skip
    return {
        "op": op,
        "urn": urn,
        "type": type_,
        "old": None if op == "create" else state,
        "new": None if op == "delete" else state,
        "detailedDiff": None,
        "provider": URN.format(type="pulumi:providers:gcp", name="default_10_2_0") + "::04da6b54",
    }


CLUSTER = ("gcp:container/cluster:Cluster", "si1-cluster")
POOL = ("gcp:container/nodePool:NodePool", "si1-learner-pool")
JOB = ("kubernetes:batch/v1:Job", "si1-job-learner")
EVENTS_3_272 = [
    {"preludeEvent": {"config": {"gcp:project": "p", "tfcli:suspend": "false"}}},
    {"progressEvent": {"type": "plugin-download", "id": "gcp", "message": "gcp", "received": 5, "total": 9,
                       "done": False}},
    {"resourcePreEvent": {"metadata": metadata("same", "pulumi:pulumi:Stack", "tfcli-si1")}},
    {"resourcePreEvent": {"metadata": metadata("create", *CLUSTER)}},
    {"diagnosticEvent": {"urn": URN.format(type=CLUSTER[0], name=CLUSTER[1]), "prefix": "info: ",
                         "message": "still creating...\n", "color": "never", "severity": "info", "streamID": 3,
                         "ephemeral": True}},
    {"resOutputsEvent": {"metadata": metadata("create", *CLUSTER)}},
    {"resourcePreEvent": {"metadata": metadata("create", *POOL), "planning": False}},
    {"diagnosticEvent": {"urn": URN.format(type=POOL[0], name=POOL[1]), "prefix": "error: ",
                         "message": "googleapi: Error 403: Quota 'NVIDIA_T4_GPUS' exceeded.  Limit: 0.0 in region "
                         "us-central1.\n", "color": "never", "severity": "error"}},
    {"resOpFailedEvent": {"metadata": metadata("create", *POOL), "status": 1, "steps": 1}},
    {"resourcePreEvent": {"metadata": metadata("update", *JOB)}},
    {"resOutputsEvent": {"metadata": metadata("update", *JOB)}},
    {"policyLoadEvent": {}},
    {"errorEvent": {"error": "internal detail"}},
    {"summaryEvent": {"maybeCorrupt": False, "durationSeconds": 312, "resourceChanges": {"create": 1, "update": 1,
                      "same": 1}, "PolicyPacks": {}, "isPreview": False}},
    {"cancelEvent": {}},
]  # fmt: skip


def sdk_events() -> list[EngineEvent]:
    """The events as the SDK hands them to ``on_event`` (the gRPC servicer and the log reader both do this)."""
    lines = [json.dumps({"sequence": index, "timestamp": 1767000000 + index, **event})
             for index, event in enumerate(EVENTS_3_272, start=1)]  # fmt: skip
    return [EngineEvent.from_json(json.loads(line)) for line in lines]


def test_engine_events_of_pulumi_3_272_drive_the_tracker() -> None:
    tracker = UpdateTracker("up", "si1", total=3)
    seen = []
    for event in sdk_events():
        tracker.on_event(event)
        seen.append((tracker.completed, tracker.current))
    assert seen[3] == (0, "creating gcp:container/cluster:Cluster si1-cluster")
    assert seen[6] == (1, "creating gcp:container/nodePool:NodePool si1-learner-pool")
    assert tracker.failed == ["gcp:container/nodePool:NodePool si1-learner-pool"]
    assert tracker.errors == [
        "googleapi: Error 403: Quota 'NVIDIA_T4_GPUS' exceeded.  Limit: 0.0 in region us-central1."
    ]
    assert tracker.total == 4  # the stack, the cluster, the pool and the Job: more than the plan's 3
    assert tracker.completed == 3 and tracker.current == ""
    assert tracker.change_summary() == "1 created, 1 updated, 1 unchanged"
    assert tracker.event_errors == []


def test_a_misspelt_event_field_fails_instead_of_being_ignored() -> None:
    event = sdk_events()[3]
    assert event.resource_pre_event is not None
    with pytest.raises(AttributeError, match="resource_pre_events"):
        event.resource_pre_events  # noqa: B018  (what a typo in events.py would read)
    tracker = UpdateTracker("up", "si1")
    with pytest.raises(AttributeError):  # fields are read directly: no getattr default hides a wrong name
        tracker.on_event(SimpleNamespace(resource_pre_event=None))


class Capture:
    """An UpdateObserver that keeps the tracker."""

    tracker: UpdateTracker | None = None

    def begin(self, tracker: UpdateTracker) -> None:
        self.tracker = tracker

    def changed(self, tracker: UpdateTracker) -> None:
        pass

    def end(self, tracker: UpdateTracker) -> None:
        pass


@pytest.mark.parametrize(("version", "transport"), [("v3.272.0", "tcp://127.0.0.1:"), ("v3.200.0", "/")])
def test_events_reach_tfcli_over_grpc_from_3_206_and_through_the_log_file_before(
    gke_project: Path, fake_pulumi: FakePulumi, version: str, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tfcli.gke.stacks import Stacks
    from tfcli.project import open_project

    assert runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo", "-n", "si1"]).exit_code == 0
    (fake_pulumi.state / "control.json").write_text(json.dumps({"version": version}))
    stacks = Stacks(open_project())
    stack = stacks.stack("si1", create=True)
    capture = Capture()
    outputs = stacks.up(stack, observer=capture)
    up = next(argv for argv in fake_pulumi.commands() if argv[0] == "up")
    assert up[up.index("--event-log") + 1].startswith(transport)
    tracker = capture.tracker
    assert tracker is not None and tracker.event_errors == []
    assert tracker.completed == 24 and tracker.change_summary() == "24 created"  # 2 of the engine, 22 declared
    assert outputs["namespace"] == "tfcli-si1"

    # A bug in tfcli's event handling is kept, not lost on the SDK's thread (which swallows what it raises).
    def broken(self: UpdateTracker, event: Any) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(UpdateTracker, "on_event", broken)
    stacks.up(stack, observer=capture)
    assert capture.tracker is not None and capture.tracker.event_errors[:1] == ["KeyError: 'boom'"]
