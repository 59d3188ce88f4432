"""A deployed sweep's trials read from its bucket (gcp-storage-emulator, real HTTP) concurrently and, on a follow,
incrementally: the same states and numbers as reading one trial at a time, only new bytes and changed results
fetched on a later tick, every HTTP request counted."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import requests
import yaml
from gke_testkit import make_gke_project
from google.auth.credentials import AnonymousCredentials
from google.auth.transport.requests import AuthorizedSession
from test_sweep_gke import invoke, progress, result

from tfcli.experiments.store import ExperimentStore
from tfcli.gke.bucket_reads import BucketReads
from tfcli.gke.results import remote_results
from tfcli.gke.sweep_readings import TrialReading, read_deployed, trial_remote
from tfcli.project import open_project
from tfcli.sweeps.store import get_sweep
from trainer.kernel.errors import TfcliError
from trainer.kernel.spec.library import BUNDLED_CONFIGS
from trainer.kernel.spec.sweep import Trial

SWEEP = "many"
BUCKET = "tfcli-many-96f4ee46"  # by heart: a renamed bucket fails tests
OUTPUTS = {"bucket": BUCKET, "experiment": SWEEP}


class Recording(AuthorizedSession):
    """A storage client's HTTP session that notes each request (method, path and query, Range header, thread) and
    answers 403 for the objects named in ``refused``."""

    def __init__(self) -> None:
        super().__init__(AnonymousCredentials())
        self.seen: list[tuple[str, str, str | None, str]] = []
        self.refused: list[str] = []

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        headers = {key.lower(): value for key, value in (kwargs.get("headers") or {}).items()}
        path = unquote(url).split("/b/", 1)[-1]
        self.seen.append((method, path, headers.get("range"), threading.current_thread().name))
        if any(name in path for name in self.refused):
            refusal = requests.Response()
            refusal.status_code, refusal.url = 403, url
            refusal.request = requests.Request(method, url).prepare()
            refusal.headers["content-type"] = "application/json"
            refusal._content = json.dumps({"error": {"code": 403, "message": "refused"}}).encode()
            return refusal
        return super().request(method, url, *args, **kwargs)

    def listings(self) -> list[str]:
        return [
            path for method, path, _, _ in self.seen if method == "GET" and "/o?" in path and "alt=media" not in path
        ]

    def downloads(self) -> list[tuple[str, str | None]]:
        """(object, Range) of each media GET since the last call."""
        found = [(path.split("/o/", 1)[1].split("?")[0], rng) for _, path, rng, _ in self.seen if "alt=media" in path]
        self.seen.clear()
        return found


@pytest.fixture
def trials(lab: Path, gcs: Any) -> list[Trial]:
    """A sweep of 40 trials (8 learning rates x 5 seeds) created in a GKE project; its bucket made."""
    make_gke_project(lab)
    rates = [round(1e-4 * (k + 1), 6) for k in range(8)]
    # A budget the fixtures' completed results reach (a completed run short of its budget reads as one whose budget
    # was raised since: `resume --total-timesteps`, so paused or running).
    base = {
        **yaml.safe_load((BUNDLED_CONFIGS / "experiments" / "cartpole-ppo.yaml").read_text()),
        "total_timesteps": 300,
    }
    sweep = {"name": SWEEP, "base": base, "axes": {"agent.learning_rate": rates}, "seeds": 5}
    (lab / "configs" / "sweeps" / f"{SWEEP}.yaml").write_text(yaml.safe_dump(sweep))
    code, _, stderr = invoke("experiment", "sweep", "-f", SWEEP, "--no-build")
    assert code == 0, stderr
    gcs.create_bucket(BUCKET)
    return get_sweep(ExperimentStore(open_project()), SWEEP).trials()


def client(session: Any) -> Any:
    from google.cloud import storage

    return storage.Client(project="test", credentials=AnonymousCredentials(), _http=session)


def put(gcs: Any, trial: int, name: str, text: str) -> None:
    gcs.bucket(BUCKET).blob(f"{SWEEP}/{SWEEP}-{trial}/{name}").upload_from_string(text)


def fill(gcs: Any) -> dict[int, str]:
    """Trials in every condition; returns what each should read as."""
    expected = {}
    for trial in range(40):
        kind = trial % 5
        returns = [float(trial + k) for k in range(20 + trial)]
        if kind == 0:  # completed
            put(gcs, trial, "progress.jsonl", progress(returns))
            put(gcs, trial, "result.json", result("completed", returns))
            expected[trial] = "completed"
        elif kind == 1:  # running: its log grows, the last line half-written
            put(gcs, trial, "progress.jsonl", progress(returns) + '{"episode": 99, "time')
            expected[trial] = "running"
        elif kind == 2:  # resumed: a checkpoint's result, the Job not suspended
            put(gcs, trial, "progress.jsonl", progress(returns))
            put(gcs, trial, "result.json", result("paused", returns))
            expected[trial] = "running"
        elif kind == 3:  # failed, before any episode
            put(gcs, trial, "result.json", json.dumps({"status": "failed", "error": f"trial {trial} broke"}))
            expected[trial] = "failed"
        else:  # no files yet
            expected[trial] = "new"
    return expected


def one_at_a_time(project: Any, trials: list[Trial]) -> list[TrialReading]:
    """The reading as it was before the pool: each trial's result.json, then its progress.jsonl, in turn."""
    from tfcli.gke import states

    base = remote_results(project, OUTPUTS)
    readings = []
    for trial in trials:
        remote = trial_remote(base, trial.name)
        found, records = remote.result(), remote.poll()
        started = bool(remote.progress.episodes or found.get("status"))
        state = states.deployed_state(found, suspended=False, started=started)
        readings.append(TrialReading(trial, state, found, records, remote.progress))
    return readings


