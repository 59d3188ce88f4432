"""GitHub Actions workflows: actionlint-clean, keyless, and deploying exactly the changed stacks."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("changed_stacks", ROOT / ".github" / "scripts" / "changed_stacks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def actionlint() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("actionlint is not installed in the project environment (a dev dependency in pyproject.toml)")
    return found


def workflow(name: str) -> dict:  # type: ignore[type-arg]
    data = yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return dict(data)


def test_the_four_workflows_exist() -> None:
    assert [w.name for w in WORKFLOWS] == ["ci.yml", "experiments.yml", "image.yml", "reap.yml"]


def test_the_reap_workflow_runs_the_users_command_on_a_schedule_once_turned_on() -> None:
    """The scheduled job runs `tfcli experiment reap` itself (downloads, then destroys) and keeps what it downloaded;
    it is off until the repository variable turns it on, and never runs twice at once."""
    flow = workflow("reap.yml")
    assert flow["on"]["schedule"] and "workflow_dispatch" in flow["on"]
    job = flow["jobs"]["reap"]
    assert job["if"] == "vars.TFCLI_REAP == 'on'" and flow["concurrency"]["cancel-in-progress"] is False
    runs = [str(step.get("run", "")) for step in job["steps"]]
    assert "uv run --no-dev tfcli experiment reap" in runs
    upload = next(s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["if"] == "always()" and upload["with"]["path"] == "experiments/*/results/"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actionlint_has_no_findings(path: Path) -> None:
    run = subprocess.run([actionlint(), "-oneline", str(path)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


def test_actionlint_would_catch_a_mistake(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ github.evnt }}\n"
    )
    run = subprocess.run([actionlint(), "-oneline", str(broken)], capture_output=True, text=True)
    assert run.returncode == 1 and 'property "evnt" is not defined' in run.stdout


SAMPLE_DIFF = "\n".join(
    [
        "M\tstacks/Pulumi.cartpole-ppo.yaml",
        "A\tstacks/Pulumi.new-exp.yaml",
        "D\tstacks/Pulumi.old-exp.yaml",
        "R087\tstacks/Pulumi.before.yaml\tstacks/Pulumi.after.yaml",
        "M\tstacks/README.md",
        "M\tstacks/nested/Pulumi.nested.yaml",
        "M\tPulumi.yaml",
        "M\tstacks/Pulumi.Bad_Name.yaml",
        "C100\tstacks/Pulumi.cartpole-ppo.yaml\tstacks/Pulumi.copy.yaml",
        "",
    ]
)


def test_changed_stacks_are_exactly_the_added_or_changed_stack_files() -> None:
    assert load_script().changed_stacks(SAMPLE_DIFF) == ["after", "cartpole-ppo", "copy", "new-exp"]


def test_changed_stacks_from_a_real_git_diff(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.invalid")
    git("config", "user.name", "t")
    (tmp_path / "stacks").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "stacks" / f"Pulumi.{name}.yaml").write_text(f"config:\n  tfcli:suspend: false\n# {name}\n")
    git("add", ".")
    git("commit", "-qm", "base")
    (tmp_path / "stacks" / "Pulumi.a.yaml").write_text("config:\n  tfcli:suspend: true\n")
    (tmp_path / "stacks" / "Pulumi.b.yaml").unlink()
    (tmp_path / "stacks" / "Pulumi.d.yaml").write_text("config: {}\n")
    shutil.copy(ROOT / "stacks" / "Pulumi.shared-t4.yaml", tmp_path / "stacks" / "Pulumi.e.yaml")  # a cluster stack
    git("add", "-A")
    git("commit", "-qm", "change")
    run = subprocess.run(
        [sys.executable, str(ROOT / ".github" / "scripts" / "changed_stacks.py"), "HEAD~1", "HEAD"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.splitlines() == ['clusters=["e"]', 'stacks=["a", "d"]']


def test_cluster_stacks_are_told_from_the_others_by_tfcli_cluster(tmp_path: Path) -> None:
    script = load_script()
    committed = {path.name: script.is_cluster_stack(path.read_text()) for path in (ROOT / "stacks").glob("Pulumi.*")}
    assert committed == {
        "Pulumi.shared-t4.yaml": True, "Pulumi.cartpole-ppo.yaml": False, "Pulumi.space-invaders-dqn.yaml": False,
        "Pulumi.gridworld-ppo.yaml": False,
    }  # fmt: skip
    assert script.is_cluster_stack("# c\nconfig:\n\n    gcp:project: p\n    tfcli:cluster:\n      name: c\n")
    assert not script.is_cluster_stack("config:\n  tfcli:experiment:\n    tfcli:cluster: x\n")  # not a config key
    assert not script.is_cluster_stack("config: {}\n") and not script.is_cluster_stack("tfcli:cluster: x\n")
    (tmp_path / "stacks").mkdir()
    for name in ("shared-t4", "cartpole-ppo"):
        shutil.copy(ROOT / "stacks" / f"Pulumi.{name}.yaml", tmp_path / "stacks")
    assert script.split_clusters(["cartpole-ppo", "shared-t4"], tmp_path) == (["shared-t4"], ["cartpole-ppo"])


def test_cluster_stacks_deploy_before_the_experiment_and_sweep_stacks() -> None:
    """A new shared cluster and an experiment on it, merged together: the experiment's stack reads the cluster
    stack's outputs (a StackReference), so it must not start before the cluster's deploy has ended."""
    jobs = workflow("experiments.yml")["jobs"]
    outputs = jobs["stacks"]["outputs"]
    assert outputs == {"clusters": "${{ steps.pick.outputs.clusters }}", "stacks": "${{ steps.pick.outputs.stacks }}"}
    clusters, deploy = jobs["clusters"], jobs["deploy"]
    assert clusters["needs"] == "stacks" and clusters["if"] == "needs.stacks.outputs.clusters != '[]'"
    assert clusters["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.clusters) }}"
    assert deploy["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    assert "clusters" in deploy["needs"]
    # It runs when no cluster changed (the clusters job skipped), but not after a failed cluster, nor cancelled.
    condition = deploy["if"]
    for part in ("!cancelled()", "needs.clusters.result != 'failure'", "needs.stacks.outputs.stacks != '[]'"):
        assert part in condition
    assert clusters["steps"] == deploy["steps"] and clusters["concurrency"] == deploy["concurrency"]
    assert clusters["env"] == deploy["env"] and clusters["timeout-minutes"] == deploy["timeout-minutes"]


def test_experiments_workflow_triggers_permissions_and_one_deploy_per_stack() -> None:
    flow = workflow("experiments.yml")
    assert flow["on"]["pull_request"]["paths"] == ["stacks/Pulumi.*.yaml"]
    assert flow["on"]["push"] == {"branches": ["main"], "paths": ["stacks/Pulumi.*.yaml"]}
    assert flow["on"]["workflow_dispatch"]["inputs"]["action"]["options"] == ["up", "destroy", "pause", "resume"]
    assert flow["permissions"]["id-token"] == "write"
    deploy = flow["jobs"]["deploy"]
    assert deploy["concurrency"] == {"group": "stack-${{ matrix.stack }}", "cancel-in-progress": False}
    pulumi = next(s for s in deploy["steps"] if "command" in s.get("with", {}))
    assert str(pulumi["uses"]).startswith("pulumi/actions@")
    assert pulumi["with"]["cloud-url"] == "${{ vars.PULUMI_BACKEND_URL }}"


@pytest.mark.parametrize("name", ["experiments.yml", "image.yml", "reap.yml"])
def test_google_authentication_is_workload_identity_federation_never_a_key(name: str) -> None:
    text = (ROOT / ".github" / "workflows" / name).read_text()
    flow = workflow(name)
    steps = [s for job in flow["jobs"].values() for s in job["steps"]]
    auth = [s for s in steps if str(s.get("uses", "")).startswith("google-github-actions/auth@")]
    assert auth and all(set(s["with"]) == {"workload_identity_provider", "service_account"} for s in auth)
    assert "credentials_json" not in text and "secrets.GCP" not in text


def test_image_workflow_publishes_what_the_stacks_run_by_default() -> None:
    """The release build: the version's tag, and the tag the image stack builds from the same context (the context
    digest the workflow's own step prints), of the same Dockerfile and context folder."""
    import subprocess
    import sys

    from infra.image import built_image, default_image
    from infra.image_context import DOCKERFILE, build_context
    from tfcli import __version__

    flow = workflow("image.yml")
    build = flow["jobs"]["build"]
    assert build["strategy"]["matrix"]["variant"] == ["cpu", "gpu"]
    push = next(s for s in build["steps"] if str(s.get("uses", "")).startswith("docker/build-push-action@"))
    assert push["with"]["context"] == "." and push["with"]["file"] == DOCKERFILE
    step = next(s for s in build["steps"] if s.get("id") == "context")
    printed = subprocess.run(
        [sys.executable, "-m", "infra.image_context"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert "python3 -m infra.image_context" in step["run"] and printed == build_context(ROOT).short
    published = (
        push["with"]["tags"]
        .replace("${{ env.IMAGE }}", build["env"]["IMAGE"])
        .replace("${{ vars.GCP_REGION }}", "europe-west4")
        .replace("${{ vars.GCP_PROJECT }}", "my-project")
        .replace("${{ steps.version.outputs.version }}", __version__)
        .replace("${{ steps.context.outputs.context }}", printed)
    )
    for variant, gpu in (("cpu", False), ("gpu", True)):
        released = default_image(project="my-project", location="europe-west4-a", gpu=gpu)
        built = built_image(project="my-project", location="europe-west4-a", context=printed, variant=variant)
        assert published.replace("${{ matrix.variant }}", variant).split() == [released, built]
    assert flow["on"] == {"push": {"tags": ["v*"]}}


def test_ci_workflow_runs_the_readme_commands() -> None:
    text = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    for command in ("ruff check .", "ruff format --check .", "uv run mypy"):
        assert command in text
    assert "uv run pytest" in (ROOT / ".ci" / "run").read_text()


def test_ci_workflow_tests_through_the_ci_entry_point() -> None:
    """docs/ci.md: `.ci/run` is the CI entry point, so the test job runs it (and nothing else runs the tests)."""
    runs = [step.get("run", "") for step in workflow("ci.yml")["jobs"]["test"]["steps"]]
    assert [run for run in runs if ".ci/run" in run] == ['sudo env "PATH=$PATH" bash .ci/run']
    assert not any("pytest" in run for run in runs)


def deploy_steps() -> list[dict]:  # type: ignore[type-arg]
    return list(workflow("experiments.yml")["jobs"]["deploy"]["steps"])


def step_index(steps: list[dict], match: str) -> int:  # type: ignore[type-arg]
    found = [i for i, s in enumerate(steps) if match in str(s.get("uses", "")) + str(s.get("run", ""))]
    assert len(found) == 1, (match, found)
    return found[0]


def test_every_deploy_gives_the_stack_its_secrets_provider_before_pulumi_opens_it() -> None:
    """pulumi/actions' secrets-provider only applies when it creates the stack, in the runner's uncommitted stack
    file: the step before the Pulumi command restores it every time (.github/scripts/stack_secrets.py)."""
    flow = workflow("experiments.yml")
    deploy = flow["jobs"]["deploy"]
    steps = deploy["steps"]
    pulumi_steps = [i for i, s in enumerate(steps) if str(s.get("uses", "")).startswith("pulumi/actions@")]
    install, command = pulumi_steps
    assert set(steps[install]["with"]) == {"pulumi-version"}  # no command: installs the CLI only
    secrets = step_index(steps, ".github/scripts/stack_secrets.py")
    order = [
        step_index(steps, "actions/checkout@"),
        step_index(steps, "uv sync --no-dev"),
        step_index(steps, "google-github-actions/auth@"),  # KMS and the state bucket need the credentials
        step_index(steps, "tfcli:suspend"),
        install,
        secrets,
        command,
    ]
    assert order == sorted(order) and command == secrets + 1
    step = steps[secrets]
    script = 'uv run --no-dev python .github/scripts/stack_secrets.py "$STACK" --provider "$SECRETS_PROVIDER"'
    assert step["run"] == script
    assert step["env"] == {"STACK": "${{ matrix.stack }}", "SECRETS_PROVIDER": "${{ vars.PULUMI_SECRETS_PROVIDER }}"}
    assert deploy["env"]["PULUMI_BACKEND_URL"] == "${{ vars.PULUMI_BACKEND_URL }}"  # the script's pulumi uses it
    options = steps[command]["with"]
    assert options["stack-name"] == "${{ matrix.stack }}" and options["command"] == "${{ steps.what.outputs.command }}"
    # Nothing else may create the stack (it would be created without the keys reaching a committed file).
    assert "secrets-provider" not in options and str(options.get("upsert", "false")).lower() == "false"


def test_the_pulumi_cli_is_the_version_of_the_pinned_sdk() -> None:
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    sdk = next(pin.split("==", 1)[1] for pin in pins if re.match(r"pulumi==", pin))
    flow = workflow("experiments.yml")
    assert flow["env"]["PULUMI_VERSION"] == sdk
    for step in deploy_steps():
        if str(step.get("uses", "")).startswith("pulumi/actions@"):
            assert step["with"]["pulumi-version"] == "${{ env.PULUMI_VERSION }}"


UV_COMMAND = re.compile(r"\buv\s+(run|sync)\b([^\n;&|]*)")
DEPLOY_WORKFLOWS = ["experiments.yml", "image.yml"]


@pytest.mark.parametrize("name", DEPLOY_WORKFLOWS)
def test_deploy_workflows_never_bring_the_dev_group_back(name: str) -> None:
    """`uv run` syncs the default groups (dev included) unless told not to: every uv command in a deploy workflow
    leaves dev out, and UV_NO_DEV covers the uv commands Pulumi's uv toolchain runs itself."""
    flow = workflow(name)
    for job in flow["jobs"].values():
        env = {**flow.get("env", {}), **job.get("env", {})}
        for step in job["steps"]:
            step_env = {**env, **step.get("env", {})}
            for verb, arguments in UV_COMMAND.findall(str(step.get("run", ""))):
                assert "--no-dev" in arguments.split(), f"{name}: `uv {verb}{arguments}` without --no-dev"
                assert str(step_env.get("UV_NO_DEV")) == "1", f"{name}: `uv {verb}` in a job without UV_NO_DEV=1"
            assert not re.search(r"--(only-dev|all-groups|group\s+dev)", str(step.get("run", "")))
    if name == "experiments.yml":
        assert flow["env"]["UV_NO_DEV"] == "1"
        assert any("uv sync --no-dev" in str(s.get("run", "")) for s in deploy_steps())


def test_uv_no_dev_keeps_uv_run_from_installing_the_dev_group(tmp_path: Path) -> None:
    """What the workflow relies on, with the real uv (the version the workflows install) and a cached package."""
    from importlib.metadata import version

    # Not skipped when uv is missing or another version: a skip here would hide the very failure it tests for.
    uv = shutil.which("uv")
    wanted = workflow("experiments.yml")["env"]["UV_VERSION"]
    assert uv is not None, f"uv is not on PATH: install uv {wanted}, the version the workflows use"
    found = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout.split()[1]
    assert found == wanted, f"uv on PATH is {found}, the workflows' is {wanted}: this test checks that one's behaviour"
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "deploy"\nversion = "0"\nrequires-python = ">=3.11"\ndependencies = []\n'
        f'[dependency-groups]\ndev = ["iniconfig=={version("iniconfig")}"]\n[tool.uv]\npackage = false\n'
    )
    env = {**os.environ, "UV_OFFLINE": "1", "UV_PYTHON": sys.executable}
    env.pop("VIRTUAL_ENV", None)
    env.pop("UV_NO_DEV", None)
    probe = ["python", "-c", "import importlib.util as u; print(u.find_spec('iniconfig') is not None)"]

    def uv_run(*arguments: str, extra: dict[str, str] | None = None) -> str:
        run = subprocess.run(
            [uv, *arguments], cwd=tmp_path, env={**env, **(extra or {})}, capture_output=True, text=True
        )
        # iniconfig is pytest's own dependency, so `uv sync` put it in uv's cache; offline, nothing else is needed.
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    uv_run("sync", "--no-dev", "-q")
    assert uv_run("run", "-q", "--no-dev", *probe) == "False"
    assert uv_run("run", "-q", *probe, extra={"UV_NO_DEV": "1"}) == "False"
    assert uv_run("run", "-q", *probe) == "True"  # a plain `uv run` undoes `uv sync --no-dev`
