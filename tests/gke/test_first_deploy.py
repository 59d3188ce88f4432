"""The first deploy of a new project, step by step: stack init with its secrets provider, config, secrets, up — each
step's failure one clear message — and a missing Pulumi CLI that tfcli offers to install (download stubbed)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gke_testkit import FAKE, GCP_PROJECT, PASSPHRASE, FakePulumi, make_gke_project
from pulumi.automation import PulumiCommand
from semver import VersionInfo
from typer.testing import CliRunner

from tfcli.cli.app import app

runner = CliRunner()


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def new(*extra: str) -> None:
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1", *extra)
    assert code == 0, stderr


def test_a_first_start_inits_the_stack_then_sets_config_and_secrets_then_ups(
    project: Path, fake_pulumi: FakePulumi
) -> None:
    (project / "sa.json").write_text('{"private_key": "k"}')
    make_gke_project(project, credentials="key-file", key_file="sa.json")
    new("--run-mode", "distributed", "-w", "2")
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--detach")
    assert code == 0, stdout + stderr
    calls = [call for call in fake_pulumi.calls() if call["argv"][:1] != ["version"]]
    verbs = fake_pulumi.verbs()
    assert verbs[:7] == [
        "stack select",
        "stack select",
        "stack init",
        "config set",
        "config set",
        "config set-all",
        "up",
    ]
    init, set_all, up = calls[2], calls[5], calls[6]
    assert init["argv"][:3] == ["stack", "init", "si1"] and "--secrets-provider" in init["argv"]
    assert init["argv"][init["argv"].index("--secrets-provider") + 1] == "passphrase"
    # The stack file already holds every tfcli key and the GCP location when the stack is made.
    assert {"tfcli:experiment", "gcp:project", "gcp:region", "gcp:zone"} <= set(init["config_keys"])
    argv = set_all["argv"]
    assert argv[argv.index("tfcli:suspend=false") - 1] == "--plaintext"
    assert "--secret" not in argv  # secrets are piped, one `config set --secret KEY` each, never in argv
    assert sorted(fake_pulumi.secrets_set()) == ["gcp:credentials", "tfcli:transportToken"]
    token = fake_pulumi.secret("si1", "tfcli:transportToken")
    assert token and not any(token in arg for argv in fake_pulumi.commands() for arg in argv)
    assert {"tfcli:suspend", "gcp:credentials", "tfcli:transportToken"} <= set(up["config_keys"])
    text = (project / "stacks" / "Pulumi.si1.yaml").read_text()
    assert "encryptionsalt: v1:" in text and "private_key" not in text

    # Stopped and started again: the token is kept (not made anew), the unchanged key is not handed over again.
    assert invoke("experiment", "stop", "-e", "si1", "--no-download")[0] == 0
    fake_pulumi.clear()
    assert invoke("experiment", "start", "-e", "si1", "--detach")[0] == 0
    assert "stack init" not in fake_pulumi.verbs()
    assert fake_pulumi.secrets_set() == []


def test_a_secrets_provider_named_in_the_environment_needs_no_passphrase(
    gke_project: Path, fake_pulumi: FakePulumi, monkeypatch: pytest.MonkeyPatch
) -> None:
    new()
    kms = f"gcpkms://projects/{GCP_PROJECT}/locations/global/keyRings/tfcli/cryptoKeys/pulumi-secrets"
    monkeypatch.setenv("PULUMI_SECRETS_PROVIDER", kms)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE")
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--detach")
    assert code == 0, stdout + stderr
    init = next(argv for argv in fake_pulumi.commands() if argv[:2] == ["stack", "init"])
    assert init[init.index("--secrets-provider") + 1] == kms
    monkeypatch.delenv("PULUMI_SECRETS_PROVIDER")  # the stack file names it from now on
    assert invoke("experiment", "stop", "-e", "si1", "--no-download")[0] == 0


def run_fake(state: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("PULUMI_CONFIG_PASSPHRASE")}
    environ.update(FAKE_PULUMI_STATE=str(state), **env)
    command = [sys.executable, str(FAKE), "--non-interactive", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environ, check=False)


def test_the_fake_pulumi_rejects_what_pulumi_3_272_rejects(gke_project: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    phrase = {"PULUMI_CONFIG_PASSPHRASE": PASSPHRASE}
    result = run_fake(state, "up", "--yes", "--stack", "si1", "--on-event", "x")
    assert result.returncode != 0 and "unknown flag: --on-event" in result.stderr
    result = run_fake(state, "up", "--yes", "--skip-preview", "--stack", "si1", **phrase)
    assert result.returncode != 0 and "no stack named 'si1' found" in result.stderr  # never initialised
    result = run_fake(state, "stack", "init", "si1", "--secrets-provider", "passphrase")
    assert result.returncode != 0 and "passphrase must be set" in result.stderr
    assert run_fake(state, "stack", "init", "si1", "--secrets-provider", "passphrase", **phrase).returncode == 0
    result = run_fake(state, "stack", "init", "si1", **phrase)
    assert result.returncode != 0 and "already exists" in result.stderr
    result = run_fake(state, "config", "set-all", "--stack", "si1", "--secret", "a:b=c")
    assert result.returncode != 0 and "passphrase must be set" in result.stderr
    result = run_fake(state, "config", "set-all", "--stack", "si1", "--secret", "a:b=c", PULUMI_CONFIG_PASSPHRASE="x")
    assert result.returncode != 0 and "incorrect passphrase" in result.stderr
    assert run_fake(state, "config", "set-all", "--stack", "si1", "--secret", "a:b=c", **phrase).returncode == 0
    result = run_fake(state, "config", "get", "a:b", "--json", "--stack", "si1")
    assert result.returncode != 0 and "passphrase must be set" in result.stderr  # a secret read back
    assert json.loads(run_fake(state, "config", "get", "a:b", "--json", "--stack", "si1", **phrase).stdout) == {
        "value": "c",
        "secret": True,
    }
    result = run_fake(state, "stack", "history", "--json", "--stack", "si1", "--page-size", "1", "--bogus")
    assert result.returncode != 0 and "unknown flag: --bogus" in result.stderr


API_DISABLED = (
    "googleapi: Error 403: Kubernetes Engine API has not been used in project 123456789012 before or it is "
    "disabled. Enable it by visiting https://console.developers.google.com/apis/api/container.googleapis.com/"
    "overview?project=123456789012 then retry. If you enabled this API recently, wait a few minutes for the action "
    "to propagate to our systems and retry., accessNotConfigured"
)
QUOTA = "googleapi: Error 403: Quota 'NVIDIA_T4_GPUS' exceeded.  Limit: 0.0 in region us-central1., quotaExceeded"
REGIONAL_QUOTA = (
    "error creating NodePool: googleapi: Error 403: Insufficient regional quota to satisfy request: resource "
    "\"NVIDIA_T4_GPUS\": request requires '1.0' and is short '1.0'. project has a quota of '0.0' with '0.0' "
    "available. View and manage quotas at https://console.cloud.google.com/iam-admin/quotas?usage=USED&project=p."
)
PERMISSION = (
    "googleapi: Error 403: Required 'container.clusters.create' permission for 'projects/tfcli-test-project'., "
    "forbidden"
)


@pytest.mark.parametrize(
    ("command", "failure", "message", "hint"),
    [
        ("stack init", {"stderr": "error: stack 'si1' already exists"}, "a Pulumi stack 'si1' already exists",
         "run this one again"),
        ("up", {"diagnostic": API_DISABLED},
         "the Kubernetes Engine API (container.googleapis.com) is not enabled in GCP project tfcli-test-project",
         "gcloud services enable container.googleapis.com --project tfcli-test-project"),
        ("up", {"diagnostic": QUOTA}, "the GCP quota NVIDIA_T4_GPUS of project tfcli-test-project is too low in "
         "us-central1", "gcloud compute regions describe us-central1 --project tfcli-test-project"),
        ("up", {"diagnostic": REGIONAL_QUOTA}, "the GCP quota NVIDIA_T4_GPUS", "iam-admin/quotas"),
        ("up", {"diagnostic": PERMISSION}, "lacks a permission (container.clusters.create)", "roles/container.admin"),
        ("config set-all", {"stderr": "error: getting secrets manager: passphrase must be set with "
         "PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE environment variables"},
         "Pulumi could not configure stack 'si1': its secrets need a passphrase", "PULUMI_CONFIG_PASSPHRASE"),
    ],
)  # fmt: skip
def test_each_step_of_a_first_start_fails_with_one_clear_message(
    gke_project: Path, fake_pulumi: FakePulumi, command: str, failure: dict[str, str], message: str, hint: str
) -> None:
    new()
    fake_pulumi.fail(command, failure.pop("stderr", "error: update failed"), stack="si1", **failure)
    code, _, stderr = invoke("experiment", "start", "-e", "si1", "--detach")
    assert code == 1, stderr
    flat = " ".join(stderr.split())
    assert message in flat and hint in flat and "Traceback" not in stderr


def test_a_wrong_passphrase_is_named(
    gke_project: Path, fake_pulumi: FakePulumi, monkeypatch: pytest.MonkeyPatch
) -> None:
    new()
    assert invoke("experiment", "start", "-e", "si1", "--detach")[0] == 0
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", "not the one")
    code, _, stderr = invoke("experiment", "pause", "-e", "si1")
    assert code == 1 and "could not decrypt the secrets of stack 'si1': wrong passphrase" in stderr


# --- a missing Pulumi CLI -----------------------------------------------------------------------------------------


@pytest.fixture
def no_pulumi(
    gke_project: Path, fake_pulumi: FakePulumi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    """No ``pulumi`` on PATH, nothing in tfcli's folder; ``PulumiCommand.install`` stubbed (no internet here): it
    puts the fake CLI where Pulumi's installer would (``<root>/bin/pulumi``)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    root = tmp_path / "home" / ".tfcli" / "pulumi" / "3.272.0"
    monkeypatch.setenv("TFCLI_PULUMI_ROOT", str(root))
    installs: list[dict[str, Any]] = []
    real = PulumiCommand.install.__func__  # type: ignore[attr-defined]

    def install(cls: Any, root: str | None = None, version: Any = None, skip_version_check: bool = False) -> Any:
        import inspect

        inspect.signature(real).bind(cls, root=root, version=version, skip_version_check=skip_version_check)
        installs.append({"root": root, "version": version})
        script = Path(str(root)) / "bin" / "pulumi"
        script.parent.mkdir(parents=True)
        script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
        script.chmod(script.stat().st_mode | stat.S_IEXEC)
        return PulumiCommand(root=root, version=version)

    monkeypatch.setattr(PulumiCommand, "install", classmethod(install))
    new()
    return {"root": root, "installs": installs, "fake": fake_pulumi}


