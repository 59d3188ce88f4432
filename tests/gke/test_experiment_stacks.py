"""The GKE backend at the Automation API's boundary: a fake ``pulumi`` on PATH records every call, so these tests
check the stack names, config values, secrets and the commands ``experiment start/pause/resume/stop`` run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_kit import invoke
from gke_testkit import (
    CONFLICT,
    GCP_PROJECT,
    INVALID_GRANT,
    LOCKED,
    MISSING_STACK,
    NO_CREDENTIALS,
    PASSPHRASE,
    ZONE,
    FakePulumi,
    make_gke_project,
    stack_config,
)


def new(name: str = "si1", *extra: str) -> None:
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", name, *extra)
    assert code == 0, stderr


def test_start_ups_the_experiment_stack_in_the_project_with_its_settings(
    gke_project: Path, fake_pulumi: FakePulumi
) -> None:
    new()
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1")
    assert code == 0, stdout + stderr
    assert "pulumi up si1" in stdout and "24 created" in stdout
    assert "Deployed si1 on GKE (its own cluster si1, namespace tfcli-si1)" in stdout
    # create-or-select, suspend off, up (the Automation API then reads outputs and the summary)
    assert fake_pulumi.verbs() == [
        "stack select", "stack select", "stack init", "config set-all", "up", "stack output", "stack output",
        "stack history",
    ]  # fmt: skip
    calls = [call for call in fake_pulumi.calls() if call["argv"][:1] != ["version"]]
    for call in calls:
        assert call["cwd"] == str(gke_project)
        assert call["env"]["PULUMI_BACKEND_URL"] == f"file://{gke_project}/.pulumi"
        assert call["env"]["PULUMI_CONFIG_PASSPHRASE"] == PASSPHRASE
        argv = call["argv"]
        assert ("--stack" in argv and argv[argv.index("--stack") + 1] == "si1") or argv[:2] == ["stack", "init"]
    assert (gke_project / ".pulumi").is_dir()
    up = next(argv for argv in fake_pulumi.commands() if argv[0] == "up")
    assert {"--yes", "--skip-preview", "--event-log"} <= set(up)
    assert fake_pulumi.commands()[3][-2:] == ["--plaintext", "tfcli:suspend=false"]

    config = stack_config(gke_project, "si1")
    assert (config["gcp:project"], config["gcp:zone"], config["gcp:region"]) == (GCP_PROJECT, ZONE, "us-central1")
    assert config["tfcli:experiment"]["name"] == "si1" and config["tfcli:suspend"] == "false"
    assert "tfcli:sharedClusterStack" not in config
    record = json.loads((gke_project / "experiments" / "si1" / "run.json").read_text())
    assert (record["backend"], record["gke"]["stack"], record["gke"]["shared_cluster"]) == ("gke", "si1", None)


def test_key_file_goes_in_as_the_secret_gcp_credentials_never_in_plain_text_nor_on_a_command_line(
    project: Path, fake_pulumi: FakePulumi
) -> None:
    key = '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nTOPSECRET\\n"}'
    (project / "sa.json").write_text(key)
    make_gke_project(project, credentials="key-file", key_file="sa.json")
    new()
    assert invoke("experiment", "start", "-e", "si1")[0] == 0
    # Never on a command line (every local user can read /proc/PID/cmdline): piped to `config set --secret`.
    assert not any("TOPSECRET" in arg for argv in fake_pulumi.commands() for arg in argv)
    assert fake_pulumi.secrets_set() == ["gcp:credentials"]
    assert fake_pulumi.secret("si1", "gcp:credentials") == key
    up = next(call for call in fake_pulumi.calls() if call["argv"][0] == "up")
    assert up["env"]["GOOGLE_APPLICATION_CREDENTIALS"] == str(project / "sa.json")
    stack_file = (project / "stacks" / "Pulumi.si1.yaml").read_text()
    assert "TOPSECRET" not in stack_file
    assert yaml.safe_load(stack_file)["config"]["gcp:credentials"]["secure"].startswith("v1:")

    # tfcli rewrites its own keys later and keeps Pulumi's: the salt and the ciphertext survive.
    before = yaml.safe_load(stack_file)
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")[0] == 0
    after = yaml.safe_load((project / "stacks" / "Pulumi.si1.yaml").read_text())
    assert after["encryptionsalt"] == before["encryptionsalt"]
    assert after["config"]["gcp:credentials"] == before["config"]["gcp:credentials"]


def test_missing_passphrase_is_explained_before_pulumi_runs(
    gke_project: Path, fake_pulumi: FakePulumi, monkeypatch: pytest.MonkeyPatch
) -> None:
    new()
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE")
    code, _, stderr = invoke("experiment", "start", "-e", "si1")
    assert code == 1
    assert "PULUMI_CONFIG_PASSPHRASE is not set" in stderr and "export PULUMI_CONFIG_PASSPHRASE" in stderr
    assert fake_pulumi.commands() == []


def test_no_pulumi_cli_says_how_to_install_it(
    gke_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new()
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", PASSPHRASE)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("TFCLI_PULUMI_ROOT", str(tmp_path / "nothing-here"))
    code, _, stderr = invoke("experiment", "start", "-e", "si1")
    assert code == 1
    assert "the Pulumi CLI (`pulumi`) is not installed: it is not on PATH, nor in" in stderr
    assert "tfcli pulumi install" in stderr and "install script" in stderr and "package manager" in stderr
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("stderr", "extra", "message", "hint"),
    [
        (MISSING_STACK, {}, "there is no Pulumi stack 'si1'", ""),
        (LOCKED, {}, "another Pulumi update of stack 'si1' is in progress", "pulumi cancel -s si1"),
        (CONFLICT, {}, "another Pulumi update of stack 'si1' is in progress", "wait for it to finish"),
        (NO_CREDENTIALS, {}, "no valid Google Cloud credentials", "gcloud auth application-default login"),
        ("error: update failed", {"diagnostic": INVALID_GRANT}, "no valid Google Cloud credentials", "gcloud auth"),
        (
            "error: update failed",
            {"diagnostic": "googleapi: Error 403: Kubernetes Engine API has not been used in project 1 before"},
            "pulumi could not update stack 'si1':\n         googleapi: Error 403: Kubernetes Engine API",
            "--debug",
        ),
    ],
)
def test_pulumi_failures_become_one_clear_message_with_a_hint(
    gke_project: Path, fake_pulumi: FakePulumi, stderr: str, extra: dict[str, str], message: str, hint: str
) -> None:
    new()
    fake_pulumi.fail("up", stderr, stack="si1", **extra)
    code, _, err = invoke("experiment", "start", "-e", "si1")
    assert code == 1, err
    assert message in err and hint in err
    assert "Traceback" not in err
    if "no stack" not in message:  # status reads the stack: its last update failed
        code, stdout, _ = invoke("experiment", "status", "-e", "si1", "--json")
        assert code == 0 and json.loads(stdout)["state"] == "failed"


def test_an_experiment_without_a_cluster_is_refused_before_pulumi_runs(
    gke_project: Path, fake_pulumi: FakePulumi
) -> None:
    (gke_project / "nocluster.yaml").write_text(
        "name: nc\nenvironment: cartpole\nagent: ppo\nnetwork: mlp2\ntotal_timesteps: 1000\n"
    )
    code, _, stderr = invoke("experiment", "start", "-f", "nocluster.yaml")
    assert code == 2
    assert "cluster: the experiment names no cluster" in stderr and "start -e nc -c CLUSTER" in stderr
    assert fake_pulumi.commands() == []


def test_local_project_starts_locally_and_cluster_flag_needs_gke(project: Path, fake_pulumi: FakePulumi) -> None:
    new()
    code, _, stderr = invoke("experiment", "start", "-e", "si1", "-c", "shared-t4", "--detach")
    assert code == 2 and "--cluster" in stderr and "shared cluster is a GKE cluster" in stderr
    code, _, stderr = invoke("experiment", "start", "-e", "si1", "-c", "shared-t4", "--local")
    assert code == 2 and "--cluster" in stderr
    assert fake_pulumi.commands() == []


def test_start_from_a_spec_on_an_unknown_cluster_writes_nothing(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    code, _, stderr = invoke("experiment", "start", "-f", "cartpole-ppo", "-c", "nope")
    assert code == 2 and "--cluster: no shared cluster named 'nope'" in stderr
    assert not any((gke_project / "experiments").iterdir()) and not any((gke_project / "stacks").iterdir())
    assert fake_pulumi.commands() == []


def test_results_of_a_local_run_are_not_mixed_with_a_gke_run(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    new()
    folder = gke_project / "experiments" / "si1"
    (folder / "results").mkdir()
    (folder / "results" / "result.json").write_text('{"status": "paused", "timesteps": 300}')
    (folder / "run.json").write_text('{"backend": "local", "pid": 0}')
    code, _, stderr = invoke("experiment", "start", "-e", "si1")
    assert code == 1 and "results of a run on this machine" in stderr and "--local" in stderr
    assert fake_pulumi.commands() == []
    code, _, stderr = invoke("experiment", "start", "-e", "si1", "--restart")
    assert code == 0, stderr
    assert not (folder / "results").exists()
    assert json.loads((folder / "run.json").read_text())["backend"] == "gke"


def test_the_key_is_handed_to_pulumi_only_when_it_changed(project: Path, fake_pulumi: FakePulumi) -> None:
    (project / "sa.json").write_text('{"private_key": "one"}')
    make_gke_project(project, credentials="key-file", key_file="sa.json")
    assert invoke("cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4")[0] == 0
    assert fake_pulumi.secrets_set() == ["gcp:credentials"]
    fake_pulumi.clear()
    assert invoke("cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4")[0] == 0
    assert "config get" in fake_pulumi.verbs() and fake_pulumi.secrets_set() == []
    (project / "sa.json").write_text('{"private_key": "two"}')  # a new key
    fake_pulumi.clear()
    assert invoke("cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4")[0] == 0
    assert fake_pulumi.secrets_set() == ["gcp:credentials"]
    assert fake_pulumi.secret("shared-t4", "gcp:credentials") == '{"private_key": "two"}'
    assert not any("private_key" in arg for argv in fake_pulumi.commands() for arg in argv)


def test_stop_after_a_failed_first_update_destroys_what_it_left(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    new()
    fake_pulumi.fail("up", "error: update failed", stack="si1", diagnostic="googleapi: Error 400: quota")
    assert invoke("experiment", "start", "-e", "si1")[0] == 1
    fake_pulumi.clear()
    code, stdout, stderr = invoke("experiment", "stop", "-e", "si1")
    assert code == 0, stderr
    assert "destroy" in fake_pulumi.verbs() and "nothing of it was deployed" in stdout
    assert json.loads(invoke("experiment", "status", "-e", "si1", "--json")[1])["state"] == "stopped"


def test_moving_a_deployed_experiment_through_tfcli_yaml_is_refused(gke_project: Path, fake_pulumi: FakePulumi) -> None:
    new()
    assert invoke("experiment", "start", "-e", "si1")[0] == 0
    make_gke_project(gke_project, location="europe-west4-a")
    fake_pulumi.clear()
    code, _, stderr = invoke("experiment", "start", "-e", "si1")
    assert code == 1 and "moved experiment 'si1' (gcp:region, gcp:zone)" in stderr
    assert "up" not in fake_pulumi.verbs()
    assert stack_config(gke_project, "si1")["gcp:zone"] == ZONE  # the deployed file is left as it was
