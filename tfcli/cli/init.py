"""``tfcli init``: create a project folder, or complete and update an existing one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tfcli.cli.console import out


def init(
    folder: Annotated[Path, typer.Argument(help="Project folder (created when missing).")] = Path("."),
    gcp_project: Annotated[
        str | None,
        typer.Option(
            "--gcp-project", "--remote-project-id", "-r", help="GCP project ID; without one, experiments run locally."
        ),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", "-n", help="Project name (default: the folder's).")] = None,
    location: Annotated[
        str | None,
        typer.Option(
            "--location",
            "-l",
            help="Default GCP zone (new projects: a zone that offers T4 GPUs) or region (pools in 3 zones, 3x nodes).",
        ),
    ] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="Pulumi state backend: file://./.pulumi (default) or gs://BUCKET.")
    ] = None,
    key_file: Annotated[
        Path | None,
        typer.Option("--key-file", help="Authenticate with this service-account key (kept as a Pulumi secret)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Restore bundled config files you have changed.")
    ] = False,
) -> None:
    """Create a tfcli project: tfcli.yaml, configs/ (the bundled library), experiments/, stacks/, Pulumi.yaml.

    Running it again is safe: your settings and edited configs are kept, missing pieces are added, and only the
    settings you pass are changed.
    """
    from tfcli.project import ProjectDir
    from tfcli.scaffold import init_project
    from tfcli.stackfiles.files import fill_placeholder_project
    from trainer.kernel.spec.documents import display_path

    report = init_project(
        folder,
        name=name,
        gcp_project=gcp_project,
        location=location,
        state_backend=backend,
        key_file=key_file,
        force=force,
    )
    settings = report.settings
    verb = "Updated" if report.kept else "Created"
    out().print(f"{verb} tfcli project '{settings.name}' in {report.root}")
    if report.created:
        out().print(f"  added {len(report.created)} file(s)")
    if report.restored:
        out().print(f"  restored {len(report.restored)} bundled config file(s): {', '.join(report.restored)}")
    if report.updated_settings:
        out().print(f"  changed settings: {', '.join(report.updated_settings)}")
    changed_configs = [k for k in report.kept if k.startswith("configs/")]
    if changed_configs:
        out().print(f"  kept {len(changed_configs)} config file(s) you changed (--force restores them)")
    if settings.gcp_project:
        out().print(
            f"  GCP project {settings.gcp_project} in {settings.location}; Pulumi state in {settings.state_backend}"
        )
        auth = (
            "the key file (as a Pulumi secret)"
            if settings.credentials == "key-file"
            else "gcloud auth application-default login"
        )
        out().print(f"  authentication: {auth}")
        filled = fill_placeholder_project(ProjectDir(report.root, settings))
        if filled:
            shown = ", ".join(display_path(stack_file.path) for stack_file in filled)
            out().print(
                f"  set gcp:project {settings.gcp_project} in {len(filled)} stack file(s) that had the placeholder: "
                f"{shown}",
                markup=False,
            )
    else:
        out().print("  no GCP project: experiments run on this machine (add one with `tfcli init -r PROJECT_ID`)")
    out().print("Next: tfcli experiment start -f cartpole-ppo")
