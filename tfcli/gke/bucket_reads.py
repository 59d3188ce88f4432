"""Many trials' ``result.json`` and ``progress.jsonl`` read from one bucket: concurrently, and on a follow only what
changed since the last read.

Read one trial at a time, a 1,000-trial sweep cost about 4,000 round trips per ``status -s`` (each object's metadata,
then its bytes), minutes against Cloud Storage. Here a read is:

- one listing of the sweep's prefix, limited to the two files of each trial (``matchGlob``) and to the fields that
  tell a change (``name``, ``generation``, ``size``): one call per 1,000 objects instead of a GET per object;
- then only the objects that changed, fetched by a bounded pool of threads sharing one storage client (its
  connection pool sized to the threads, so connections are reused rather than opened and dropped): ``result.json``
  when its generation is not the one read before, ``progress.jsonl`` from the offset its reader stopped at (a
  ranged read of the new bytes; from the start again when the object shrank, a rewrite after a restart).

:class:`BucketReads` keeps what was read between the ticks of a follow (``start -s --wait``); a call without one reads
everything, as ``status -s`` does. Nothing local is read: a stale download never stands in for the bucket.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfcli.experiments.progress import ProgressReader
from tfcli.gke.results import PROGRESS_FILE, RESULT_FILE, RemoteResults, gcs_errors
from trainer.result_file import parse_result

WORKERS = 32  # concurrent reads: Cloud Storage answers each in tens of milliseconds, so threads mostly wait
LISTED_FIELDS = "items(name,generation,size),nextPageToken"


@dataclass
class TrialFiles:
    """What has been read of one trial's two objects: its progress reader (where it stopped), every episode so far,
    and its ``result.json`` with the generation it was read at."""

    reader: ProgressReader = field(default_factory=lambda: ProgressReader(Path(PROGRESS_FILE)))
    records: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    result_generation: int | None = None
    progress_seen: tuple[int, int] | None = None  # (generation, size) of progress.jsonl when it was last fetched

    def restart_progress(self) -> None:
        self.reader = ProgressReader(Path(PROGRESS_FILE))
        self.records = []
        self.progress_seen = None


@dataclass(frozen=True)
class Listed:
    """An object as listed: enough to tell whether it changed."""

    name: str
    generation: int
    size: int


@dataclass
class BucketReads:
    """What a follow keeps between ticks: each trial's :class:`TrialFiles` and one storage client (its connection
    pool sized to ``workers``). ``workers=1`` reads one object at a time, in the calling thread."""

    workers: int = WORKERS
    client: Any = None
    location: tuple[str, str] | None = None  # (bucket, prefix) the files were read from: another one starts over
    files: dict[str, TrialFiles] = field(default_factory=dict)
    fetched: list[str] = field(default_factory=list)  # the objects fetched by the last read (what a tick cost)

    def adopt(self, remote: RemoteResults) -> None:
        """Use ``remote``'s client from now on, its pool sized to the workers; forget what another bucket held."""
        if self.client is not remote.client:
            self.client = remote.client
            size_pool(self.client, self.workers)
        if self.location != (remote.bucket, remote.prefix):
            self.location = (remote.bucket, remote.prefix)
            self.files = {}


def size_pool(client: Any, workers: int) -> None:
    """Let the client's HTTP session keep ``workers`` connections per host: requests' default adapter keeps 10, and
    the connections of any more threads would be opened and thrown away on every request."""
    from requests.adapters import HTTPAdapter

    session = client._http  # google.cloud.client.Client's transport (a requests.Session), created on first use
    if workers <= 10 or getattr(session, "is_mtls", False):  # an mTLS session's adapter carries its certificate
        return
    adapter = HTTPAdapter(pool_connections=4, pool_maxsize=workers)
    session.mount("https://", adapter)
    session.mount("http://", adapter)  # (STORAGE_EMULATOR_HOST)


def trial_prefix(remote: RemoteResults, trial: str) -> str:
    return f"{remote.prefix}/{trial}" if remote.prefix else trial


