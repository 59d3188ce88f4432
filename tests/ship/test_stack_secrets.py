"""CI and tfcli open a stack with the same secrets provider, on the first deploy and on every one after it.

``.github/scripts/stack_secrets.py`` runs before ``pulumi up`` in experiments.yml, against a stand-in ``pulumi``
that keeps stacks in a JSON file and is strict the way the CLI is: unknown commands and flags fail, ``stack init``
refuses an existing stack and writes the provider's keys into the stack file, ``stack rm`` refuses a stack with
resources and deletes the stack file unless ``--preserve-config``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".github" / "scripts" / "stack_secrets.py"
KMS = "gcpkms://projects/p/locations/global/keyRings/tfcli/cryptoKeys/pulumi-secrets"
STACK_TEXT = "# Experiment stack 'exp', written by tfcli.\nconfig:\n  gcp:project: p\n  tfcli:suspend: false\n"

FAKE_PULUMI = textwrap.dedent(
    r"""
    #!/usr/bin/env python3
    import json, os, sys
    from pathlib import Path
    state_file = Path(os.environ["FAKE_PULUMI_STATE"])
    stacks = json.loads(state_file.read_text())
    with open(os.environ["FAKE_PULUMI_CALLS"], "a") as log:
        log.write(json.dumps(sys.argv[1:]) + "\n")
    args = sys.argv[1:]
    if "--non-interactive" not in args:
        sys.exit("error: --non-interactive expected in CI")
    args.remove("--non-interactive")
    def fail(message):
        print(f"error: {message}", file=sys.stderr)
        sys.exit(255)
    def file_of(name):
        return Path("stacks") / f"Pulumi.{name}.yaml"
    if not Path("Pulumi.yaml").is_file():
        fail("no Pulumi.yaml project file found")
    if args == ["stack", "ls", "--json"]:
        print(json.dumps([{"name": name, "current": False} for name in stacks]))
    elif args[:2] == ["stack", "export"] and len(args) == 4 and args[2] == "--stack":
        if args[3] not in stacks:
            fail(f"no stack named '{args[3]}' found")
        print(json.dumps({"version": 3, "deployment": stacks[args[3]]}))
    elif args[:2] == ["stack", "init"] and len(args) in (3, 5):
        name = args[2]
        if name in stacks:
            fail(f"stack '{name}' already exists")
        if len(args) == 5:
            if args[3] != "--secrets-provider":
                fail(f"unknown flag {args[3]}")
            provider = args[4]
        else:
            provider = "passphrase"
        keys = {"secretsprovider": provider, "encryptedkey": "S0VZLWZvci0" + name} if provider.startswith("gcpkms://") \
            else {"encryptionsalt": "v1:salt-of-" + name}
        path = file_of(name)
        text = path.read_text() if path.is_file() else ""
        path.write_text("".join(f"{k}: {v}\n" for k, v in keys.items()) + text)
        stacks[name] = {"manifest": {}}
    elif args[:2] == ["stack", "rm"] and len(args) >= 3:
        name, flags = args[2], set(args[3:])
        if not flags <= {"--yes", "--preserve-config"}:
            fail(f"unknown flags {sorted(flags - {'--yes', '--preserve-config'})}")
        if "--yes" not in flags:
            fail("--yes must be passed in order to remove a stack non-interactively")
        if name not in stacks:
            fail(f"no stack named '{name}' found")
        if stacks[name].get("resources"):
            fail(f"'{name}' still has resources; removal rejected")
        del stacks[name]
        if "--preserve-config" not in flags:
            file_of(name).unlink(missing_ok=True)
    else:
        fail(f"unknown command {args}")
    state_file.write_text(json.dumps(stacks))
    """
).lstrip()


class Project:
    """A checkout with Pulumi.yaml and one stack file, a stand-in ``pulumi`` and its backend."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "stacks").mkdir()
        (root / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
        self.stack_file = root / "stacks" / "Pulumi.exp.yaml"
        self.stack_file.write_text(STACK_TEXT)
        self.bin = root / "bin"
        self.bin.mkdir()
        fake = self.bin / "pulumi"
        fake.write_text(f"#!{sys.executable}\n" + FAKE_PULUMI.split("\n", 1)[1])
        fake.chmod(0o755)
        self.state = root / "backend.json"
        self.calls = root / "calls.jsonl"
        self.backend({})

    def backend(self, stacks: dict[str, Any]) -> None:
        self.state.write_text(json.dumps(stacks))

    def stacks(self) -> dict[str, Any]:
        return dict(json.loads(self.state.read_text()))

    def called(self) -> list[list[str]]:
        if not self.calls.is_file():
            return []
        return [
            [a for a in json.loads(line) if a != "--non-interactive"] for line in self.calls.read_text().splitlines()
        ]

    def run(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
            "FAKE_PULUMI_STATE": str(self.state),
            "FAKE_PULUMI_CALLS": str(self.calls),
        }
        return subprocess.run(
            [sys.executable, str(SCRIPT), *arguments], cwd=self.root, env=env, capture_output=True, text=True
        )

    def document(self) -> dict[str, Any]:
        return dict(yaml.safe_load(self.stack_file.read_text()))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_the_first_deploy_creates_the_stack_with_the_kms_provider_and_asks_to_commit_the_keys(
    project: Project,
) -> None:
    run = project.run("exp", "--provider", KMS)
    assert run.returncode == 0, run.stderr
    assert project.called()[-1] == ["stack", "init", "exp", "--secrets-provider", KMS]
    document = project.document()
    assert document["secretsprovider"] == KMS and document["encryptedkey"]
    assert document["config"] == yaml.safe_load(STACK_TEXT)["config"]
    assert "::notice title=Commit these lines to stacks/Pulumi.exp.yaml::secretsprovider: " + KMS in run.stdout


def test_a_later_deploy_of_an_uncommitted_stack_gets_the_key_from_the_stack_state(project: Project) -> None:
    # The merge's `up` after a PR preview created (and deployed) the stack on another runner: the stack file in
    # git has no secrets provider, the stack's state has it.
    providers = {"type": "cloud", "state": {"url": KMS, "encryptedkey": "Q2lRQUtleUZyb21LTVM="}}
    project.backend({"exp": {"secrets_providers": providers, "resources": [{"urn": "u"}]}})
    run = project.run("exp", "--provider", KMS)
    assert run.returncode == 0, run.stderr
    document = project.document()
    assert (document["secretsprovider"], document["encryptedkey"]) == (KMS, "Q2lRQUtleUZyb21LTVM=")
    header, rest = STACK_TEXT.split("\n", 1)
    keys = f"secretsprovider: {KMS}\nencryptedkey: Q2lRQUtleUZyb21LTVM=\n"
    assert project.stack_file.read_text() == f"{header}\n{keys}{rest}"  # after the comments, where Pulumi puts them
    assert ["stack", "init", "exp", "--secrets-provider", KMS] not in project.called()
    assert project.stacks()["exp"]["resources"]  # nothing removed

    again = project.run("exp", "--provider", KMS)  # idempotent: the next run finds the keys in the file
    assert again.returncode == 0 and "secrets provider committed" in again.stdout
    assert project.document() == document


def test_a_passphrase_stack_gets_its_salt_back(project: Project) -> None:
    project.backend({"exp": {"secrets_providers": {"type": "passphrase", "state": {"salt": "v1:abc:def"}}}})
    assert project.run("exp").returncode == 0
    assert project.document()["encryptionsalt"] == "v1:abc:def"


def test_committed_keys_are_used_as_they_are_without_asking_the_backend(project: Project) -> None:
    project.stack_file.write_text(f"secretsprovider: {KMS}\nencryptedkey: Y29tbWl0dGVk\n" + STACK_TEXT)
    before = project.stack_file.read_text()
    run = project.run("exp", "--provider", "gcpkms://some/other/key")
    assert run.returncode == 0 and "secrets provider committed" in run.stdout
    assert project.stack_file.read_text() == before and project.called() == []


def test_a_stack_created_but_never_deployed_starts_over_with_the_provider(project: Project) -> None:
    project.backend({"exp": {"manifest": {}}})  # `stack init` without a provider in the state, no resources
    run = project.run("exp", "--provider", KMS)
    assert run.returncode == 0, run.stderr
    assert ["stack", "rm", "exp", "--yes", "--preserve-config"] in project.called()
    assert project.document()["secretsprovider"] == KMS
    assert project.document()["config"] == yaml.safe_load(STACK_TEXT)["config"]  # the stack file was preserved


def test_a_deployed_stack_without_a_recorded_provider_is_an_error_not_a_new_key(project: Project) -> None:
    project.backend({"exp": {"resources": [{"urn": "u"}]}})
    run = project.run("exp", "--provider", KMS)
    assert run.returncode == 1
    assert "::error::stack exp: the stack has resources but its state records no secrets provider" in run.stderr
    assert "secretsprovider" not in project.document() and "exp" in project.stacks()


def test_tfcli_rewriting_a_stack_file_keeps_the_secrets_provider_keys(tmp_path: Path) -> None:
    """tfcli and CI drive the same stack: `tfcli experiment new/start` rewrites its keys and keeps Pulumi's."""
    from tfcli.project import Project as Settings
    from tfcli.project import ProjectDir
    from tfcli.stackfiles.files import experiment_stack, stack_path
    from trainer.kernel.spec import load_experiment

    project = ProjectDir(tmp_path, Settings(name="proj", gcp_project="my-project", location="us-central1-a"))
    project.stacks.mkdir()
    spec = load_experiment("cartpole-ppo").spec
    experiment_stack(project, spec).file.write()
    path = stack_path(project, spec.name)
    keys = f"secretsprovider: {KMS}\nencryptedkey: Q2lRQUtleQ==\n"
    path.write_text(keys + path.read_text())  # what `pulumi stack init --secrets-provider` adds

    changed = experiment_stack(project, spec.model_copy(update={"total_timesteps": 5000}))
    assert changed.file.write()
    document = yaml.safe_load(path.read_text())
    assert (document["secretsprovider"], document["encryptedkey"]) == (KMS, "Q2lRQUtleQ==")
    assert document["config"]["tfcli:experiment"]["total_timesteps"] == 5000
