"""A renamed component keeps a deployed stack's resources: every resource an earlier version declared is still some
resource's URN or one of its aliases, as the Pulumi engine resolves them (a component's own alias, and the aliases
its children inherit from it, since a child's URN names its parent's type).

The earlier URNs are data (fixtures/urns_before_workloads.json): the stacks of a fresh project planned offline by the
version before ``Workloads`` replaced ``ExperimentWorkloads`` and ``SweepWorkloads``. Removing an alias, or renaming a
child without one, fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tfcli.cli.app import app

BEFORE = json.loads((Path(__file__).parent / "fixtures" / "urns_before_workloads.json").read_text())["urns"]


def _swap_type(urn: str, position: int, new_type: str) -> str:
    """``urn`` with the ``position``-th type of its type chain (``parent$child``) replaced by ``new_type``."""
    head, chain, name = urn.rsplit("::", 2)
    types = chain.split("$")
    types[position] = new_type
    return f"{head}::{'$'.join(types)}::{name}"


def known_as(resources: list[dict[str, Any]]) -> dict[str, str]:
    """Every URN the engine would match to a resource (its own and its aliases'), mapped to the resource's URN."""
    by_urn = {resource["urn"]: resource for resource in resources}
    names: dict[str, str] = {}
    for resource in resources:
        urn = resource["urn"]
        names[urn] = urn
        for alias in resource["options"].get("aliases", []):
            if "urn" in alias:
                names[alias["urn"]] = urn
            elif set(alias) == {"type"}:
                names[_swap_type(urn, -1, alias["type"])] = urn
        parent = by_urn.get(resource.get("parent_urn") or "")
        for alias in (parent or {}).get("options", {}).get("aliases", []):
            if set(alias) == {"type"}:  # inherited: the child's URN names the parent's old type
                names[_swap_type(urn, -2, alias["type"])] = urn
    return names


def plan_of(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["experiment", "plan", *args, "--json"])
    assert result.exit_code == 0, result.output
    resources = json.loads(result.stdout)["resources"]
    by_name = {(r["type"], r["name"]): r["urn"] for r in resources}
    for resource in resources:
        resource["parent_urn"] = by_name.get((resource["parent_type"], resource["parent"]))
    return list(resources)


@pytest.mark.parametrize(
    ("flag", "name"), [("-f", "cartpole-ppo"), ("-f", "space-invaders-dqn"), ("-s", "cartpole-lr")]
)
def test_every_resource_of_an_earlier_stack_is_kept_under_its_new_name_or_an_alias(
    lab: Path, flag: str, name: str
) -> None:
    if flag == "-s":
        assert CliRunner().invoke(app, ["experiment", "sweep", "-f", name, "--no-build"]).exit_code == 0
    resources = plan_of(flag, name)
    names = known_as(resources)
    lost = [urn for urn in BEFORE[name] if urn not in names]
    assert not lost, f"{len(lost)} resources of a deployed {name} stack would be replaced: {lost[:3]}"
    kept = {names[urn] for urn in BEFORE[name]}
    assert len(kept) == len(BEFORE[name]), "two earlier resources map onto one"
    renamed = [urn for urn in BEFORE[name] if names[urn] != urn]
    assert renamed, "the test no longer sees the rename it guards"  # the Workloads subtree moved to its new type


def test_the_check_fails_without_the_alias() -> None:
    parent = {
        "urn": "urn:pulumi:s::tfcli::pulumi:pulumi:Stack$tfcli:infra:Workloads::w",
        "options": {"aliases": [{"type": "tfcli:infra:ExperimentWorkloads"}]},
    }
    child = {"urn": "urn:pulumi:s::tfcli::tfcli:infra:Workloads$kubernetes:core/v1:Namespace::w-namespace"}
    child.update(options={}, parent_urn=parent["urn"])
    old_child = "urn:pulumi:s::tfcli::tfcli:infra:ExperimentWorkloads$kubernetes:core/v1:Namespace::w-namespace"
    assert old_child in known_as([parent, child])
    parent["options"] = {}
    assert old_child not in known_as([parent, child])
