"""The manifests start a working trainer: the containers' command lines, exactly as rendered, run as local processes
(the pods' DNS names mapped to loopback) and train a tiny distributed experiment to completion.

No Kubernetes API server or Docker here (docs/design.md §12), so this stands in for the cluster, doing only what the
cluster would do and changing only what cannot be the same on one machine — each substitution is explicit below:

- mounts: each container's ``volumeMounts`` become folders under ``tmp_path`` (a ConfigMap's items are written
  into its volume's folder at their ``path``, sub-folders included, with the item's ``mode`` or else the volume's
  ``defaultMode``, 0644, as KeyToPath and ConfigMapVolumeSource document them), the results bucket's CSI volume is
  the bucket (on gcp-storage-emulator, made empty) mounted for the pod by the GCS FUSE stand-in (tests/gcsfuse.py: a
  file reaches the bucket when it is closed), and an argument under a mount path is rewritten to the same path
  under its folder;
- env: as the manifest writes it; ``valueFrom.secretKeyRef`` is read from the rendered Secret, and the indexed
  Job's pods get ``JOB_COMPLETION_INDEX`` as Kubernetes sets it;
- network: every pod has its own network namespace, so all env-worker pods listen on the same fixed ``--port``;
  local processes share one, so each worker's ``--port`` is rewritten to 0 (the OS picks a free port, which the
  worker prints) and the learner's ``--workers`` names ``<job>-<i>.<subdomain>`` — the stable DNS name Kubernetes
  gives indexed pod ``i`` behind the headless Service — are mapped to 127.0.0.1 and that worker's port.

Everything else (``env-worker``/``run``, ``--spec``, ``--output``, ``--host 0.0.0.0``, the token) runs as rendered,
through ``python -m trainer``, the image's entrypoint (the containers set only ``args``).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from infra_testkit import LIBRARY, PROJECT, ZONE

from infra.manifests import context_for, render
from trainer.kernel.spec import Experiment, load_experiment

pytestmark = pytest.mark.slow  # real trainings or trainer processes (README "Development")

ENTRYPOINT = [sys.executable, "-m", "trainer"]  # the image's ENTRYPOINT (docs/design.md §6.1)
BUDGET = 300
# A tiny distributed experiment (CartPole, a PPO small to trace that updates after every 2 episodes).
TINY = {
    "name": "manifest-run",
    "environment": {"level": "CartPole-v1"},
    "agent": {
        "agent": "ppo",
        "batch_size": 2,
        "network": [{"type": "dense", "size": 16, "activation": "tanh"}],
        "learning_rate": 1e-3,
    },
    "run_mode": "distributed",
    "num_workers": 2,
    "total_timesteps": BUDGET,
    "saver_frequency": "100t",
    "seed": 5,
}


def rendered(experiment: Experiment) -> dict[tuple[str, str], dict[str, Any]]:
    """What ``tfcli experiment render`` prints (a fresh token in the Secret), by (kind, name)."""
    ctx = context_for(experiment, project=PROJECT, location=ZONE)
    return {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(render(experiment, ctx))}


class Pod:
    """One pod of a Job, as a local process: its container's args and env resolved as the cluster would."""

    def __init__(
        self,
        objects: dict[tuple[str, str], dict[str, Any]],
        job: str,
        root: Path,
        csi: Callable[[str], Path],
        index: int | None = None,
    ):
        self.csi = csi  # a CSI volume's folder: the named bucket mounted for this pod
        self.spec = objects["Job", job]["spec"]["template"]["spec"]
        (self.container,) = self.spec["containers"]
        assert "command" not in self.container  # args go to the image's entrypoint
        self.args: list[str] = list(self.container["args"])
        self.env = {"JOB_COMPLETION_INDEX": str(index)} if index is not None else {}
        for variable in self.container.get("env", []):
            if "value" in variable:
                self.env[variable["name"]] = variable["value"]
            else:
                ref = variable["valueFrom"]["secretKeyRef"]
                self.env[variable["name"]] = objects["Secret", ref["name"]]["stringData"][ref["key"]]
        self.mounts = self._mount(objects, root / f"{job}-{index if index is not None else 0}")

    def _mount(self, objects: dict[tuple[str, str], dict[str, Any]], root: Path) -> dict[str, Path]:
        volumes = {volume["name"]: volume for volume in self.spec["volumes"]}
        mounts = {}
        for mount in self.container["volumeMounts"]:
            volume = volumes[mount["name"]]
            if "csi" in volume:  # the results bucket
                mounts[mount["mountPath"]] = self.csi(volume["csi"]["volumeAttributes"]["bucketName"])
                continue
            folder = root / mount["name"]
            folder.mkdir(parents=True)
            if "configMap" in volume:
                config_map = objects["ConfigMap", volume["configMap"]["name"]]
                binary = config_map.get("binaryData", {})
                for item in volume["configMap"]["items"]:
                    target = folder / item["path"]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if item["key"] in binary:
                        target.write_bytes(base64.b64decode(binary[item["key"]]))
                    else:
                        target.write_text(config_map["data"][item["key"]])
                    target.chmod(item.get("mode", volume["configMap"].get("defaultMode", 0o644)))
            mounts[mount["mountPath"]] = folder
        return mounts

    def local(self, argument: str) -> str:
        """An argument that names a path under a mount, as the same path under the mount's local folder."""
        for path, folder in self.mounts.items():
            if argument == path or argument.startswith(path + "/"):
                return str(folder) + argument.removeprefix(path)
        return argument

    def option(self, name: str) -> str:
        return self.args[self.args.index(name) + 1]

    def replace_option(self, name: str, value: str) -> None:
        self.args[self.args.index(name) + 1] = value

    def start(self, stdout: Any, log: Path) -> subprocess.Popen[str]:
        """The container's process: the entrypoint with the args, the manifest's env and nothing else, in a folder
        of its own (the image's working directory plays no part)."""
        args = [self.local(argument) for argument in self.args]
        with log.open("w") as stderr:
            return subprocess.Popen(
                [*ENTRYPOINT, *args], cwd=log.parent, env=self.env, stdout=stdout, stderr=stderr, text=True
            )


