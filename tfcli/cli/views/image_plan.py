"""``experiment plan``'s part for the trainer image: the image stack's resources and the build's cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from tfcli.cli.console import out

if TYPE_CHECKING:
    from tfcli.gke.image_plan import ImagePlan


def show_image_plan(image: ImagePlan) -> None:
    from tfcli.cli.views.plan import short_type

    console = out()
    console.print(
        f"\n[bold]Trainer image[/] (stack {escape(image.plan.stack)}: built by the first start, again only when the "
        f"trainer changes): {len(image.plan.resources)} resources"
    )
    for row in image.plan.summary():
        indent = "  " if row["parent"] else ""
        console.print(f"{indent}[bold]{escape(short_type(row['type']))}[/] {escape(row['name'])}")
    for line in image.estimate.lines():
        console.print(f"  {escape(line)}")
