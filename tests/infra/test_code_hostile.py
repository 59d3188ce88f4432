"""The shipped code folder carries the project's own files and nothing else, whatever the folder holds.

A code folder is whatever the project's clone put there, and what it ships lands in a ConfigMap any pod in the
namespace can read, so: a link out of the project (here a private key and the system password file), a ``code:``
folder that is itself a link, and ``tfcli:code`` naming ``../secret`` in a stack file (what ``pulumi up -s`` reads in
CI) are exit 2 naming the file; a link to a folder inside the project ships that folder's files; file modes reach
the pods (the volume item's ``mode``, valid against the Kubernetes schemas); a file name that is not UTF-8 is a
clear error; and the size limit is checked on ``stat`` before a file is read (a sparse 3 GB file, in a child whose
peak memory is measured). Real links, a real bytes file name and a real sparse file, on this machine's file system.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
from cli_kit import invoke
from test_code_shipping import code_project, jobs, objects_of, stack_config  # noqa: F401  (code_project is a fixture)
from test_manifests import K8S_VERSIONS

from infra.stack_config import settings_from_config
from trainer.kernel.config_keys import CODE_KEY
from trainer.kernel.errors import InvalidInput

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


def refusal(config: dict[str, object]) -> str:
    with pytest.raises(InvalidInput) as raised:
        settings_from_config(config, stack="gw-gke")
    (line,) = raised.value.problems
    return line


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A private key outside the project, as ``~/.ssh/id_ed25519`` would be."""
    secret = tmp_path / "home" / ".ssh"
    secret.mkdir(parents=True)
    (secret / "id_ed25519").write_text(PRIVATE_KEY)
    return secret / "id_ed25519"


@pytest.mark.parametrize("render", [["-e", "gw"], ["-s", "cartpole-lr"]], ids=["render-e", "render-s"])
def test_links_out_of_the_project_never_reach_the_config_map(lab: Path, outside: Path, render: list[str]) -> None:
    assert invoke("experiment", "new", "-f", "gridworld-ppo", "-n", "gw")[0] == 0
    assert invoke("experiment", "sweep", "-f", "cartpole-lr", "--no-build")[0] == 0
    stack = "gw" if render[0] == "-e" else "cartpole-lr"
    for name, target in (("id_ed25519", outside), ("passwd", Path("/etc/passwd"))):
        link = lab / "envs" / name
        link.symlink_to(target)
        code, stdout, stderr = invoke("experiment", "render", *render)
        assert code == 2, stderr
        assert f"Pulumi.{stack}.yaml: tfcli:code: envs/{name}: is a link to {target}, outside the project" in stderr
        assert "Traceback" not in stderr and "PRIVATE KEY" not in stdout and "root:" not in stdout
        link.unlink()
    code, stdout, stderr = invoke("experiment", "render", *render)
    assert code == 0, stderr


def test_a_code_folder_that_is_a_link_is_refused(lab: Path, tmp_path: Path) -> None:
    assert invoke("experiment", "new", "-f", "gridworld-ppo", "-n", "gw")[0] == 0
    (lab / "envs").rename(tmp_path / "elsewhere")
    (lab / "envs").symlink_to(tmp_path / "elsewhere")
    code, _, stderr = invoke("experiment", "render", "-e", "gw")
    assert code == 2 and "Traceback" not in stderr
    assert "Pulumi.gw.yaml: tfcli:code: envs/: is a link; list the folder it names instead" in stderr


@pytest.mark.usefixtures("code_project")
def test_a_stack_file_naming_a_folder_outside_the_project_is_refused(outside: Path) -> None:
    root = Path.cwd()
    secret = root.parent / "secret"
    secret.mkdir()
    (secret / "key.py").write_text(PRIVATE_KEY)
    line = refusal(stack_config(**{CODE_KEY: ["../secret"]}))
    assert line.startswith("Pulumi.gw-gke.yaml: tfcli:code: ../secret: is not a folder inside the project")
    line = refusal(stack_config(**{CODE_KEY: json.dumps([str(secret)])}))
    assert line.startswith(f"Pulumi.gw-gke.yaml: tfcli:code: {secret}: is not a folder inside the project")
    (root / "lib").symlink_to(secret.parent)
    line = refusal(stack_config(**{CODE_KEY: ["lib/secret"]}))
    assert line.startswith(f"Pulumi.gw-gke.yaml: tfcli:code: lib/secret: is a link to {secret}, outside the project")


