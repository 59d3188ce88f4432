"""Engine events of the fake ``pulumi``, where the Automation API asks for them: CLI versions above 3.205 stream them
over gRPC (``--event-log tcp://127.0.0.1:PORT``, the SDK's ``pulumirpc.Events/StreamEvents`` server), older ones
append JSON lines to the ``--event-log`` file."""

from __future__ import annotations

import json
import time
from typing import Any

from fake_pulumi_program import urn
from fake_pulumi_stack import fail

# How long one update's event stream may stay open: the engine's has no deadline; this one only ends a test whose
# fake hangs. An image stack's update runs its builds inside it (minutes on a loaded machine).
STREAM_SECONDS = 900


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
                    stream(iter(self.queue.get, None), timeout=STREAM_SECONDS)
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

    def step(self, stack: str, op: str, type_: str, name: str, *, id_: str = "", begun: bool = False) -> None:
        """A resource step as Pulumi 3.272 reports it (``resourcePreEvent`` then ``resOutputsEvent``; ``begun``: the
        first was sent already, by :meth:`begin`)."""
        metadata = self.metadata(stack, op, type_, name, id_)
        if not begun:
            self.emit(resourcePreEvent={"metadata": metadata})
        self.emit(resOutputsEvent={"metadata": metadata})

    def begin(self, stack: str, op: str, type_: str, name: str) -> None:
        """A step's ``resourcePreEvent`` alone: the engine sends it when the provider's create starts."""
        self.emit(resourcePreEvent={"metadata": self.metadata(stack, op, type_, name, "")})

    def provider_output(self, text: str) -> None:
        """A dynamic provider's stderr, a diagnostic per line as the engine forwards a plugin's output (``runtrace``
        in pulumi's sdk/go/common/resource/plugin/plugin.go: ``Infoerrf``, no URN, the stream's id)."""
        for line in text.splitlines():
            if line.strip():
                self.emit(diagnosticEvent={"urn": "", "prefix": "", "message": line + "\n", "color": "never",
                                           "severity": "info#err", "streamID": 2})  # fmt: skip

    def metadata(self, stack: str, op: str, type_: str, name: str, id_: str) -> dict[str, Any]:
        state = {"type": type_, "urn": urn(stack, type_, name), "id": id_, "parent": "", "provider": "",
                 "inputs": {}, "outputs": {}}  # fmt: skip
        return {
            "op": op,
            "urn": urn(stack, type_, name),
            "type": type_,
            "old": state if op != "create" else None,
            "new": state if op != "delete" else None,
            "detailedDiff": None,
            "provider": "" if type_.startswith("pulumi:") else urn(stack, "pulumi:providers:gcp", "default_10_2_0"),
        }