def list_trial_files(remote: RemoteResults, trials: list[str]) -> dict[str, Listed]:
    """Every ``result.json`` and ``progress.jsonl`` under the sweep's prefix (under the trial's, for one trial), by
    object name: a paged listing of three fields per object."""
    if len(trials) == 1:
        under, each = f"{trial_prefix(remote, trials[0])}/", ""
    else:
        under, each = (f"{remote.prefix}/" if remote.prefix else ""), "*/"
    pattern = f"{under}{each}{{{RESULT_FILE},{PROGRESS_FILE}}}"
    with gcs_errors(remote.project, f"list gs://{remote.bucket}/{under}"):
        blobs = remote.client.list_blobs(remote.bucket, prefix=under, match_glob=pattern, fields=LISTED_FIELDS)
        return {blob.name: Listed(blob.name, int(blob.generation or 0), int(blob.size or 0)) for blob in blobs}


def read_trials(remote: RemoteResults, trials: list[str], reads: BucketReads | None = None) -> dict[str, TrialFiles]:
    """Each trial's files after fetching what changed since ``reads`` last looked (everything, without one)."""
    reads = reads if reads is not None else BucketReads()
    reads.adopt(remote)
    listed = list_trial_files(remote, trials) if trials else {}
    work: list[Callable[[], str]] = []
    for trial in trials:
        files = reads.files.setdefault(trial, TrialFiles())
        base = trial_prefix(remote, trial)
        work.extend(_changes(remote, files, listed.get(f"{base}/{RESULT_FILE}"), listed.get(f"{base}/{PROGRESS_FILE}")))
    reads.fetched = list(_run(work, reads.workers))
    return {trial: reads.files[trial] for trial in trials}


def _changes(
    remote: RemoteResults, files: TrialFiles, result: Listed | None, progress: Listed | None
) -> list[Callable[[], str]]:
    """The fetches that bring ``files`` up to what was listed (the objects' absence is applied here, at once)."""
    work: list[Callable[[], str]] = []
    if result is None:
        files.result, files.result_generation = {}, None
    elif result.generation != files.result_generation:
        work.append(lambda: _fetch_result(remote, files, result))
    if progress is None or progress.size < files.reader.offset:  # none (yet, or any more), or rewritten from scratch
        files.restart_progress()
    # (bytes past the offset that were fetched before are a half-written last line: fetched again once it grew)
    if progress is not None and progress.size > files.reader.offset and progress_key(progress) != files.progress_seen:
        work.append(lambda: _fetch_progress(remote, files, progress))
    return work


def progress_key(listed: Listed) -> tuple[int, int]:
    return listed.generation, listed.size


def _fetch_result(remote: RemoteResults, files: TrialFiles, listed: Listed) -> str:
    data = _download(remote, listed.name)
    files.result = parse_result(data) if data is not None else {}
    # A result that does not parse is read again next time rather than remembered as empty.
    files.result_generation = listed.generation if files.result else None
    return listed.name


def _fetch_progress(remote: RemoteResults, files: TrialFiles, listed: Listed) -> str:
    data = _download(remote, listed.name, start=files.reader.offset)
    if data is not None:
        files.records.extend(files.reader.feed(data))
        files.progress_seen = progress_key(listed)
    return listed.name


def _download(remote: RemoteResults, name: str, start: int | None = None) -> bytes | None:
    """The object's bytes (from ``start``), or None when it went away since the listing."""
    from google.api_core import exceptions

    with gcs_errors(remote.project, f"read gs://{remote.bucket}/{name}"):
        try:
            return bytes(remote.client.bucket(remote.bucket).blob(name).download_as_bytes(start=start))
        except exceptions.NotFound:
            return None


def _run(work: list[Callable[[], str]], workers: int) -> Iterable[str]:
    """Each fetch, ``workers`` at a time; the first error (a TfcliError) is raised here."""
    if workers <= 1 or len(work) <= 1:
        return [fetch() for fetch in work]
    pool = ThreadPoolExecutor(max_workers=min(workers, len(work)), thread_name_prefix="tfcli-gcs")
    try:
        futures = [pool.submit(fetch) for fetch in work]
        return [future.result() for future in futures]
    finally:  # after an error (or Ctrl-C) the fetches not yet begun are dropped
        pool.shutdown(wait=True, cancel_futures=True)
