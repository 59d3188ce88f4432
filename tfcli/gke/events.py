"""Following a Pulumi update through its engine events: resources done out of how many, what runs now, what failed.

The Automation API hands each engine event (:class:`pulumi.automation.EngineEvent`) to a callback;
:class:`UpdateTracker` folds them into the few numbers a progress display shows, and an :class:`UpdateObserver` (the
CLI's rich display, or nothing) is told after each one. Nothing here imports Pulumi: events are read by attribute.

With Pulumi CLI 3.206 and later the SDK (3.272 here) receives the events over gRPC (``pulumi up --event-log
tcp://127.0.0.1:PORT``, its ``pulumirpc.Events/StreamEvents`` server, a worker thread per stream) and turns each into an
``EngineEvent`` with ``EngineEvent.from_json``; older CLIs append JSON lines to a temporary ``--event-log`` file that
a watcher thread reads. Either way the callback runs on a thread of the SDK's, and an exception it raises is lost
(gRPC: a warning; file: the watcher thread dies): the caller keeps its own record (``event_errors``).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

_COLOR_TAG = re.compile(r"<\{%[^%]*%\}>")  # Pulumi's colour directives, e.g. <{%fg 1%}>
_VERBS = {
    "create": "creating",
    "update": "updating",
    "delete": "deleting",
    "replace": "replacing",
    "create-replacement": "replacing",
    "delete-replaced": "deleting the replaced",
    "read": "reading",
    "refresh": "refreshing",
    "import": "importing",
    "same": "checking",
}
STACK_TYPE = "pulumi:pulumi:Stack"


def plain(text: str) -> str:
    """A Pulumi message without its colour directives and trailing blanks."""
    return _COLOR_TAG.sub("", text).rstrip()


def resource_label(urn: str, type_: str) -> str:
    """``gcp:container/cluster:Cluster si1-cluster`` from a URN and its type."""
    return f"{type_} {urn.rsplit('::', 1)[-1]}" if urn else type_


@dataclass
class UpdateTracker:
    """What one ``up`` or ``destroy`` has done so far. ``total`` is an estimate (the plan's count); it grows when
    the engine reports more resources than planned."""

    operation: str
    stack: str
    total: int | None = None
    done: set[str] = field(default_factory=set)
    running: dict[str, str] = field(default_factory=dict)  # urn -> "creating <type> <name>"
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # error diagnostics, in order
    event_errors: list[str] = field(default_factory=list)  # events this tracker could not read (a bug, not Pulumi's)
    changes: dict[str, int] = field(default_factory=dict)  # from the summary: op -> count
    builds: dict[str, Any] = field(default_factory=dict)  # image -> its build's latest progress (infra.image_progress)
    finished: bool = False
    succeeded: bool = False
    _seen: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def completed(self) -> int:
        return len(self.done)

    @property
    def current(self) -> str:
        """The most recently started operation still running (what the display shows)."""
        with self._lock:
            return next(reversed(self.running.values()), "")

    def on_event(self, event: Any) -> None:
        """Fold one engine event in (called from the Automation API's event thread).

        ``event`` is a :class:`pulumi.automation.EngineEvent`: exactly one of its ``*_event`` attributes is set, the
        others are None (kinds the SDK does not model, e.g. ``progressEvent``, arrive with all of them None). Its
        attributes are read directly, never with a default, so that a misspelt name fails loudly.
        """
        with self._lock:
            if (pre := event.resource_pre_event) is not None:
                self._started(pre.metadata)
            elif (outputs := event.res_outputs_event) is not None:
                self._ended(outputs.metadata.urn)
            elif (failed := event.res_op_failed_event) is not None:
                urn = failed.metadata.urn
                self.failed.append(resource_label(urn, failed.metadata.type))
                self._ended(urn)
            elif (diagnostic := event.diagnostic_event) is not None:
                if diagnostic.severity == "error" and (message := plain(diagnostic.message)):
                    self.errors.append(message)
                elif (progress := build_progress(diagnostic.message)) is not None:
                    self.builds[progress.image] = progress
            elif (summary := event.summary_event) is not None:
                self.changes = {str(getattr(op, "value", op)): count for op, count in summary.resource_changes.items()}

    def _started(self, metadata: Any) -> None:
        urn = metadata.urn
        op = str(getattr(metadata.op, "value", metadata.op))
        self._seen.add(urn)
        if self.total is not None and len(self._seen) > self.total:
            self.total = len(self._seen)
        if metadata.type != STACK_TYPE:
            self.running[urn] = f"{_VERBS.get(op, op)} {resource_label(urn, metadata.type)}"

    def _ended(self, urn: str) -> None:
        self._seen.add(urn)
        self.done.add(urn)
        self.running.pop(urn, None)
        if self.total is not None and len(self.done) > self.total:
            self.total = len(self.done)

    def finish(self, succeeded: bool) -> None:
        with self._lock:
            self.finished = True
            self.succeeded = succeeded
            self.running.clear()
            if succeeded and self.done:
                self.total = len(self.done)  # the estimate is replaced by what the engine did

    def change_summary(self) -> str:
        """``3 created, 1 updated, 20 unchanged`` from the engine's summary."""
        words = {
            "create": "created",
            "update": "updated",
            "delete": "deleted",
            "replace": "replaced",
            "same": "unchanged",
        }
        parts = [f"{count} {words.get(op, op)}" for op, count in self.changes.items() if count]
        return ", ".join(parts)


def build_progress(message: str) -> Any:
    """A trainer build's progress line (the build provider's stderr, which the engine forwards as an ``info#err``
    diagnostic: :mod:`infra.image_progress`), or None for any other message."""
    from infra.image_progress import parse

    return parse(plain(message))


class UpdateObserver(Protocol):
    """Told when an update begins, after every engine event, and when it ends."""

    def begin(self, tracker: UpdateTracker) -> None: ...

    def changed(self, tracker: UpdateTracker) -> None: ...

    def end(self, tracker: UpdateTracker) -> None: ...


class QuietObserver:
    """Shows nothing (library use, tests)."""

    def begin(self, tracker: UpdateTracker) -> None:
        pass

    def changed(self, tracker: UpdateTracker) -> None:
        pass

    def end(self, tracker: UpdateTracker) -> None:
        pass