def test_a_missing_pulumi_is_installed_when_the_user_says_yes(
    no_pulumi: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tfcli.cli.pulumi.interactive", lambda: True)
    root = no_pulumi["root"]
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--detach", input="y\n")
    assert code == 0, stdout + stderr
    flat = " ".join(stderr.split())
    assert "https://get.pulumi.com/install.sh" in flat and f"unpacks it into {root}" in flat and "100 MB" in flat
    assert f"Install Pulumi 3.272.0 into {root} now?" in flat
    assert no_pulumi["installs"] == [{"root": str(root), "version": VersionInfo.parse("3.272.0")}]
    assert "up" in no_pulumi["fake"].verbs()  # the command went on, with the installed CLI
    code, _, stderr = invoke("experiment", "stop", "-e", "si1", "--no-download")  # no question any more
    assert code == 0 and "Install Pulumi" not in stderr and len(no_pulumi["installs"]) == 1


def test_a_missing_pulumi_is_not_installed_when_the_user_says_no(
    no_pulumi: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tfcli.cli.pulumi.interactive", lambda: True)
    code, _, stderr = invoke("experiment", "start", "-e", "si1", input="n\n")
    assert code == 1 and "is not installed: it is not on PATH, nor in" in stderr
    assert no_pulumi["installs"] == [] and no_pulumi["fake"].commands() == []


def test_without_a_terminal_a_missing_pulumi_says_which_command_installs_it(no_pulumi: dict[str, Any]) -> None:
    code, _, stderr = invoke("experiment", "start", "-e", "si1")
    flat = " ".join(stderr.split())
    assert code == 1 and "Install Pulumi" not in flat and "`tfcli pulumi install` (`--yes` where" in flat
    assert no_pulumi["installs"] == []
    code, _, stderr = invoke("pulumi", "install")
    assert code == 1 and "tfcli pulumi install --yes" in stderr and no_pulumi["installs"] == []
    code, stdout, _ = invoke("pulumi", "install", "--yes")
    assert code == 0 and f"Installed Pulumi 3.272.0 in {no_pulumi['root']}" in " ".join(stdout.split())
    code, stdout, _ = invoke("pulumi", "install")
    assert code == 0 and "already installed" in stdout and len(no_pulumi["installs"]) == 1
    assert invoke("experiment", "start", "-e", "si1", "--detach")[0] == 0
