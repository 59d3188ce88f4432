"""TensorBoard HParams: each run is one session of the HParams dashboard, in ``summaries/hparams/``.

Hyperparameters: the values of the spec's ``hparams`` keys — a sweep's trials list the sweep's axes there — or, when
the spec lists none, its main settings (:data:`MAIN_SETTINGS`, those it sets); plus ``seed``. Names are the dotted
spec keys (``agent.learning_rate``), so a sweep's trials and plain experiments share columns. Metrics, the rules of
``tfcli experiment list -s`` (:mod:`trainer.kernel.scores`) over the whole run's ``progress.jsonl``: ``final_return``,
and ``timesteps_to_target`` when the spec has a ``target_return`` and the run reached it.

Written with TensorBoard's own API: ``hp.hparams`` when the run starts, the metrics as scalars and the plugin's
session end when it ends. Two choices make ``tensorboard --logdir experiments/`` show every sweep and experiment:

- **A folder of its own.** The dashboard takes a session's metrics from every scalar tag in the session's folder and
  the folders below it; next to ``trainer/`` and ``agent/`` (not above them) its columns are just these metrics.
- **No ``hp.hparams_config``.** TensorBoard reads one experiment configuration per log folder, the first it finds,
  and would show only that sweep's hyperparameters; without one it shows the union of every session's.

**Resume.** A session has one start and at most one end, so every segment of the run (the first and each resume)
empties the folder and writes the start again, with the settings it trains with. The end writes the metrics over
all the run's episodes and the session's status: success when completed, failure when failed; a paused run gets
its metrics but no end (status unknown: it may go on), and its resume clears them until it ends in turn.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from trainer.hooks import Hook
from trainer.hooks.progress_log import read_episodes
from trainer.kernel.scores import final_score, first_reach_index, smooth
from trainer.kernel.spec import Experiment
from trainer.kernel.spec.sweep_axes import get_dotted
from trainer.kernel.state import RunState

log = logging.getLogger(__name__)

# What an experiment that lists no ``hparams`` reports: the settings people compare runs by, where the spec sets them.
MAIN_SETTINGS = (
    "agent.agent",
    "agent.learning_rate",
    "agent.batch_size",
    "agent.discount",
    "environment.level",
    "environment.environment",
    "run_mode",
    "num_environments",
    "total_timesteps",
    "episodes",
)
FINAL_RETURN = "final_return"
TIMESTEPS_TO_TARGET = "timesteps_to_target"
HParamValue = bool | int | float | str


def _shown(value: Any) -> HParamValue:
    """A value the plugin takes (bool, number or text): lists and mappings as compact JSON, null as "null"."""
    if isinstance(value, bool | int | float | str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def hparam_values(experiment: Experiment) -> dict[str, HParamValue]:
    """The run's hyperparameters as the dashboard shows them (spec order; ``seed`` last)."""
    data = experiment.model_dump(mode="json")
    listed = experiment.hparams is not None
    keys = experiment.hparams if experiment.hparams is not None else MAIN_SETTINGS
    values: dict[str, HParamValue] = {}
    for key in [*keys, "seed"]:
        if key == "num_environments":
            values[key] = experiment.num_environments
            continue
        try:
            value = get_dotted(data, key)
        except KeyError:
            continue  # a main setting this spec leaves to its default (listed keys are checked by validation)
        if value is None and (not listed or key == "seed"):
            continue
        values[key] = _shown(value)
    return values


def run_metrics(progress: Path, target_return: float | None) -> dict[str, float]:
    """``final_return`` and ``timesteps_to_target`` (when reached) from a ``progress.jsonl``; none without episodes."""
    episodes = read_episodes(progress)
    steps = np.array([episode.timesteps for episode in episodes])
    returns = np.array([episode.episode_return for episode in episodes], dtype=float)
    metrics: dict[str, float] = {}
    final = final_score(steps, returns)
    if final is not None:
        metrics[FINAL_RETURN] = final
    if target_return is not None and len(returns):
        hit = first_reach_index(smooth(returns), target_return)
        if hit is not None:
            metrics[TIMESTEPS_TO_TARGET] = float(steps[hit])
    return metrics


class HParamsSession(Hook):
    """Starts the run's session when built; writes its metrics (and, unless paused, its end) in ``on_end``."""

    def __init__(self, directory: Path, experiment: Experiment, progress: Path) -> None:
        import tensorflow as tf
        from tensorboard.plugins.hparams import api as hp

        self._tf: Any = tf
        self._progress = progress
        self._target = experiment.target_return
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.glob("events.out.tfevents.*"):  # the previous segment's session: this one replaces it
            old.unlink(missing_ok=True)
        self._writer = tf.summary.create_file_writer(str(directory))
        with self._writer.as_default():
            hp.hparams(hparam_values(experiment), trial_id=experiment.name, start_time_secs=time.time())
        self._writer.flush()  # the dashboard lists the run while it trains

    def on_end(self, state: RunState, status: str) -> None:
        from tensorboard.plugins.hparams import api_pb2
        from tensorboard.plugins.hparams import summary as hparams_summary

        tf = self._tf
        try:
            with self._writer.as_default(step=state.timesteps):
                for name, value in run_metrics(self._progress, self._target).items():
                    tf.summary.scalar(name, value)
                ended = {"completed": api_pb2.STATUS_SUCCESS, "failed": api_pb2.STATUS_FAILURE}.get(status)
                if ended is not None:
                    end = hparams_summary.session_end_pb(ended)
                    tf.summary.experimental.write_raw_pb(end.SerializeToString(), step=state.timesteps)
        finally:
            self._writer.close()
