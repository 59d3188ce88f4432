"""Test helpers for the GKE backend: the fake ``pulumi`` on PATH and a project that names a GCP project."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

FAKE = Path(__file__).resolve().parent / "fake_pulumi.py"
PASSPHRASE = "correct horse battery staple"
GCP_PROJECT = "tfcli-test-project"
ZONE = "us-central1-a"
# A ready trainer image: the GKE tests run on it unless they pass image=None to make_gke_project, which leaves the
# image to the project's image stack (built by Cloud Build: the cloud_build fixture's stand-in).
READY_IMAGE = "us-central1-docker.pkg.dev/tfcli-test-project/tfcli/trainer:0.1.0-cpu"

# What Pulumi prints for the failures tfcli explains (pulumi 3.x; google's messages from golang.org/x/oauth2).
MISSING_STACK = "error: no stack named 'nope' found"
LOCKED = (
    "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the "
    "lock file with `pulumi cancel`.\n  file:///tmp/.pulumi/locks/organization/tfcli/si1/x.json: created by "
    "someone@host (pid 4242) at 2026-11-21T08:00:00Z"
)
CONFLICT = "error: [409] Conflict: Another update is currently in progress."
NO_CREDENTIALS = (
    "error: pulumi:providers:gcp resource 'default_10_2_0' has a problem: unable to create the client: google: "
    "could not find default credentials. See https://cloud.google.com/docs/authentication/external/set-up-adc "
    "for more information"
)
INVALID_GRANT = (
    'oauth2: "invalid_grant" "reauth related error (invalid_rapt)" "https://support.google.com/a/answer/9368756"'
)


@dataclass
class FakePulumi:
    """The fake CLI's state folder: what it was asked, and failures to make it report."""

    state: Path

    def calls(self) -> list[dict[str, Any]]:
        path = self.state / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def commands(self) -> list[list[str]]:
        """Each call's argv (without --non-interactive), ``version`` calls left out."""
        return [call["argv"] for call in self.calls() if call["argv"][:1] != ["version"]]

    def verbs(self) -> list[str]:
        """``stack select``, ``config set-all``, ``up``, ... in order."""
        found = []
        for argv in self.commands():
            words = [arg for arg in argv if not arg.startswith("-")]
            found.append(" ".join(words[:2]) if words[0] in ("stack", "config") else words[0])
        return found

    def clear(self) -> None:
        (self.state / "calls.jsonl").unlink(missing_ok=True)

    def fail(self, command: str, stderr: str, *, stack: str | None = None, times: int = 1, **extra: Any) -> None:
        control = self.control()
        control.setdefault("fail", []).append(
            {"command": command, "stack": stack, "stderr": stderr, "times": times, **extra}
        )
        (self.state / "control.json").write_text(json.dumps(control))

    def control(self) -> dict[str, Any]:
        path = self.state / "control.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def set_bucket(self, stack: str, bucket: str) -> None:
        control = self.control()
        control.setdefault("buckets", {})[stack] = bucket
        (self.state / "control.json").write_text(json.dumps(control))

    def set_outputs(self, stack: str, extra: dict[str, Any]) -> None:
        """Outputs the stack's next ``up`` adds to the usual ones (a kubeconfig pointing at a fake API server)."""
        control = self.control()
        control.setdefault("extra_outputs", {})[stack] = extra
        (self.state / "control.json").write_text(json.dumps(control))

    def on_suspend(self, stack: str, files: dict[str, str]) -> None:
        """When an ``up`` suspends the stack's Jobs, write these objects to its bucket (as the trainer would)."""
        control = self.control()
        control.setdefault("on_suspend", {})[stack] = files
        (self.state / "control.json").write_text(json.dumps(control))

    def secrets_set(self) -> list[str]:
        """The keys given to ``config set --secret`` (their values came through stdin), in order."""
        return [argv[-1] for argv in self.commands() if argv[:2] == ["config", "set"] and "--secret" in argv]

    def secret(self, stack: str, key: str) -> str | None:
        """What the stack's secret ``key`` decrypts to."""
        path = self.state / "state.json"
        value = json.loads(path.read_text()).get("secrets", {}).get(stack, {}).get(key) if path.exists() else None
        return None if value is None else str(value)

    def stacks(self) -> dict[str, Any]:
        path = self.state / "state.json"
        return dict(json.loads(path.read_text())["stacks"]) if path.exists() else {}


