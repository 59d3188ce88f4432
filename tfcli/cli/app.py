"""The root ``tfcli`` command: global options and the command groups.

Only typer and rich are imported here; each command imports what it needs (pydantic, TensorFlow, Pulumi) when it
runs, so ``tfcli --help`` stays fast.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from tfcli import __version__
from tfcli.cli import cluster, experiment, image, pulumi
from tfcli.cli.errors import TfcliGroup
from tfcli.cli.init import init
from tfcli.cli.tensorboard import tensorboard
from tfcli.cli.validate import validate

app = typer.Typer(
    name="tfcli",
    cls=TfcliGroup,
    help="Run TensorForce reinforcement-learning experiments on this machine or on Google Kubernetes Engine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: typer's rich help formatter costs more start-up than all of tfcli
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tfcli {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks (same as TFCLI_DEBUG=1).")] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Run TensorForce reinforcement-learning experiments on this machine or on Google Kubernetes Engine."""
    if debug:
        os.environ["TFCLI_DEBUG"] = "1"


app.command("init")(init)
app.command("validate")(validate)
app.command("tensorboard")(tensorboard)
app.add_typer(experiment.app, name="experiment")
app.add_typer(cluster.app, name="cluster")
app.add_typer(image.app, name="image")
app.add_typer(pulumi.app, name="pulumi")


def main() -> None:
    """Console-script entry point."""
    app()
