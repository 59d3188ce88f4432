"""``python -m trainer sweep-worker``: one of a GKE sweep's ``parallel`` worker pods (docs/design.md §6.6).

It takes its next trial from the bucket (:mod:`trainer.sweep_queue` says which, :mod:`trainer.sweep_claims` makes
it its own), trains it, gives it back and takes the next, until every trial has ended; then it exits 0, and once
every worker has, the Job completes. No process on the user's machine takes part.

Each trial is trained by a fresh ``python -m trainer run --spec <its spec> --output-parent /results/<sweep>`` child
process, with ``TFCLI_RUNG_WAIT=1`` (:mod:`trainer.rung_wait`: this worker starts a waiting trial again). A child
per trial, not the worker's own interpreter: a trial's TensorFlow graph, threads, environment subprocesses and
memory go with it (a trial cannot leak into the next, as the local queue's trials cannot), a crash or an OOM kill
takes one trial and not the worker, and the trainer's exit codes keep their one meaning. What it costs (starting
TensorFlow again, about 5 s a trial) is small next to a trial; a waiting trial started again is judged before
TensorFlow is imported.

A child's exit: 0 ended for good (completed, pruned, paused at ``max_cost``); 143 waiting at a rung or paused by a
signal (released: another worker, or this one, resumes it exactly from its checkpoint); 1 and 2 failed (ended); any
other (killed) a crash: released with one more attempt, ended as failed after :data:`RETRIES`. A trial ended
without a ``result.json`` gets one saying ``failed``, so its siblings stop waiting for it. SIGTERM to the worker
(the Job suspended, the node drained or preempted) goes to the child, which checkpoints; the worker gives the trial
back and exits 143.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from trainer.kernel.spec.early_stop import TrialEarlyStop
from trainer.kernel.spec.outcomes import EXIT_PAUSED
from trainer.result_file import FILENAME as RESULT
from trainer.result_file import read_result
from trainer.rung_scores import SweepRungs
from trainer.rung_wait import WAIT_ENV, standing, waiting_rung
from trainer.sweep_claims import Claims, ClaimState, claims_folder
from trainer.sweep_queue import TrialView, all_ended, next_candidates
from trainer.trial_sections import end_line, start_line

log = logging.getLogger(__name__)

RETRIES = 6  # crashes a trial survives (infra/pod_parts.py RETRIES gave each slot as many)
POLL_SECONDS = 5.0
LEASE_ENV = "TFCLI_CLAIM_LEASE"
POLL_ENV = "TFCLI_WORKER_POLL"


class BucketReader:
    """Reads ``<output parent>/<path>`` from the bucket through the storage API, not the FUSE mount, whose stat
    cache could hide a sibling's new ``result.json`` for a minute; a missing object is ``FileNotFoundError``, as the
    rung rules (:mod:`trainer.rung_scores`) expect of any reader."""

    def __init__(self, bucket: Any, prefix: str, parent: Path) -> None:
        self.bucket, self.prefix, self.parent = bucket, prefix, parent

    def __call__(self, path: Path) -> str:
        from google.api_core.exceptions import NotFound

        name = f"{self.prefix}/{path.relative_to(self.parent).as_posix()}"
        try:
            return str(self.bucket.blob(name).download_as_text())
        except NotFound:
            raise FileNotFoundError(name) from None


class Worker:
    """One worker pod's loop over the sweep's trials (``specs``: the trial spec files its ConfigMap holds)."""

    def __init__(
        self, specs: list[Path], parent: Path, bucket: Any, prefix: str, code: list[str], run: int = 0
    ) -> None:
        from trainer.kernel.spec import load_experiment

        self.parent, self.bucket, self.prefix, self.code = parent, bucket, prefix, code
        self.specs: dict[int, Path] = {}
        self.names: dict[int, str] = {}
        settings: TrialEarlyStop | None = None
        for path in specs:
            experiment = load_experiment(str(path)).spec
            settings = experiment.early_stop
            index = settings.index_of(experiment.name) if settings is not None else None
            if settings is None or index is None:
                from trainer.kernel.errors import InvalidInput

                raise InvalidInput(f"{path}: early_stop: a sweep worker trains the trials of an early-stopped sweep")
            self.specs[index], self.names[index] = path, experiment.name
        assert settings is not None
        self.settings = settings
        self.read = BucketReader(bucket, prefix, parent)
        self.claims = Claims(bucket, claims_folder(prefix, run), f"{socket.gethostname()}-{os.getpid()}")
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = False
        self.poll = POLL_SECONDS

    def survey(self) -> list[TrialView]:
        """Every trial as the bucket says now (one result and one claim read per trial)."""
        rungs = SweepRungs(
            self.settings, [self.parent / self.settings.trial_name(k) for k in range(self.settings.trials)], self.read
        )
        views = []
        for index, name in self.names.items():
            result = self._result(name)
            claim = self.claims.read(name)
            rung = waiting_rung(result)
            decided = rung is not None and standing(rungs, index, rung).decision != "wait"
            status = result.get("status")
            views.append(TrialView(index, status, rung is not None, decided, claim.ended is not None))
        return views

    def _result(self, name: str) -> dict[str, Any]:
        return read_result(self.parent / name, self.read)

    def run(self) -> int:
        """Train until every trial has ended (0), or until stopped by a signal (143)."""
        signal.signal(signal.SIGTERM, self._stop)
        while not self.stopping:
            views = self.survey()
            if all_ended(views):
                log.info("every trial of the sweep has ended")
                return 0
            for index in next_candidates(views, self.settings.seeds):
                claim = self.claims.take(self.names[index])
                if claim is not None:
                    self._train(index, claim)
                    break
            else:
                time.sleep(self.poll)
        return EXIT_PAUSED

    def _stop(self, _signum: int, _frame: Any) -> None:
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def _train(self, index: int, claim: ClaimState) -> None:
        """Train trial ``index`` in a child process while renewing the claim; then release or end the claim."""
        name = self.names[index]
        command = [sys.executable, "-m", "trainer", "run", "--spec", str(self.specs[index])]
        command += ["--output-parent", str(self.parent), *self.code]
        log.info(start_line(name))  # the trial's log, for `tfcli experiment logs -e <trial>`, starts here
        self.child = subprocess.Popen(command, env={**os.environ, WAIT_ENV: "1"})
        held = _Lease(self.claims, name, claim, self.child)
        code = self.child.wait()
        log.info(end_line(name, code))
        kept = held.stop()
        self.child = None
        if kept is None:
            log.warning("%s: another worker took the trial over; leaving it to that worker", name)
            return
        self._ended(name, kept, code)

    def _ended(self, name: str, claim: ClaimState, code: int) -> None:
        """Release or end ``name``'s claim by how its trainer exited."""
        if code in (0, 1, 2):
            if code:
                self._failed(name, f"the trainer exited {code}")
            self.claims.end(name, claim, "completed" if code == 0 else "failed")
        elif code == EXIT_PAUSED:
            log.info("%s: %s; given back", name, self._result(name).get("reason") or "paused")
            self.claims.release(name, claim)
        elif claim.attempts + 1 > RETRIES:
            self._failed(name, f"crashed {claim.attempts + 1} times (last exit {code})")
            self.claims.end(name, claim, "failed")
        else:
            self.claims.release(name, claim, crashed=True)

    def _failed(self, name: str, why: str) -> None:
        """A ``result.json`` saying ``failed`` for a trial that ended without one (its spec refused, crashes)."""
        if self._result(name):
            return
        from google.api_core.exceptions import PreconditionFailed

        blob = self.bucket.blob(f"{self.prefix}/{name}/{RESULT}")
        body = json.dumps({"status": "failed", "error": why}) + "\n"
        with contextlib.suppress(PreconditionFailed):  # the trainer's own came first
            blob.upload_from_string(body, content_type="application/json", if_generation_match=0)


