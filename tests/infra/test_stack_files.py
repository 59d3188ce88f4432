"""The committed example stacks are exactly what the bundled specs resolve to (regenerate with
``uv run python -m infra.stack_files``), so ``pulumi up -s NAME`` deploys the spec the library promises."""

from __future__ import annotations

import yaml
from infra_testkit import LIBRARY

from infra.stack_files import STACKS_DIR, example_stack_files, main, read_stack_file, stack_name_of
from trainer.kernel.spec import load_cluster, load_experiment, resolve_experiment, to_data
from trainer.kernel.spec.library import BUNDLED_CONFIGS


def test_committed_stack_files_are_the_generated_ones() -> None:
    expected = example_stack_files()
    # one per bundled experiment (tests/cli/test_clean_checkout.py: running one in the repository root adds no file)
    bundled = {f"Pulumi.{name}.yaml" for name in LIBRARY.names("experiments")}
    assert bundled >= {"Pulumi.cartpole-ppo.yaml", "Pulumi.gridworld-ppo.yaml", "Pulumi.space-invaders-dqn.yaml"}
    assert expected.keys() == bundled | {"Pulumi.shared-t4.yaml"}
    for name, text in expected.items():
        assert (STACKS_DIR / name).read_text(encoding="utf-8") == text, (
            f"stale {name}: uv run python -m infra.stack_files"
        )
    assert main(["--check"]) == 0


def test_experiment_stacks_hold_the_resolved_bundled_experiment() -> None:
    for name in LIBRARY.names("experiments"):
        config = read_stack_file(STACKS_DIR / f"Pulumi.{name}.yaml")
        assert config["tfcli:experiment"] == to_data(load_experiment(name, library=LIBRARY).spec)
        # Fully resolved: it validates on its own, with no library to look names up in.
        alone = resolve_experiment(config["tfcli:experiment"], shown="x", base=STACKS_DIR, library=type(LIBRARY)(()))
        assert to_data(alone) == config["tfcli:experiment"]
        assert config["tfcli:suspend"] is False and config["gcp:project"]


def test_the_shared_cluster_stack_holds_the_resolved_cluster() -> None:
    config = read_stack_file(STACKS_DIR / "Pulumi.shared-t4.yaml")
    spec = load_cluster("single-node-gpu", library=LIBRARY, overrides={"name": "shared-t4"}).spec
    assert config["tfcli:cluster"] == to_data(spec)
    assert "tfcli:experiment" not in config


def test_stack_files_are_plain_yaml_named_after_their_stack() -> None:
    for path in STACKS_DIR.glob("Pulumi.*.yaml"):
        data = yaml.safe_load(path.read_text())
        assert list(data) == ["config"]
        assert stack_name_of(path) == path.name[len("Pulumi.") : -len(".yaml")]
    assert (BUNDLED_CONFIGS / "experiments").is_dir()
