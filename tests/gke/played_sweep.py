"""A GKE sweep played end to end without a cloud: the Job the fake ``pulumi up`` applied (rendered from the sweep's
stack file by infra's own code, admitted as the API server admits it), run by the Job controller stand-in
(tests/job_controller.py), its pods and Job served by the fake API server (tests/gke/fake_kube.py), and each pod's
trainer writing to the bucket on the GCS emulator what the real one writes when it ends that way.

With ``mount`` set, each pod is a real trainer process instead: ``python -m trainer`` with the deployed Job's own
container args (``run --spec /etc/tfcli/slot-<i>.yaml --output-parent /results/<sweep>``), ``$(TRIAL_INDEX)`` as
the pod's index (its slot), the container's ``env`` values (``TFCLI_HOURLY_PRICE`` with ``max_cost``; not the
``valueFrom`` ones), ``/etc/tfcli`` a folder holding the deployed ConfigMap's slot specs and ``/results`` the pod's
own GCS FUSE volume: the bucket mounted by the stand-in of tests/gcsfuse.py (``ttl``: its metadata cache), so a file
reaches the bucket when the trainer closes it, as on GKE, and trials see each other's folders only through the
bucket. Its exit code is how the pod ends (a kill by signal as the container runtime reports it, 128 + the signal);
its volume is unmounted then. ``end_trainers`` leaves in ``mount`` the trainers' logs and a copy of what reached the
bucket under the sweep's prefix. A slot in ``oom_killed`` has each of its pods killed (SIGKILL, exit 137, as the
kernel's OOM killer ends a container) as soon as its trial's folder holds a complete checkpoint: the first pod past
its first checkpoint, each retry at once, until the index fails. Without ``mount``, a pod's files go to the folder of
the trial its slot's spec names."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from fake_kube import Cluster
from gcsfuse import mounted
from job_controller import JobController, Outcome

from infra import naming
from infra.sweep_manifests import INDEX_VARIABLE, TRIALS_CONFIG_MAP, slot_file
from trainer.kernel.spec.outcomes import COST_LIMIT_REASON
from trainer.kernel.state import Episode, RunState
from trainer.results import Result
from trainer.sweep_claims import claims_folder

EPISODES = 400  # per finished trial (its 40,000-timestep budget); a trial cut short wrote half of them


def deployed_job(state: Path, sweep: str) -> dict[str, Any]:
    """The sweep's Indexed Job as the fake ``pulumi up`` applied it (rendered by infra's program code, admitted)."""
    stacks = json.loads((state / "state.json").read_text())["stacks"]
    (job,) = stacks[sweep]["jobs"]
    return dict(job)


def deployed_trial_specs(state: Path, sweep: str) -> dict[str, str]:
    """The data of the trials' ConfigMap the same ``pulumi up`` applied: ``slot-<i>.yaml`` -> its trial's spec."""
    stacks = json.loads((state / "state.json").read_text())["stacks"]
    return dict(stacks[sweep]["config_maps"][TRIALS_CONFIG_MAP])


def pod_args(job: dict[str, Any], mounts: dict[str, Path], index: int | None = None) -> list[str]:
    """The Job's container args for pod ``index`` (``$(TRIAL_INDEX)`` set), a path under a mount's path in the pod
    (``mounts``: that path -> the folder here) rewritten to the same path under the folder."""
    (container,) = job["spec"]["template"]["spec"]["containers"]
    args = []
    for arg in container["args"]:
        arg = str(arg).replace(f"$({INDEX_VARIABLE})", str(index))
        for inside, here in mounts.items():
            if arg == inside or arg.startswith(inside + "/"):
                arg = str(here) + arg[len(inside) :]
        args.append(arg)
    return args


def trainer_files(outcome: Outcome, episodes: int) -> dict[str, str]:
    """What the trainer leaves in its results folder when its pod ends with ``outcome``."""
    if outcome.exit_code == 2:  # the spec was refused before anything was written
        return {}
    returns = [100.0] * episodes
    lines = [
        Episode(worker=0, episode=i, timesteps=i * 100, length=100, wall_seconds=i * 0.5, episode_return=100.0)
        for i in range(1, episodes + 1)
    ]
    files = {"progress.jsonl": "".join(json.dumps(line.as_json()) + "\n" for line in lines)}
    state = RunState(timesteps=episodes * 100, episodes=episodes, updates=episodes // 10)
    state.recent_returns.extend(returns)
    if outcome.exit_code == 0 and outcome.message.startswith(COST_LIMIT_REASON):  # a trial at max_cost (its index ends)
        reason = f"{COST_LIMIT_REASON} ($1.00 of $1.00)"
        files["result.json"] = json.dumps(Result.of("paused", state, reason=reason).as_json())
    elif outcome.exit_code == 0:
        files["result.json"] = json.dumps(Result.of("completed", state).as_json())
    elif outcome.exit_code == 3:  # an older trainer at max_cost
        reason = f"{COST_LIMIT_REASON} ($1.00 of $1.00)"
        files["result.json"] = json.dumps(Result.of("paused", state, reason=reason).as_json())
    elif outcome.exit_code == 143:
        files["result.json"] = json.dumps(Result.of("paused", state, reason="SIGTERM").as_json())
    return files  # a crash (OOM kill) leaves its progress and no result


@dataclass
class PlayedSweep:
    """The cluster and the trainers of one sweep, a tick at a time (``tick``), or in a thread (``start``)."""

    stack_state: Path  # the fake pulumi's state folder
    sweep: str
    bucket: Any  # google.cloud.storage Bucket on the emulator
    api: Cluster
    script: dict[int, list[Outcome]]
    controller: JobController | None = None
    written: set[tuple[int, int]] = field(default_factory=set)  # (index, attempt) whose files were written
    stop: threading.Event = field(default_factory=threading.Event)
    problem: BaseException | None = None
    mount: Path | None = None  # pods as trainer processes, each with its GCS FUSE volume; logs and the bucket's copy
    ttl: float | None = 60.0  # the pods' GCS FUSE metadata cache (metadata-cache:ttl-secs; None: never expires)
    volumes: dict[tuple[int, int], contextlib.ExitStack] = field(default_factory=dict)
    oom_killed: set[int] = field(default_factory=set)  # with ``mount``: indexes whose pods are killed (exit 137)
    processes: dict[tuple[int, int], subprocess.Popen[bytes]] = field(default_factory=dict)
    spec_dir: Path | None = None  # with ``mount``: the ConfigMap's files, mounted at /etc/tfcli
    env: dict[str, str] = field(default_factory=dict)  # with ``mount``: more environment for every pod's process
    oom_trial: str | None = None  # workers: the one training this trial is killed once it has a checkpoint
    killed_worker: list[int] = field(default_factory=list)  # the pid of the worker killed for ``oom_trial``

    def deploy(self) -> JobController:
        job = deployed_job(self.stack_state, self.sweep)
        self.controller = JobController(job, self.script)
        if self.mount is not None:
            self.spec_dir = self.mount.parent / f"configmap-{job['metadata']['name']}"
            self.spec_dir.mkdir(parents=True, exist_ok=True)
            for name, text in deployed_trial_specs(self.stack_state, self.sweep).items():
                (self.spec_dir / name).write_text(text)
        self.api.add_namespace(f"tfcli-{self.sweep}")
        self.publish()
        return self.controller

    def tick(self) -> None:
        assert self.controller is not None
        if self.mount is not None:
            self._run_trainers()
            self.controller.tick()
            self.publish()
            return
        self.controller.tick()
        for pod in self.controller.pods:
            if pod.ended is not None and (pod.index, pod.attempt) not in self.written:
                self.written.add((pod.index, pod.attempt))
                cut_short = pod.ended.exit_code != 0
                for name, text in trainer_files(pod.ended, EPISODES // 2 if cut_short else EPISODES).items():
                    self.bucket.blob(f"{self.sweep}/{self.slot_trial(pod.index)}/{name}").upload_from_string(text)
        self.publish()

    def play(self, seconds: float, tick: float = 0.2) -> JobController:
        """Deploy the Job and tick it to its end (at most ``seconds``), ending every trainer after; it must have
        finished (the pods' last log lines say why not)."""
        controller = self.deploy()
        deadline = time.monotonic() + seconds
        try:
            while not controller.finished and time.monotonic() < deadline:
                self.tick()
                time.sleep(tick)
        finally:
            self.end_trainers()
        logs = {log.name: log.read_text()[-3000:] for log in self.mount.glob("*.log")} if self.mount else {}
        assert controller.finished, logs
        return controller

    def slot_trial(self, slot: int) -> str:
        """The trial the Job's slot ``slot`` runs: the ``name`` of the spec the ConfigMap holds for it."""
        text = deployed_trial_specs(self.stack_state, self.sweep)[slot_file(slot)]
        return str(yaml.safe_load(text)["name"])

    def _command(self, index: int, volume: Path) -> list[str]:
        """The Job's container args for pod ``index``, with the ConfigMap and the bucket where the pod mounts them."""
        assert self.controller is not None and self.spec_dir is not None
        return pod_args(self.controller.job, {naming.SPEC_DIR: self.spec_dir, naming.RESULTS_DIR: volume}, index)

    def _run_trainers(self) -> None:
        """Start a trainer for each pod that has none; a pod whose trainer exited ends with its exit code."""
        assert self.controller is not None and self.mount is not None
        for pod in self.controller.active():
            key = (pod.index, pod.attempt)
            if key not in self.processes:
                workers = self.controller.job["spec"]["template"]["spec"]["containers"][0]["args"][0] == "sweep-worker"
                trial = self.slot_trial(pod.index) if not workers else f"worker-{pod.index}-{pod.attempt}"
                self.volumes[key] = stack = contextlib.ExitStack()
                name = f"volume-{pod.index}-{pod.attempt}"
                volume = stack.enter_context(
                    mounted(self.bucket.name, self.mount.parent / name, ttl=self.ttl, log=self.mount / f"{name}.log")
                )
                (container,) = self.controller.job["spec"]["template"]["spec"]["containers"]
                env = {item["name"]: item["value"] for item in container.get("env", []) if "value" in item}
                self.processes[key] = process = subprocess.Popen(
                    [sys.executable, "-m", "trainer", *self._command(pod.index, volume)],
                    env={**os.environ, **env, **self.env},
                    start_new_session=True,  # a container: killing it kills every process in it
                    stdout=subprocess.DEVNULL,
                    stderr=(self.mount / f"{trial}.log").open("ab"),
                )
                if pod.index in self.oom_killed and self.oom_trial is None:
                    checkpoints = volume / self.sweep / trial / "checkpoints"
                    threading.Thread(target=_kill_once_checkpointed, args=(process, checkpoints), daemon=True).start()
                if self.oom_trial is not None and not self.killed_worker:
                    checkpoints = volume / self.sweep / self.oom_trial / "checkpoints"
                    claim = self.bucket.blob(f"{claims_folder(self.sweep, 0)}/{self.oom_trial}.json")
                    args = (process, checkpoints, claim, self.killed_worker)
                    threading.Thread(target=_kill_holder_once_checkpointed, args=args, daemon=True).start()
            code = self.processes[key].poll()
            if code is not None:
                self.volumes[key].close()  # the pod is gone, and its volume with it
            if code is not None and code < 0:
                code = 128 - code  # killed by a signal: the container's exit code
            pod.outcome = Outcome(code if code is not None else 0)
            pod.left = 1 if code is not None else 2  # the controller ends it at this tick once its trainer exited

    def end_trainers(self) -> None:
        """Kill the trainers still running, unmount their volumes, and copy what reached the bucket into ``mount``."""
        for process in self.processes.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # the container, with every process in it (a worker's trainer)
            process.wait()
        for volume in self.volumes.values():
            volume.close()
        if self.mount is not None:
            for blob in self.bucket.list_blobs(prefix=f"{self.sweep}/"):
                if not blob.name.endswith("/"):  # a folder's own object
                    (self.mount / blob.name).parent.mkdir(parents=True, exist_ok=True)
                    blob.download_to_filename(self.mount / blob.name)

    def publish(self) -> None:
        assert self.controller is not None
        namespace = self.api.namespaces[f"tfcli-{self.sweep}"]
        namespace["pods"] = self.controller.pod_documents()
        namespace["jobs"] = [self.controller.job_document()]

    def run(self) -> None:
        assert self.controller is not None
        while not self.controller.finished:
            self.tick()

    def start(self, seconds: float = 0.05) -> threading.Thread:
        """Once the stack is up (the fake pulumi's state has its outputs), deploy and tick every ``seconds``."""

        def play() -> None:
            try:
                while not self.stop.is_set() and not _deployed(self.stack_state, self.sweep):
                    self.stop.wait(seconds)
                if self.stop.is_set():
                    return
                controller = self.deploy()
                while not self.stop.is_set() and not controller.finished:
                    self.tick()
                    self.stop.wait(seconds)
            except BaseException as error:  # reported by the test
                self.problem = error

        thread = threading.Thread(target=play, daemon=True)
        thread.start()
        return thread


def _kill_once_checkpointed(process: subprocess.Popen[bytes], checkpoints: Path) -> None:
    """SIGKILL ``process`` as soon as ``checkpoints`` holds a complete checkpoint (polled every 10 ms, so that a tiny
    run is caught well before it ends)."""
    while process.poll() is None:
        if list(checkpoints.glob("*/COMPLETE")):
            os.killpg(process.pid, signal.SIGKILL)  # the container, with every process in it
            process.wait()
            return
        time.sleep(0.01)


def _kill_holder_once_checkpointed(
    process: subprocess.Popen[bytes], checkpoints: Path, claim: Any, killed: list[int]
) -> None:
    """SIGKILL the worker pod ``process`` (its whole container) once it holds the claim ``claim`` (a worker's name
    ends with its pid, trainer/sweep_worker.py) and its trial has a complete checkpoint; only one worker is killed."""
    while process.poll() is None and not killed:
        if list(checkpoints.glob("*/COMPLETE")):
            with contextlib.suppress(Exception):
                if json.loads(claim.download_as_text()).get("worker", "").endswith(f"-{process.pid}"):
                    killed.append(process.pid)
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
                    return
        time.sleep(0.05)


def _deployed(state: Path, sweep: str) -> bool:
    try:
        stacks = json.loads((state / "state.json").read_text())["stacks"]
    except (OSError, ValueError, KeyError):
        return False
    return bool(stacks.get(sweep, {}).get("outputs"))