class _Lease:
    """Renews a claim every third of its lease while the trial trains; a lost claim stops the child (another worker
    took the trial over: two writers must never share a results folder)."""

    def __init__(self, claims: Claims, name: str, claim: ClaimState, child: subprocess.Popen[bytes]) -> None:
        self.claims, self.name, self.child = claims, name, child
        self.claim: ClaimState | None = claim
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._renew, daemon=True)
        self.thread.start()

    def _renew(self) -> None:
        while not self.done.wait(self.claims.lease / 3):
            self.claim = self.claims.renew(self.name, self.claim) if self.claim is not None else None
            if self.claim is None:
                if self.child.poll() is None:
                    self.child.send_signal(signal.SIGTERM)
                return

    def stop(self) -> ClaimState | None:
        self.done.set()
        self.thread.join()
        return self.claim


def run_worker(specs: Path, parent: Path, bucket_name: str, prefix: str, code: list[str], run: int = 0) -> int:
    """The ``sweep-worker`` command: every ``*.yaml`` in ``specs`` is a trial. ``TFCLI_CLAIM_LEASE`` and
    ``TFCLI_WORKER_POLL`` (seconds) shorten the lease and the idle poll where minutes are too long (the tests)."""
    from trainer.compat import quiet_python_version_notice

    # The worker imports google-cloud-storage itself, not through TensorFlow: its log starts with its own lines.
    quiet_python_version_notice()
    from trainer.storage_client import bucket

    files = sorted(specs.glob("*.yaml"))
    worker = Worker(files, parent, bucket(bucket_name), prefix, code, run)
    worker.claims.lease = float(os.environ.get(LEASE_ENV) or worker.claims.lease)
    worker.poll = float(os.environ.get(POLL_ENV) or worker.poll)
    return worker.run()
