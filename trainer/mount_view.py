"""A run's own folder seen as the bucket has it now, on a GCS FUSE mount whose cache remembers it older.

Each pod's Cloud Storage FUSE mount keeps its own stat cache (tests/gcsfuse.py, from gcsfuse's docs/semantics.md):
a name looked up before it existed reads as absent for ``metadata-cache:negative-ttl-secs`` (5 s), a file looked up
before another pod rewrote it reads as the generation seen then for ``metadata-cache:ttl-secs`` (60 s). A GKE
sweep's trial is trained by whichever worker pod takes it next, so its folder was last written through another pod's
mount, and this pod may have looked its files up a moment before: the trial's previous trial on this pod judged a
rung by reading its siblings' ``result.json``. Read through that cache, a trial that waited at a rung on another pod
("waiting at rung 150", written two seconds earlier) read as never started, so it resumed from its checkpoint at the
rung without being judged there and trained on past it (a full-suite run of tests/gke/test_sweep_workers_gke.py).

A listing is not cached (the list cache, ``kernel-list-cache-ttl-secs``, is off by default) and puts every object it
lists into the stat cache (gcsfuse ``internal/storage/caching/fast_stat_bucket.go``: ``ListObjects`` inserts the
listing's objects, replacing what was cached for their names), so one walk of the folder before anything in it is
read makes its files current. On a local disk the walk costs microseconds and changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path


def refresh(folder: Path) -> int:
    """List ``folder`` and every folder under it, so that the files there read as they are now; the number of
    folders listed (0 when ``folder`` is not there yet)."""
    return sum(1 for _ in os.walk(folder))