def run_as_processes(
    experiment: Experiment,
    tmp_path: Path,
    *,
    timeout: float,
    gcs: Any,
    gcsfuse: Callable[..., Path] | None,
    objects: dict[tuple[str, str], dict[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[Any], Path]:
    """Render ``experiment`` (or take its rendered ``objects``), run its pods' containers as local processes until
    the learner exits, the results bucket on the emulator (``gcs``) mounted for each pod that mounts it
    (``gcsfuse``, tests/conftest.py; None: a plain empty folder instead, for checkpoints too large to move through
    the stand-in in a test); (result.json, progress.jsonl lines, the output folder, on the learner's mount). Asserts
    on the way what must hold for the pods to find each other."""
    objects = objects if objects is not None else rendered(experiment)

    def csi(bucket: str) -> Path:
        if gcsfuse is None:
            folder = tmp_path / f"bucket-{bucket}"
            folder.mkdir(exist_ok=True)
            return folder
        if gcs.lookup_bucket(bucket) is None:
            gcs.create_bucket(bucket)
        return gcsfuse(bucket)

    service = objects["Service", "env-workers"]
    (workers_name,) = [name for kind, name in objects if kind == "Job" and name.startswith("env-workers-")]
    (learner_name,) = [name for kind, name in objects if kind == "Job" and name.startswith("learner-")]
    workers_job = objects["Job", workers_name]
    assert service["spec"]["clusterIP"] == "None"  # headless: pod DNS names, no load-balancing

    workers = [Pod(objects, workers_name, tmp_path, csi, index) for index in range(workers_job["spec"]["completions"])]
    learner = Pod(objects, learner_name, tmp_path, csi)
    assert workers[0].args[0] == "env-worker" and learner.args[0] == "run"
    (container_port,) = (port["containerPort"] for port in workers[0].container["ports"])
    assert workers[0].option("--port") == str(container_port) == str(service["spec"]["ports"][0]["targetPort"])
    assert workers[0].option("--host") == "0.0.0.0" and workers[0].env["TRAINER_TOKEN"]  # kept: a token is set

    processes: list[subprocess.Popen[str]] = []
    try:
        # Every pod has its own network namespace; these processes share one: one free port each instead of 7000.
        addresses = {}
        for index, worker in enumerate(workers):
            worker.replace_option("--port", "0")
            process = worker.start(stdout=subprocess.PIPE, log=tmp_path / f"worker-{index}.log")
            processes.append(process)
        for index, (worker, process) in enumerate(zip(workers, processes, strict=True)):
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line.startswith("env-worker listening on 0.0.0.0:"), (tmp_path / f"worker-{index}.log").read_text()
            dns_name = f"{workers_job['metadata']['name']}-{index}.{worker.spec['subdomain']}"
            assert worker.spec["subdomain"] == service["metadata"]["name"]  # what makes the DNS name resolve
            addresses[f"{dns_name}:{container_port}"] = f"127.0.0.1:{line.strip().rsplit(':', 1)[1]}"

        assert learner.option("--workers").split(",") == list(addresses)  # the pods' DNS names, as rendered
        learner.replace_option("--workers", ",".join(addresses.values()))
        trainer = learner.start(stdout=subprocess.DEVNULL, log=tmp_path / "learner.log")
        processes.append(trainer)
        assert trainer.wait(timeout=timeout) == 0, (tmp_path / "learner.log").read_text()

        output = Path(learner.local(learner.option("--output")))
        assert output.parent == learner.mounts["/results"]  # written into the results bucket's mount
        result = json.loads((output / "result.json").read_text())
        progress = [json.loads(line) for line in (output / "progress.jsonl").read_text().splitlines()]
        # The learner tells the workers to stop when the run completes: each pod exits 0, the indexed Job completes.
        assert [process.wait(timeout=15) for process in processes[: len(workers)]] == [0] * len(workers)
        return result, progress, output
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
            process.communicate()


def test_the_rendered_containers_run_as_processes_train_a_distributed_experiment(
    tmp_path: Path, gcs: Any, gcsfuse: Callable[..., Path]
) -> None:
    experiment = Experiment.model_validate(TINY)
    result, progress, output = run_as_processes(experiment, tmp_path, timeout=180, gcs=gcs, gcsfuse=gcsfuse)
    assert (result["status"], result["timesteps"]) == ("completed", BUDGET)
    assert result["updates"] >= 1
    assert {line["worker"] for line in progress} == set(range(TINY["num_workers"]))
    (bucket,) = gcs.list_buckets()  # what the learner wrote is in the bucket
    published = bucket.blob(f"{output.name}/progress.jsonl").download_as_bytes().decode().splitlines()
    assert [json.loads(line) for line in published] == progress


# The flagship, as bundled (agent dqn-visual, network cnn-dqn, the space-invaders environment, 4 env workers), with
# only its budget cut for a test: total_timesteps and saver_frequency (and no cluster change).
SI_BUDGET = 200


def test_the_flagship_space_invaders_dqn_manifests_run_as_processes(tmp_path: Path) -> None:
    """space-invaders-dqn's rendered manifests train to completion as processes: 4 Atari env workers and the DQN
    learner over the trainer's transport. Budget-like keys only are overridden (total_timesteps 200 and a checkpoint
    every 100 timesteps instead of 1,000,000 and every 600 s), so DQN's start_updating (10,000) is never reached:
    this proves the pods run and talk, not that DQN learns (the journeys train it). Its results volume is a plain
    folder: DQN's checkpoints hold its 10,000-state replay memory (hundreds of MB), minutes each through the GCS
    FUSE stand-in and the in-memory emulator on 2 cores; the first test runs the same path through the stand-in."""
    spec = load_experiment(
        "space-invaders-dqn", library=LIBRARY, overrides={"total_timesteps": SI_BUDGET, "saver_frequency": "100t"}
    ).spec
    assert (spec.run_mode, spec.num_workers, spec.environment.level) == ("distributed", 4, "ALE/SpaceInvaders-v5")
    result, progress, output = run_as_processes(spec, tmp_path, timeout=150, gcs=None, gcsfuse=None)
    assert (result["status"], result["timesteps"]) == ("completed", SI_BUDGET)
    assert {line["worker"] for line in progress} <= set(range(spec.num_workers))
    assert any((output / "checkpoints").iterdir())  # checkpoints written through the results mount
