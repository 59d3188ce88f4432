"""Every stack-config key the stack program reads, defined once: the program (:mod:`infra.stack_config`,
:mod:`infra.sweep_config`) reads them, :mod:`infra.stack_files` and tfcli (``tfcli/gke/stack_files.py`` and the
modules beside it) write them, so a renamed key cannot leave a writer and its reader disagreeing.

``tfcli:`` is this project's namespace; ``gcp:`` is the Google provider's, whose keys the program reads too (and
the provider itself reads ``gcp:credentials``, which tfcli sets as a secret). What each key means:
:mod:`infra.stack_config` (experiment and shared cluster stacks) and :mod:`infra.sweep_config` (sweep stacks).
"""

from __future__ import annotations

NAMESPACE = "tfcli"

# What the stack runs: exactly one of these.
EXPERIMENT_KEY = "tfcli:experiment"
CLUSTER_KEY = "tfcli:cluster"
SWEEP_KEY = "tfcli:sweep"

# How and where it runs.
SHARED_CLUSTER_STACK_KEY = "tfcli:sharedClusterStack"
SUSPEND_KEY = "tfcli:suspend"
IMAGE_KEY = "tfcli:image"
IMAGE_STACK_KEY = "tfcli:imageStack"  # the image stack whose built trainer the run pulls (when tfcli:image is unset)
IMAGES_KEY = "tfcli:images"  # the image stack's own key: {variants, keep_newest} (infra/image_program.py)
CODE_KEY = "tfcli:code"  # the project's code folders (relative to its root) shipped to the pods
LOCATION_KEY = "tfcli:location"
RETENTION_DAYS_KEY = "tfcli:resultsRetentionDays"
TRANSPORT_TOKEN_KEY = "tfcli:transportToken"  # a secret: authenticates a distributed run's workers to its learner
PARALLELISM_KEY = "tfcli:parallelism"  # sweep stacks only
HELD_TRIALS_KEY = "tfcli:heldTrials"  # sweep stacks only: "1,4", trials a resume left as they ended
PRICES_KEY = "tfcli:prices"  # the rates `start` fixed for max_cost (infra/price_config.py)
RERUN_KEY = "tfcli:rerun"  # sweep stacks only: bumped by a resume that replaces a Job that ended

# The Google provider's.
PROJECT_KEY = "gcp:project"
REGION_KEY = "gcp:region"
ZONE_KEY = "gcp:zone"
CREDENTIALS_KEY = "gcp:credentials"  # a secret; read by the provider, never by the program
# The provider's location keys a stack file carries (a zone's stack has both).
LOCATION_KEYS = (REGION_KEY, ZONE_KEY)


def short(key: str) -> str:
    """A key as Pulumi's config of the ``tfcli`` namespace names it: ``tfcli:suspend`` -> ``suspend``."""
    return key.split(":", 1)[1]
