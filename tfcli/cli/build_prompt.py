"""The question a first trainer image build asks on a terminal (:func:`tfcli.gke.image_stack.ensure_images`)."""

from __future__ import annotations

import typer

from tfcli.cli.console import err
from tfcli.cli.pulumi import interactive


def offer_build(stack: str) -> bool:
    """Build the trainer image now? Yes without a terminal: nobody to ask, and the run cannot start without it."""
    from infra.prices import image_build_estimate

    estimate = image_build_estimate()
    err().print(
        f"This GCP project has no trainer image yet (stack {stack}): Cloud Build builds it from tfcli's source in "
        f"your project, about {estimate.minutes:.0f} build minutes (~${estimate.usd:.2f}), once per change of the "
        "trainer.",
        markup=False,
    )
    if not interactive():
        return True
    return typer.confirm("Build it now?", default=True, err=True)
