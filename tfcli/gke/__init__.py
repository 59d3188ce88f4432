"""The GKE backend: experiments as Pulumi stacks, driven through the Automation API, results in GCS. Importing the
package registers it as ``gke`` (:mod:`tfcli.runs.registry`); its implementation (Pulumi, the GCS client) loads only
when a run needs it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfcli.runs.registry import Caller, Registration, register

if TYPE_CHECKING:
    from tfcli.gke.backend import GkeBackend


def make_gke(caller: Caller) -> GkeBackend:
    from tfcli.gke.backend import GkeBackend

    return GkeBackend(observer=caller.observer, install_prompt=caller.install_prompt, build_prompt=caller.build_prompt)


# A run on GKE is its stack's (its results in its bucket) until `stop` destroys it; runs may share a cluster.
register(Registration("gke", make_gke, keeps_runs=True, title="GKE", shared_clusters=True))
