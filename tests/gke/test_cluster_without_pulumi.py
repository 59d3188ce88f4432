"""``cluster create`` without the Pulumi CLI leaves no stack file behind, and ``cluster delete`` of a cluster that
Pulumi never created removes its stack file without Pulumi (issue 34).

A self-managed ``file://`` backend keeps each stack's state in ``<backend>/.pulumi/stacks/<project>/<stack>.json``
(Pulumi's docs, "State and backends": the local filesystem backend's layout; ``.json.gz`` with
``PULUMI_SELF_MANAGED_STATE_GZIP``, and a ``.bak`` beside it), so without such a file the stack was never created.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_kit import invoke
from gke_testkit import PASSPHRASE


@pytest.fixture
def no_pulumi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("TFCLI_PULUMI_ROOT", str(tmp_path / "nothing-here"))
    monkeypatch.setenv("PULUMI_CONFIG_PASSPHRASE", PASSPHRASE)


def test_a_failed_first_create_leaves_nothing_behind(gke_project: Path, no_pulumi: None) -> None:
    code, _, stderr = invoke("cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4")
    assert code == 1 and "the Pulumi CLI (`pulumi`) is not installed" in stderr, stderr
    assert not (gke_project / "stacks" / "Pulumi.shared-t4.yaml").exists()
    code, stdout, _ = invoke("cluster", "list")
    assert code == 0 and "No shared clusters" in stdout


def leftover_stack_file(root: Path) -> Path:
    """``stacks/Pulumi.shared-t4.yaml`` as a create that failed before Pulumi made the stack left it (tfcli before
    this fix), or as a teammate committed it without deploying it."""
    from tfcli.project import open_project
    from tfcli.stackfiles.files import cluster_stack
    from trainer.kernel.spec import ConfigLibrary, load_cluster

    library = ConfigLibrary.for_project(root)
    cluster = load_cluster("single-node-gpu", library=library, overrides={"name": "shared-t4"}).spec
    cluster_stack(open_project(root), cluster).write()
    return root / "stacks" / "Pulumi.shared-t4.yaml"


def test_delete_of_a_never_created_cluster_needs_no_pulumi(gke_project: Path, no_pulumi: None) -> None:
    stack_file = leftover_stack_file(gke_project)
    code, stdout, _ = invoke("cluster", "list")
    assert code == 0 and "shared-t4" in stdout
    code, stdout, stderr = invoke("cluster", "delete", "-c", "shared-t4")
    assert code == 0, stderr
    assert "Deleted shared-t4." in stdout
    assert not stack_file.exists()


def test_delete_without_pulumi_keeps_a_cluster_whose_stack_has_state(gke_project: Path, no_pulumi: None) -> None:
    stack_file = leftover_stack_file(gke_project)
    name = yaml.safe_load((gke_project / "Pulumi.yaml").read_text())["name"]
    state = gke_project / ".pulumi" / ".pulumi" / "stacks" / name / "shared-t4.json"
    state.parent.mkdir(parents=True)
    state.write_text("{}")
    code, _, stderr = invoke("cluster", "delete", "-c", "shared-t4")
    assert code == 1 and "the Pulumi CLI (`pulumi`) is not installed" in stderr, stderr
    assert stack_file.exists()
