"""``tfcli cluster`` input checks: every mistake exits 2 naming the flag, before Pulumi runs or anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tfcli.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["create", "-f", "single-node-gpu", "-c", "Bad_Name"], "--cluster: 'Bad_Name' is not a valid name"),
        (["create", "-f", "single-node-gpu", "--gpu-type", "k80"], "--gpu-type: 'k80' is retired"),
        (["create", "-f", "single-node-gpu", "--num-nodes", "0"], "--num-nodes"),
        (["create", "-f", "single-node-gpu", "--disk-size", "5"], "--disk-size"),
        (["create", "-f", "single-node-gpu", "--machine-type", "q9-huge"], "--machine-type: 'q9-huge'"),
        (["create", "-f", "no-such-cluster"], "no cluster named 'no-such-cluster'"),
        (["delete"], "give -c NAME (one or more) or --all"),
        (["delete", "-c", "x", "--all"], "give -c NAME (one or more) or --all"),
        (["delete", "-c", "nope"], "--cluster: no shared cluster named 'nope'"),
        (["delete", "-c", "Bad Name"], "--cluster: 'Bad Name' is not a valid name"),
    ],
)
def test_bad_input_exits_2_names_the_flag_and_writes_nothing(project: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["cluster", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert not any((project / "stacks").iterdir())


def test_create_without_a_gcp_project_says_how_to_set_one(project: Path) -> None:
    result = runner.invoke(app, ["cluster", "create", "-f", "single-node-gpu", "-c", "shared-t4"])
    assert result.exit_code == 1
    assert "names no GCP project" in result.stderr and "tfcli init -r PROJECT_ID" in result.stderr
    assert not any((project / "stacks").iterdir())


def test_list_without_clusters(project: Path) -> None:
    result = runner.invoke(app, ["cluster", "list"])
    assert result.exit_code == 0 and "No shared clusters yet" in result.stdout
    assert runner.invoke(app, ["cluster", "list", "--json"]).stdout.strip() == "[]"
