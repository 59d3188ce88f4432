"""``tfcli init``: a project folder a user can work in, and safe to run again."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tfcli.cli.app import app
from trainer.kernel.spec.library import BUNDLED_CONFIGS

runner = CliRunner()


def test_init_creates_a_local_project(tmp_path: Path) -> None:
    result = runner.invoke(app, ["init", str(tmp_path / "rl-lab")])
    assert result.exit_code == 0, result.output
    root = tmp_path / "rl-lab"
    settings = yaml.safe_load((root / "tfcli.yaml").read_text())
    assert settings["name"] == "rl-lab" and settings["gcp_project"] is None
    assert settings["state_backend"] == "file://./.pulumi"
    assert settings["credentials"] == "application-default"
    for kind in ("experiments", "clusters", "agents", "networks", "environments"):
        bundled = {p.name for p in (BUNDLED_CONFIGS / kind).iterdir()}
        assert {p.name for p in (root / "configs" / kind).iterdir()} == bundled
    assert (root / "experiments").is_dir() and (root / "stacks").is_dir()
    assert "stackConfigDir: stacks" in (root / "Pulumi.yaml").read_text()
    assert "run locally" in result.output or "on this machine" in result.output


def test_rerunning_init_keeps_edits_and_changes_only_given_settings(tmp_path: Path) -> None:
    root = tmp_path / "lab"
    assert runner.invoke(app, ["init", str(root), "-r", "my-gcp-project", "-l", "europe-west4"]).exit_code == 0
    edited = root / "configs" / "agents" / "ppo.json"
    edited.write_text('{"agent": "ppo", "batch_size": 3}')
    (root / "configs" / "agents" / "mine.json").write_text('{"agent": "dqn"}')
    (root / "configs" / "clusters" / "small.yaml").unlink()

    again = runner.invoke(app, ["init", str(root), "-n", "renamed"])
    assert again.exit_code == 0, again.output
    settings = yaml.safe_load((root / "tfcli.yaml").read_text())
    assert (settings["name"], settings["gcp_project"], settings["location"]) == (
        "renamed",
        "my-gcp-project",
        "europe-west4",
    )
    assert edited.read_text() == '{"agent": "ppo", "batch_size": 3}'
    assert (root / "configs" / "agents" / "mine.json").exists()
    assert (root / "configs" / "clusters" / "small.yaml").exists()  # missing pieces come back

    forced = runner.invoke(app, ["init", str(root), "--force"])
    assert forced.exit_code == 0
    assert edited.read_text() == (BUNDLED_CONFIGS / "agents" / "ppo.json").read_text()
    assert (root / "configs" / "agents" / "mine.json").exists()  # the user's own files are never touched


def test_key_file_is_recorded_by_path_never_by_content(tmp_path: Path) -> None:
    key = tmp_path / "key.json"
    key.write_text('{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----"}')
    result = runner.invoke(app, ["init", str(tmp_path / "p"), "-r", "my-gcp-project", "--key-file", str(key)])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "p" / "tfcli.yaml").read_text()
    assert "credentials: key-file" in text and str(key) in text
    assert "PRIVATE KEY" not in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-r", "Not_A_Project"], "--gcp-project: 'Not_A_Project' is not a GCP project ID"),
        (["-n", "Bad Name"], "--name: 'Bad Name' is not a valid name"),
        (["--backend", "s3://x"], "--backend: 's3://x' is not a Pulumi state backend"),
        (["--key-file", "/nonexistent/key.json"], "--key-file: no such file"),
    ],
)
def test_bad_settings_exit_2_and_write_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    root = tmp_path / "p"
    result = runner.invoke(app, ["init", str(root), *args])
    assert result.exit_code == 2
    assert message in result.stderr
    assert not root.exists()


def test_a_gcp_project_given_later_replaces_the_placeholder_in_existing_stack_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "lab"
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    monkeypatch.chdir(root)
    created = runner.invoke(app, ["experiment", "new", "-f", "cartpole-ppo", "-n", "cp1"])
    assert created.exit_code == 0, created.output
    placeholder = root / "stacks" / "Pulumi.cp1.yaml"
    assert yaml.safe_load(placeholder.read_text())["config"]["gcp:project"] == "my-gcp-project"
    assert "gcp:project is a placeholder" in placeholder.read_text()
    users = root / "stacks" / "Pulumi.theirs.yaml"  # a real project the user set by hand is never replaced
    users.write_text(placeholder.read_text().replace("my-gcp-project", "their-project").replace("cp1", "theirs"))
    before = users.read_text()

    result = runner.invoke(app, ["init", ".", "-r", "rl-project-7"])
    assert result.exit_code == 0, result.output
    assert "set gcp:project rl-project-7 in 1 stack file(s) that had the placeholder: stacks/Pulumi.cp1.yaml" in (
        " ".join(result.output.split())
    )
    assert yaml.safe_load(placeholder.read_text())["config"]["gcp:project"] == "rl-project-7"
    assert "placeholder" not in placeholder.read_text()
    assert users.read_text() == before
    again = runner.invoke(app, ["init", ".", "-r", "rl-project-7"])
    assert again.exit_code == 0 and "stack file" not in again.output


def test_a_new_project_defaults_to_a_zone_that_offers_the_default_gpu(tmp_path: Path) -> None:
    """A zone, not a region: a regional cluster runs each pool in three zones and gets no free-tier credit."""
    from trainer.kernel.spec.gpu_zones import zones_offering

    result = runner.invoke(app, ["init", str(tmp_path / "p"), "-r", "my-gcp-project"])
    assert result.exit_code == 0, result.output
    location = yaml.safe_load((tmp_path / "p" / "tfcli.yaml").read_text())["location"]
    assert location == "us-central1-a" and location in zones_offering("nvidia-tesla-t4", "us-central1")
    assert "in us-central1-a;" in result.output


def test_a_region_is_kept_when_asked_for_and_a_rerun_keeps_the_recorded_location(tmp_path: Path) -> None:
    root = tmp_path / "p"
    assert runner.invoke(app, ["init", str(root), "-r", "my-gcp-project", "-l", "us-east1"]).exit_code == 0
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    assert yaml.safe_load((root / "tfcli.yaml").read_text())["location"] == "us-east1"