@pytest.fixture
def fake_pulumi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePulumi]:
    """``pulumi`` on PATH is the fake (tfcli's own Pulumi folder is an empty one); the passphrase is set."""
    bin_dir = tmp_path / "fake-bin"
    state = tmp_path / "fake-state"
    bin_dir.mkdir()
    state.mkdir()
    script = bin_dir / "pulumi"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_PULUMI_STATE", str(state))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", PASSPHRASE)
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE_FILE", raising=False)
    monkeypatch.delenv("PULUMI_BACKEND_URL", raising=False)
    monkeypatch.delenv("PULUMI_SECRETS_PROVIDER", raising=False)
    monkeypatch.setenv("TFCLI_PULUMI_ROOT", str(tmp_path / "tfcli-pulumi"))
    yield FakePulumi(state)


def make_gke_project(root: Path, **settings: Any) -> Path:
    """A project (as ``project`` in tests/conftest.py) whose tfcli.yaml names a GCP project, a zone and
    :data:`READY_IMAGE` (``image=None``: none, so runs pull what the image stack builds)."""
    from tfcli.scaffold import PULUMI_YAML

    data = {"name": "test", "gcp_project": GCP_PROJECT, "location": ZONE, "image": READY_IMAGE, **settings}
    data = {key: value for key, value in data.items() if value is not None}
    (root / "tfcli.yaml").write_text(yaml.safe_dump(data))
    (root / "Pulumi.yaml").write_text(PULUMI_YAML.format(name="test"))
    return root


def stack_config(project: Path, stack: str) -> dict[str, Any]:
    return dict(yaml.safe_load((project / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"])


@pytest.fixture
def auth_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``gke-gcloud-auth-plugin`` on PATH, handing out the fake server's token as an ExecCredential."""
    bin_dir = tmp_path / "plugin-bin"
    bin_dir.mkdir()
    from fake_kube import TOKEN

    credential = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential",
                  "status": {"token": TOKEN, "expirationTimestamp": "2099-01-01T00:00:00Z"}}  # fmt: skip
    script = bin_dir / "gke-gcloud-auth-plugin"
    script.write_text(f"#!{sys.executable}\nprint({json.dumps(json.dumps(credential))})\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return script


# What gke-gcloud-auth-plugin prints (glog's fatal line) and exits 1 with when it cannot get a token.
AUTH_PLUGIN_FAILURE = (
    "F1124 09:00:00.000000   4242 cred.go:145] print credential failed with error: Failed to retrieve access "
    "token:: failure while executing gcloud, with args [config config-helper --format=json]: exit status 1"
)


@pytest.fixture
def failing_auth_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``gke-gcloud-auth-plugin`` on PATH that prints :data:`AUTH_PLUGIN_FAILURE` on stderr and exits 1."""
    bin_dir = tmp_path / "failing-plugin-bin"
    bin_dir.mkdir()
    script = bin_dir / "gke-gcloud-auth-plugin"
    body = f"import sys\nprint({AUTH_PLUGIN_FAILURE!r}, file=sys.stderr)\nsys.exit(1)\n"
    script.write_text(f"#!{sys.executable}\n{body}")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return script


def point_kubeconfig_at(fake_pulumi: FakePulumi, stack: str, address: str) -> None:
    """``stack``'s next ``up`` reports a kubeconfig (the program's own, ``infra.cluster.kubeconfig_text``) whose
    server is the fake API server at ``address``, over plain HTTP."""
    from infra.cluster import kubeconfig_text

    config = yaml.safe_load(kubeconfig_text(stack, address, "", GCP_PROJECT, "us-central1-a"))
    config["clusters"][0]["cluster"] = {"server": f"http://{address}"}
    fake_pulumi.set_outputs(stack, {"kubeconfig": yaml.safe_dump(config)})


def serve_api(fake_pulumi: FakePulumi, stack: str) -> Iterator[Any]:
    """A fake API server (``fake_kube.Cluster``) for the test's length, named in ``stack``'s kubeconfig output."""
    from fake_kube import Cluster, serve

    fake = Cluster()
    for address in serve(fake):
        point_kubeconfig_at(fake_pulumi, stack, address)
        yield fake
