"""``tfcli init``: make (or repair) a project folder — safe to run again.

A new project's location is a zone that offers the default GPU (:mod:`trainer.kernel.spec.gpu_zones`): the cheapest
place to run, and the one GKE's free tier credits; a region only when ``--location`` names one.

Besides the settings and the bundled config library, it writes ``envs/``: a small example environment of the
project's own (``envs/gridworld.py``, the template beside this file) that the bundled ``gridworld-ppo`` trains.

A second run keeps the user's settings and their edited config files, adds only what is missing and changes
only the settings given as flags. ``force`` restores bundled config files the user changed.
"""

from __future__ import annotations

import filecmp
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tfcli.project import Project, read_settings, settings_yaml
from trainer.kernel.errors import InvalidInput
from trainer.kernel.files import atomic_write_text
from trainer.kernel.spec.cluster import DEFAULT_GPU_TYPE
from trainer.kernel.spec.errors import problems_of
from trainer.kernel.spec.gpu_zones import default_zone
from trainer.kernel.spec.library import BUNDLED_CONFIGS, KINDS, PROJECT_FILE

_FLAGS = {"name": "--name", "gcp_project": "--gcp-project", "location": "--location", "state_backend": "--backend"}

PULUMI_YAML = """\
# Pulumi project of this tfcli project: one stack per experiment and per shared cluster.
# Stack files live in stacks/; each holds the fully resolved spec, so `pulumi up -s NAME` works without tfcli.
name: {name}
description: TensorForce experiments on Google Kubernetes Engine (tfcli)
runtime: python
stackConfigDir: stacks
"""
# Pulumi runs __main__.py of the project folder: the stack program shipped with tfcli.
PROGRAM = """\
\"\"\"The tfcli stack program (shipped in the tfcli package); Pulumi runs this file.\"\"\"

import runpy

runpy.run_module("infra", run_name="__main__", alter_sys=True)
"""
GITIGNORE = """\
# Local runs' results and Pulumi's local state stay out of git; specs and stack files go in.
experiments/*/results/
experiments/*/logs/
experiments/*/run.json
experiments/*/.lock
.pulumi/
.tfcli/
__pycache__/
"""


@dataclass
class InitReport:
    """What ``init`` did, for the CLI to show."""

    root: Path
    settings: Project
    created: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    updated_settings: list[str] = field(default_factory=list)


def _write_new(report: InitReport, path: Path, text: str) -> None:
    if path.exists():
        report.kept.append(str(path.relative_to(report.root)))
    else:
        atomic_write_text(path, text)
        report.created.append(str(path.relative_to(report.root)))


def _copy_configs(report: InitReport, force: bool) -> None:
    for kind in KINDS:
        for source in sorted((BUNDLED_CONFIGS / kind).iterdir()):
            target = report.root / "configs" / kind / source.name
            shown = str(target.relative_to(report.root))
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
                report.created.append(shown)
            elif not filecmp.cmp(source, target, shallow=False):
                if force:
                    shutil.copyfile(source, target)
                    report.restored.append(shown)
                else:
                    report.kept.append(shown)


EXAMPLE_ENVIRONMENTS = Path(__file__).parent / "envs"


def _copy_example_environments(report: InitReport) -> None:
    """``envs/``: the example's files, each only when missing (the user's own environments are never touched)."""
    for source in sorted(EXAMPLE_ENVIRONMENTS.glob("*.py")):
        target = report.root / "envs" / source.name
        target.parent.mkdir(exist_ok=True)
        _write_new(report, target, source.read_text(encoding="utf-8"))


def init_project(
    folder: Path,
    *,
    name: str | None = None,
    gcp_project: str | None = None,
    location: str | None = None,
    state_backend: str | None = None,
    key_file: Path | None = None,
    force: bool = False,
) -> InitReport:
    """Create or complete a project in ``folder``; settings given here replace those already recorded."""
    folder = folder.resolve()
    if folder.exists() and not folder.is_dir():
        raise InvalidInput(f"{folder}: exists and is not a folder")
    settings_file = folder / PROJECT_FILE
    current = read_settings(settings_file).model_dump() if settings_file.is_file() else {}
    default_name = "".join(c if c.isalnum() else "-" for c in folder.name.lower()).strip("-") or "tfcli-project"
    if key_file is not None and not key_file.is_file():
        raise InvalidInput(f"--key-file: no such file: {key_file}")
    given = {
        "name": name,
        "gcp_project": gcp_project,
        "location": location,
        "state_backend": state_backend,
        "credentials": "key-file" if key_file else None,
        "key_file": str(key_file.resolve()) if key_file else None,
    }
    if not current and location is None:
        # A zone, not a region: a regional cluster runs every pool in three zones and gets no free-tier credit.
        given["location"] = default_zone(DEFAULT_GPU_TYPE)
    changes = {key: value for key, value in given.items() if value is not None and current.get(key) != value}
    data = {"name": default_name[:40], **current, **changes}
    try:
        settings = Project.model_validate(data)
    except ValidationError as error:  # a bad value came from a flag: name the flag
        raise InvalidInput(problems_of(error, Project, PROJECT_FILE, _FLAGS)) from None
    report = InitReport(folder, settings, updated_settings=sorted(changes) if current else [])
    folder.mkdir(parents=True, exist_ok=True)
    if not current or changes:
        atomic_write_text(settings_file, settings_yaml(settings))
        (report.created if not current else report.kept).append(PROJECT_FILE)
    else:
        report.kept.append(PROJECT_FILE)
    for sub in ("experiments", "stacks"):
        (folder / sub).mkdir(exist_ok=True)
    _copy_configs(report, force)
    _copy_example_environments(report)
    _write_new(report, folder / "Pulumi.yaml", PULUMI_YAML.format(name=settings.name))
    _write_new(report, folder / "__main__.py", PROGRAM)
    _write_new(report, folder / ".gitignore", GITIGNORE)
    return report
