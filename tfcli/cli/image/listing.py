"""``image list``: the trainer images the project's image stack holds, and whether they are this source's."""

from __future__ import annotations

from typing import Annotated

import typer

from tfcli.cli.console import out, print_json
from tfcli.cli.context import CliContext


def list_(as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False) -> None:
    """The built variants (tag, digest, build) and whether they were built from this source."""
    from tfcli.gke.image_stack import image_state

    state = image_state(CliContext().stacks())
    if as_json:
        print_json({"stack": state.stack, "context": state.context, "current": state.current, "images": state.rows()})
        return
    if not state.built:
        out().print(f"No trainer image built yet (stack {state.stack}): `tfcli image build` builds one.")
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for column in ("variant", "tag", "image", "build"):
        table.add_column(column, overflow="fold")
    for row in state.rows():
        table.add_row(row["variant"], row["tag"], row["image"], row["build"])
    out().print(table)
    if not state.current:
        out().print(f"Built from another source than this one (context {state.context}): `tfcli image build`.")
