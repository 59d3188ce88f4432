"""``tfcli image ...``: the project's trainer image — an image stack per GCP project (the Artifact Registry
repository and the trainer built there by Cloud Build from this source), which every GKE run pulls by digest.

``experiment start`` on GKE builds it when it is missing or older than this source; these commands manage it by hand.
Commands parse options, call one function of :mod:`tfcli.gke.image_stack` and render the result; one module each.
"""

from __future__ import annotations

import typer

from tfcli.cli.errors import TfcliGroup
from tfcli.cli.image.build import build
from tfcli.cli.image.delete import delete
from tfcli.cli.image.listing import list_

app = typer.Typer(
    cls=TfcliGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Build, list and delete the trainer image of the project's GCP project (a Pulumi stack).",
)
app.command("build")(build)
app.command("list")(list_)
app.command("delete")(delete)