@pytest.mark.usefixtures("code_project")
def test_links_to_folders_inside_the_project_are_followed_and_a_loop_is_refused() -> None:
    root = Path.cwd()
    (root / "shared").mkdir()
    (root / "shared" / "reward.py").write_text("SCALE = 2\n")
    (root / "envs" / "shared").symlink_to(root / "shared")
    (root / "envs" / "gridworld_link.py").symlink_to(root / "envs" / "gridworld.py")
    shipped = objects_of(stack_config())["ConfigMap", "project-code"]["data"]
    assert shipped["0003-envs_shared_reward.py"] == "SCALE = 2\n"
    assert shipped["0002-envs_gridworld_link.py"] == shipped["0001-envs_gridworld.py"]

    (root / "shared" / "back").symlink_to(root / "envs")
    line = refusal(stack_config())
    assert line == "Pulumi.gw-gke.yaml: tfcli:code: envs/shared/back: is a link to a folder that contains it (a loop)"


@pytest.mark.usefixtures("code_project")
def test_file_modes_reach_the_pods_as_valid_kubernetes() -> None:
    root = Path.cwd()
    script = root / "envs" / "fetch_levels.sh"
    script.write_text("#!/bin/sh\necho levels\n")
    script.chmod(0o755)
    (root / "envs" / "gridworld.py").chmod(0o600)
    objects = objects_of(stack_config())
    for obj in objects.values():
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(obj, version, strict=True)
    for job in jobs(objects).values():
        (volume,) = [v for v in job["spec"]["template"]["spec"]["volumes"] if v["name"] == "code"]
        modes = {item["path"]: item["mode"] for item in volume["configMap"]["items"]}
        assert modes == {"envs/__init__.py": 0o644, "envs/fetch_levels.sh": 0o755, "envs/gridworld.py": 0o600}


@pytest.mark.usefixtures("code_project")
def test_a_file_name_that_is_not_utf8_is_a_clear_error() -> None:
    root = Path.cwd()
    with open(os.path.join(os.fsencode(root / "envs"), b"lev\xe9l.py"), "wb") as stream:
        stream.write(b"LEVEL = 1\n")
    line = refusal(stack_config())
    assert line == r"Pulumi.gw-gke.yaml: tfcli:code: envs/lev\xe9l.py: the file name is not UTF-8; rename it" + (
        " (a ConfigMap item's path is text)"
    )


@pytest.mark.usefixtures("code_project")
def test_the_size_limit_is_checked_before_a_file_is_read() -> None:
    """A sparse 3 GB file costs no disk; the child is capped at 1 GiB of address space (so the old read fails fast
    instead of taking 3 GB of a shared machine) and reports its peak resident memory."""
    root = Path.cwd()
    subprocess.run(["truncate", "-s", "3G", str(root / "envs" / "levels.bin")], check=True)
    child = """
import json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from infra.code_bundle import read_code
from trainer.kernel.errors import InvalidInput
try:
    read_code(Path.cwd(), ["envs"], where="Pulumi.gw-gke.yaml: tfcli:code")
except InvalidInput as error:
    # VmHWM: this process's own peak (ru_maxrss would carry the forking pytest worker's from before the exec)
    peak = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("VmHWM:"))
    print(json.dumps({"problem": str(error), "peak_kib": int(peak.split()[1])}))
"""
    ran = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd=root)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert "tfcli:code: envs/ (3,145,731 KiB): 3,145,731 KiB of code, over the 768 KiB" in report["problem"]
    assert report["peak_kib"] < 200 * 1024


def test_render_e_says_the_same_for_a_fifo(lab: Path) -> None:
    assert invoke("experiment", "new", "-f", "gridworld-ppo", "-n", "gw")[0] == 0
    os.mkfifo(lab / "envs" / "feed")
    code, _, stderr = invoke("experiment", "render", "-e", "gw")
    assert code == 2 and "Traceback" not in stderr
    assert "tfcli:code: envs/feed: is not a regular file or folder" in stderr
