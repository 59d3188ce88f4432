"""On GKE the project's own code travels with the run: its code folders (``code:`` in tfcli.yaml, default ``envs/``)
go into a ConfigMap mounted read-only in the learner's and env-workers' pods, whose trainer imports from it
(``--code``). Proven as the flagship is: the rendered manifests run as local processes (tests/infra/
test_manifest_processes.py) in folders where nothing but the mounted code can provide ``envs``, and train.

Changed code is a new Job name (a restart picks it up); code over the size limit is exit 2 naming the folders;
``image:`` in tfcli.yaml or the cluster spec names the image the pods run.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import invoke
from infra_testkit import PROJECT, ZONE
from test_manifest_processes import run_as_processes

from infra.code_bundle import CODE_DIGEST, CODE_MOUNT, LIMIT_BYTES
from infra.manifests import build_manifests, context_for
from infra.stack_config import settings_from_config
from tfcli.scaffold import EXAMPLE_ENVIRONMENTS
from trainer.kernel.config_keys import CODE_KEY, EXPERIMENT_KEY, PROJECT_KEY, ZONE_KEY
from trainer.kernel.errors import InvalidInput

BUDGET = 300
GRIDWORLD = {
    "name": "gw-gke",
    "environment": {"entry_point": "envs.gridworld:GridWorld", "kwargs": {"size": 4}, "max_episode_steps": 30},
    "agent": {"agent": "ppo", "batch_size": 2, "network": [{"type": "dense", "size": 16, "activation": "tanh"}]},
    "cluster": "single-node",
    "run_mode": "distributed",
    "num_workers": 2,
    "total_timesteps": BUDGET,
    "saver_frequency": "100t",
    "seed": 3,
}


@pytest.fixture
def code_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with the scaffolded envs/ (and its bytecode cache, which is not shipped), made the cwd."""
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE_ENVIRONMENTS, root / "envs")
    (root / "envs" / "__pycache__").mkdir(exist_ok=True)
    (root / "envs" / "__pycache__" / "gridworld.cpython-311.pyc").write_bytes(b"\0" * 64)
    (root / "tfcli.yaml").write_text("name: code-project\n")
    monkeypatch.chdir(root)
    return root


def objects_of(config: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    settings = settings_from_config(config, stack="gw-gke")
    assert settings.experiment is not None
    ctx = context_for(settings.experiment, project=PROJECT, location=ZONE, code=settings.code)
    return {(o["kind"], o["metadata"]["name"]): o for o in build_manifests(settings.experiment, ctx, token="t" * 43)}


def stack_config(**extra: Any) -> dict[str, Any]:
    return {EXPERIMENT_KEY: GRIDWORLD, PROJECT_KEY: PROJECT, ZONE_KEY: ZONE, CODE_KEY: ["envs"], **extra}


def jobs(objects: dict[tuple[str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name.rsplit("-", 1)[0]: job for (kind, name), job in objects.items() if kind == "Job"}


@pytest.mark.slow  # trainer processes (README "Development")
def test_the_rendered_pods_import_the_shipped_code_and_train(
    code_project: Path, tmp_path: Path, gcs: Any, gcsfuse: Callable[..., Path]
) -> None:
    objects = objects_of(stack_config())
    shipped = objects["ConfigMap", "project-code"]
    assert sorted(shipped["data"]) == ["0000-envs___init__.py", "0001-envs_gridworld.py"]  # no __pycache__
    for job in jobs(objects).values():
        pod = job["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        args = container["args"]
        assert args[args.index("--code") + 1] == CODE_MOUNT
        assert {"name": "code", "mountPath": CODE_MOUNT, "readOnly": True} in container["volumeMounts"]
    pods = tmp_path / "pods"
    pods.mkdir()
    experiment = settings_from_config(stack_config(), stack="gw-gke").experiment
    assert experiment is not None
    result, progress, _ = run_as_processes(experiment, pods, timeout=180, gcs=gcs, gcsfuse=gcsfuse, objects=objects)
    assert (result["status"], result["timesteps"]) == ("completed", BUDGET)
    assert {line["worker"] for line in progress} == {0, 1}


def test_changed_code_is_a_new_job_so_a_restart_runs_it(code_project: Path) -> None:
    before = jobs(objects_of(stack_config()))
    gridworld = code_project / "envs" / "gridworld.py"
    gridworld.write_text(gridworld.read_text().replace("-0.01", "-0.02"))
    after = jobs(objects_of(stack_config()))
    for role in ("learner", "env-workers"):
        old, new = before[role]["spec"]["template"], after[role]["spec"]["template"]
        assert old["metadata"]["annotations"][CODE_DIGEST] != new["metadata"]["annotations"][CODE_DIGEST]
        assert before[role]["metadata"]["name"] != after[role]["metadata"]["name"]


def test_code_over_the_limit_is_refused_naming_the_folder(code_project: Path) -> None:
    (code_project / "envs" / "weights.bin").write_bytes(b"\1" * (LIMIT_BYTES + 1))
    with pytest.raises(InvalidInput) as raised:
        settings_from_config(stack_config(), stack="gw-gke")
    (line,) = raised.value.problems
    assert line.startswith("Pulumi.gw-gke.yaml: tfcli:code: envs/ (771 KiB): 771 KiB of code, over the 768 KiB")


def test_tfcli_yaml_code_and_image_reach_the_stack_and_the_pods_and_too_much_code_is_exit_2(lab: Path) -> None:
    (lab / "tfcli.yaml").write_text(
        (lab / "tfcli.yaml").read_text().replace("image: null", "image: europe-docker.pkg.dev/me/tfcli/mine:1")
    )
    assert invoke("experiment", "new", "-f", "gridworld-ppo", "-n", "gw")[0] == 0
    code, stdout, stderr = invoke("experiment", "render", "-e", "gw")
    assert code == 0, stderr
    rendered = {(o["kind"], o["metadata"]["name"]): o for o in yaml.safe_load_all(stdout)}
    assert "0001-envs_gridworld.py" in rendered["ConfigMap", "project-code"]["data"]
    (learner,) = [o for (kind, name), o in rendered.items() if kind == "Job"]
    (container,) = learner["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "europe-docker.pkg.dev/me/tfcli/mine:1"
    stack = yaml.safe_load((lab / "stacks" / "Pulumi.gw.yaml").read_text())["config"]
    assert stack["tfcli:code"] == ["envs"] and stack["tfcli:image"] == "europe-docker.pkg.dev/me/tfcli/mine:1"

    (lab / "envs" / "data.bin").write_bytes(b"\1" * (LIMIT_BYTES + 1))
    code, _, stderr = invoke("experiment", "render", "-e", "gw")
    assert code == 2
    assert "Pulumi.gw.yaml: tfcli:code: envs/ (" in stderr and "over the 768 KiB" in stderr
    assert "Traceback" not in stderr


def test_the_cluster_spec_image_wins(code_project: Path) -> None:
    cluster = {"name": "mine", "machine_type": "e2-standard-4", "image": "example.org/team/trainer:gpu-extra"}
    objects = objects_of(stack_config(**{EXPERIMENT_KEY: {**GRIDWORLD, "cluster": cluster}}))
    images = {c["image"] for job in jobs(objects).values() for c in job["spec"]["template"]["spec"]["containers"]}
    assert images == {"example.org/team/trainer:gpu-extra"}
