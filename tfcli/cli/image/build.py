"""``image build``: build the trainer image of this source in the project's GCP project (its image stack)."""

from __future__ import annotations

from tfcli.cli.console import out
from tfcli.cli.context import CliContext


def build() -> None:
    """Create or update the image stack: the Artifact Registry repository and the trainer built by Cloud Build from
    this source (nothing is built when it is built already)."""
    from tfcli.cli.stack_progress import RichUpdateObserver
    from tfcli.gke.image_stack import build_images

    ctx = CliContext()
    outputs = build_images(ctx.stacks(), observer=RichUpdateObserver())
    images = dict(outputs.get("images") or {})
    for variant in sorted(v for v in images if v != "context"):
        out().print(f"{variant}: {images[variant]}", markup=False, highlight=False)
