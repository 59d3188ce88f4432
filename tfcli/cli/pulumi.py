"""``tfcli pulumi install``: the Pulumi CLI tfcli drives, installed for tfcli alone (the SDK's version).

Also the question a GKE command asks when no Pulumi CLI is found (:func:`offer_install`, handed to the backends by
:class:`tfcli.cli.context.CliContext`): on a terminal it says what the install does and asks; anywhere else it
declines, and the error names the command to run instead.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tfcli.cli.console import err, out
from tfcli.cli.errors import TfcliGroup

if TYPE_CHECKING:
    from tfcli.gke.pulumi_cli import PulumiMissing

app = typer.Typer(
    cls=TfcliGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="The Pulumi CLI that tfcli drives (installed for tfcli alone).",
)


def interactive() -> bool:
    """Someone can answer a question: stdin and stderr are a terminal."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def _describe(root: Path) -> None:
    from tfcli.gke.pulumi_cli import install_description

    for line in install_description(root):
        err().print(line, markup=False, highlight=False)


def offer_install(missing: PulumiMissing) -> bool:
    """Asked by :func:`tfcli.gke.pulumi_cli.pulumi_command` when there is no Pulumi CLI: install it now?"""
    from tfcli.gke.pulumi_cli import pulumi_version

    if not interactive():
        return False
    err().print(f"The Pulumi CLI is not installed (not on PATH, nor in {missing.root}).", markup=False)
    _describe(missing.root)
    if not typer.confirm(f"Install Pulumi {pulumi_version()} into {missing.root} now?", default=False, err=True):
        return False
    err().print(f"Installing Pulumi {pulumi_version()} into {missing.root} …", markup=False)
    return True


@app.command()
def install(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Install without asking.")] = False,
) -> None:
    """Install the Pulumi CLI version tfcli is tested with into ~/.tfcli/pulumi/VERSION ($TFCLI_PULUMI_ROOT)."""
    from tfcli.gke.pulumi_cli import install_pulumi, pulumi_executable, pulumi_root, pulumi_version
    from trainer.kernel.errors import TfcliError

    root = pulumi_root()
    version = pulumi_version()
    if pulumi_executable(root).is_file():
        out().print(f"Pulumi {version} is already installed in {root}; tfcli uses it.", markup=False)
        return
    _describe(root)
    if not yes:
        if not interactive():
            raise TfcliError(
                "nothing was installed: there is no terminal to ask whether to",
                hint="`tfcli pulumi install --yes` installs without asking",
            )
        if not typer.confirm(f"Install Pulumi {version} into {root}?", default=False, err=True):
            raise TfcliError("nothing was installed", hint="`tfcli pulumi install --yes` installs without asking")
    install_pulumi(root)
    out().print(
        f"Installed Pulumi {version} in {root}: tfcli uses it from now on (your PATH is unchanged; "
        f"{pulumi_executable(root)} runs it by hand).",
        markup=False,
    )
