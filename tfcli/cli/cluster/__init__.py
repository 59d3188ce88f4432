"""``tfcli cluster ...``: shared GKE clusters, each a Pulumi stack of its own, that experiments run on (`-c NAME`).

Commands parse options, call one function of :mod:`tfcli.gke.clusters` and render the result; one module each.
"""

from __future__ import annotations

import typer

from tfcli.cli.cluster.create import create
from tfcli.cli.cluster.delete import delete
from tfcli.cli.cluster.listing import list_
from tfcli.cli.errors import TfcliGroup

app = typer.Typer(
    cls=TfcliGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Create, list and delete shared GKE clusters (one Pulumi stack each).",
)
app.command("create")(create)
app.command("list")(list_)
app.command("delete")(delete)
