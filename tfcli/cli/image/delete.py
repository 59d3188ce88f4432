"""``image delete``: destroy the image stack — the repository and every trainer image in it."""

from __future__ import annotations

from typing import Annotated

import typer

from tfcli.cli.console import out
from tfcli.cli.context import CliContext


def delete(yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")] = False) -> None:
    """Delete the Artifact Registry repository with every trainer image in it (runs still deployed will fail to
    pull on a new node) and remove the image stack."""
    from tfcli.cli.pulumi import interactive
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.gke.image_stack import delete_images
    from trainer.kernel.errors import InvalidInput

    if not yes:
        if not interactive():
            raise InvalidInput("image delete deletes every trainer image of the project: add --yes")
        if not typer.confirm("Delete the trainer images and their repository?", default=False, err=True):
            return
    ctx = CliContext()
    if delete_images(ctx.stacks(), observer=RichUpdateObserver()):
        out().print("Deleted the trainer images and their repository.")
    else:
        out().print("There is no image stack to delete.")
