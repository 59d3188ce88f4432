"""The backend contract's fixtures: the GKE stand-ins of tests/gke (the fake ``pulumi`` CLI) for its GKE case."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "gke"))  # gke_testkit, as tests/gke's own modules import it

from gke_testkit import fake_pulumi

__all__ = ["fake_pulumi"]
