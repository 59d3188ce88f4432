"""What a run writes besides its checkpoints and the trainer's summaries: TensorForce's own agent summaries and
recorded episode traces. TensorForce agent files set these through ``summarizer`` and ``recorder``
(trainer/kernel/spec/tensorforce_forms.py translates them); a tfcli spec sets them as ``agent_summaries`` and
``record``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from trainer.kernel.spec.base import StrictModel

# TensorForce 0.6.5's summary labels (its summarizer's ``summaries``), "graph" left out: TensorForce's "all" leaves it
# out too, and a traced graph says nothing about learning.
AgentSummary = Literal[
    "action-value",
    "distribution",
    "entropy",
    "kl-divergence",
    "loss",
    "parameters",
    "reward",
    "update-norm",
    "updates",
    "variables",
]
ALL_AGENT_SUMMARIES: tuple[str, ...] = AgentSummary.__args__  # type: ignore[attr-defined]


class Recording(StrictModel):
    """Episode traces in ``results/traces/``, written by TensorForce's own recorder (``trace-<episode>.npz``: the
    ``states``, ``actions``, ``terminal`` and ``reward`` of the episodes since the previous file, which
    ``agent.pretrain(directory=...)`` reads back)."""

    frequency: int = Field(default=1, ge=1)  # write a file every this many episodes
    start: int = Field(default=0, ge=0)  # episodes to skip before recording
    max_traces: int | None = Field(default=None, ge=1)  # trace files kept (the newest); None: all
