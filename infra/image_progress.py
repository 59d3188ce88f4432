"""A trainer build's progress as one line of text, written by the build provider and read back by tfcli's display.

The Pulumi engine forwards what a dynamic provider writes on stderr, line by line, as diagnostic events of severity
``info#err`` without a URN (``newPlugin``'s ``runtrace`` in pulumi's sdk/go/common/resource/plugin/plugin.go: a
dynamic provider's output is not hidden as other providers' is). So ``pulumi up`` alone prints these lines, and
tfcli's update display (:mod:`tfcli.gke.events`) folds the same engine events back into the build's state: one
format, written and parsed here, serves both.

A line reads ``tfcli build <id> <repository:tag>: WORKING 1m05s, step 1/1 docker build``: the Cloud Build status
(QUEUED, WORKING, then the final one), the time since the build was submitted, and the step that runs (a step's
``status`` in the Build resource: the first WORKING one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from infra.cloud_build import FINAL

PREFIX = "tfcli build "
_LINE = re.compile(
    r"^tfcli build (?P<build>\S+) (?P<image>\S+): (?P<status>[A-Z_]+) (?:(?P<minutes>\d+)m)?(?P<seconds>\d+)s"
    r"(?:, (?P<step>.+))?$"
)
_STEP = re.compile(r"^Step #(\d+)\b", re.MULTILINE)


def clock(seconds: int) -> str:
    """``45s``, ``1m05s``: the elapsed time as the line writes it."""
    minutes, rest = divmod(max(0, seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def running_step(log: str | None) -> int | None:
    """The step a running build is in: the last ``Step #N`` its log has so far (the Build resource cannot say: "step
    status is only updated on build completion", says the API's reference of ``BuildStep.status``)."""
    found = _STEP.findall(log or "")
    return int(found[-1]) if found else None


def step_label(build: dict[str, Any], index: int | None) -> str:
    """``step 1/2 docker build``: step ``index`` of the build (its ``id``, else the builder's last path part and its
    first argument); "" for none."""
    steps = build.get("steps") or []
    if index is None or not 0 <= index < len(steps):
        return ""
    step = steps[index]
    args = step.get("args") or []
    what = step.get("id") or " ".join([str(step.get("name", "")).rsplit("/", 1)[-1], *map(str, args[:1])])
    return f"step {index + 1}/{len(steps)} {what}".rstrip()


@dataclass(frozen=True)
class BuildProgress:
    """Where one Cloud Build build is: its id, the image it pushes, its status, seconds since it was submitted and
    the step running."""

    build: str
    image: str
    status: str
    elapsed: int
    step: str = ""

    @classmethod
    def of(cls, build: dict[str, Any], image: str, elapsed: float, log: str | None = None) -> BuildProgress:
        """The progress of ``build`` (a Build resource) pushing ``image``; ``log``: its log so far, for the step."""
        status = str(build.get("status"))
        step = step_label(build, running_step(log)) if status == "WORKING" else ""
        return cls(str(build.get("id")), image, status, int(elapsed), step)

    @property
    def final(self) -> bool:
        return self.status in FINAL

    @property
    def tag(self) -> str:
        """``trainer:abc123-cpu``: the image's last path part, what a display has room for."""
        return self.image.rsplit("/", 1)[-1]

    def state(self) -> str:
        """``WORKING 1m05s, step 1/1 docker build``."""
        return f"{self.status} {clock(self.elapsed)}" + (f", {self.step}" if self.step else "")

    def line(self) -> str:
        """What the provider writes (and :func:`parse` reads)."""
        return f"{PREFIX}{self.build} {self.image}: {self.state()}"

    def summary(self) -> str:
        """``trainer:abc123-cpu WORKING 1m05s, step 1/1 docker build``: what the display shows."""
        return f"{self.tag} {self.state()}"

    def changed_from(self, other: BuildProgress | None) -> bool:
        """Another status or step than ``other`` (the elapsed time alone is no change)."""
        return other is None or (self.status, self.step) != (other.status, other.step)


def parse(message: str) -> BuildProgress | None:
    """The progress a line says, or None for any other text."""
    match = _LINE.match(message.strip())
    if match is None:
        return None
    elapsed = int(match["minutes"] or 0) * 60 + int(match["seconds"])
    return BuildProgress(match["build"], match["image"], match["status"], elapsed, match["step"] or "")