def numbers(reading: TrialReading) -> tuple[Any, ...]:
    status = dataclasses.asdict(reading.status())
    return reading.trial.name, reading.state, reading.result, reading.records, status, reading.reader.offset


def test_many_trials_read_concurrently_read_as_one_at_a_time(trials: list[Trial], gcs: Any) -> None:
    expected = fill(gcs)
    project = open_project()
    order = trials[::-1]  # the readings come in the order asked for
    session = Recording()
    pooled = read_deployed(project, OUTPUTS, order, BucketReads(workers=8, client=client(session)))
    assert [reading.trial.name for reading in pooled] == [trial.name for trial in order]
    assert {reading.trial.index: reading.state for reading in pooled} == expected
    assert [numbers(reading) for reading in pooled] == [numbers(reading) for reading in one_at_a_time(project, order)]
    assert [numbers(r) for r in pooled] == [numbers(r) for r in read_deployed(project, OUTPUTS, order)]
    threads = {thread for _, path, _, thread in session.seen if "alt=media" in path}
    assert len(threads) > 1 and all(thread.startswith("tfcli-gcs") for thread in threads)
    # One listing and one GET per object there is (8 completed + 8 paused: 2; 8 running: 1; 8 failed: 1), no more.
    listings = session.listings()
    assert len(listings) == 1 and "matchGlob" in listings[0] and "fields=items(name,generation,size)" in listings[0]
    assert len(session.downloads()) == 8 * 2 + 8 * 2 + 8 + 8

    running = next(reading for reading in pooled if reading.trial.index == 1)
    assert (running.reader.episodes, len(running.records), running.status().mean_return) == (21, 21, 11.0)
    failed = next(reading for reading in pooled if reading.trial.index == 3)
    assert failed.status().detail == "trial 3 broke"
    new = next(reading for reading in pooled if reading.trial.index == 4)
    assert (new.state, new.result, new.records, new.status().state) == ("new", {}, [], "new")


def test_a_follow_tick_fetches_only_new_bytes_and_new_results(trials: list[Trial], gcs: Any) -> None:
    fill(gcs)
    project = open_project()
    session = Recording()
    reads = BucketReads(workers=4, client=client(session))
    before = {reading.trial.index: reading for reading in read_deployed(project, OUTPUTS, trials, reads)}
    session.downloads()

    assert [reading.state for reading in read_deployed(project, OUTPUTS, trials, reads)] == [
        before[k].state for k in range(40)
    ]
    assert session.listings() != [] and session.downloads() == []  # nothing changed: the listing alone

    # Trial 6 (running) wrote 5 more episodes; trial 0 (completed) got a new result.json generation; trial 9 (new) its
    # first episodes; trial 11's log was written anew after a restart (shorter than what was read).
    offset = before[6].reader.offset
    grown = [float(6 + k) for k in range(26)] + [60.0] * 5
    put(gcs, 6, "progress.jsonl", progress(grown))
    put(gcs, 0, "result.json", result("completed", [7.0] * 3))
    put(gcs, 9, "progress.jsonl", progress([1.0, 2.0]))
    put(gcs, 11, "progress.jsonl", progress([3.0]))
    after = {reading.trial.index: reading for reading in read_deployed(project, OUTPUTS, trials, reads)}
    fetched = session.downloads()
    prefix = f"{SWEEP}/{SWEEP}"
    assert sorted(fetched) == sorted([(f"{prefix}-6/progress.jsonl", f"bytes={offset}-"),
                                      (f"{prefix}-0/result.json", None),
                                      (f"{prefix}-9/progress.jsonl", "bytes=0-"),
                                      (f"{prefix}-11/progress.jsonl", "bytes=0-")])  # fmt: skip
    assert after[6].reader.offset == len(progress(grown)) and after[6].reader.episodes == 31
    assert after[6].records == [json.loads(line) for line in progress(grown).splitlines()]
    assert after[6].status().mean_return == pytest.approx(sum(grown) / len(grown))
    assert after[0].result["episodes"] == 3 and after[0].status().episodes == 3
    assert (after[9].state, after[9].reader.episodes) == ("running", 2)
    assert (after[11].reader.episodes, after[11].reader.offset, len(after[11].records)) == (1, len(progress([3.0])), 1)
    assert [reading.state for reading in before.values()] != [after[k].state for k in range(40)]
    assert after[0].records == before[0].records  # (an unchanged log keeps what was read)

    gcs.bucket(BUCKET).blob(f"{prefix}-0/result.json").delete()  # gone (the trainer starts the trial over)
    assert read_deployed(project, OUTPUTS, trials, reads)[0].result == {}


def test_read_errors_are_tfcli_errors(trials: list[Trial], gcs: Any) -> None:
    fill(gcs)
    project = open_project()
    session = Recording()
    session.refused.append(f"{SWEEP}-7/progress.jsonl")
    with pytest.raises(TfcliError, match=f"cannot read gs://{BUCKET}/{SWEEP}/{SWEEP}-7/progress.jsonl: permission"):
        read_deployed(project, OUTPUTS, trials, BucketReads(workers=8, client=client(session)))
    with pytest.raises(TfcliError, match="cannot list gs://nope/"):
        read_deployed(project, {"bucket": "nope", "experiment": SWEEP}, trials, BucketReads(client=client(session)))
