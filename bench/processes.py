"""What a benchmark's child processes cost in memory: process trees from /proc, their resident and proportional sizes.

RSS counts a page shared by several processes once in each of them (forked workers, shared libraries), so a sum of
RSS over a tree overstates what it holds; PSS splits every shared page between the processes that map it, so a sum
of PSS is the memory the tree really takes. Linux only (/proc).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def descendants(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _field_bytes(path: str, field: str) -> int:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def rss_bytes(pid: int) -> int:
    return _field_bytes(f"/proc/{pid}/status", "VmRSS:")


def pss_bytes(pid: int) -> int:
    return _field_bytes(f"/proc/{pid}/smaps_rollup", "Pss:")


def memory_available() -> int:
    return _field_bytes("/proc/meminfo", "MemAvailable:")


class PeakMemory:
    """Samples, every ``interval`` seconds until stopped, the summed PSS of every process below this one (the
    benchmark's children and theirs) and keeps the peak. Use as a context manager around one measurement."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="peak-memory", daemon=True)

    def _sample(self) -> None:
        me = os.getpid()
        while True:
            total = sum(pss_bytes(pid) for pid in descendants(me) if pid != me)
            self.peak = max(self.peak, total)
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
