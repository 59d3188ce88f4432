"""``run(config) -> Result``: one training run, from an empty or a previous output folder to ``result.json``.

Order matters: the pool first (the agent needs its state/action specs), then the agent — restored from the newest
complete checkpoint in ``<output>/checkpoints`` if there is one — then ``progress.jsonl`` cut back to that
checkpoint, then the loop for the remaining budget. Whatever happens, the agent and the environments are closed
and ``result.json`` and ``learning_curve.png`` are written; a failure is raised again after that, for the command
line to turn into a message and an exit code.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

from trainer import output_lock
from trainer.acting import acting_for
from trainer.ahead import get_ready, wait_for_turn
from trainer.checkpoints import CheckpointStore
from trainer.compat import quiet_tensorflow_import
from trainer.config import RunConfig
from trainer.curve import FILENAME as CURVE
from trainer.curve_painter import CurvePainter
from trainer.hooks import Hook, Hooks
from trainer.hooks.checkpointing import CheckpointHook
from trainer.hooks.cost_limit import cost_limit
from trainer.hooks.early_stop import early_stopping
from trainer.hooks.hparams import HParamsSession
from trainer.hooks.progress_log import FILENAME as PROGRESS
from trainer.hooks.progress_log import ProgressLog, read_episodes, rewind
from trainer.hooks.reporting import reporter
from trainer.hooks.summaries import TensorBoardSummaries
from trainer.kernel.budget import Budget
from trainer.kernel.errors import InvalidInput, TfcliError, io_failure
from trainer.kernel.state import RunState
from trainer.loop import train
from trainer.pools.base import EnvironmentPool
from trainer.pools.factory import close_pool, make_pool
from trainer.pools.watched import WatchedPool
from trainer.preflight import compatibility_problems, environment_label
from trainer.results import Result, checkpointed_timesteps, withdraw
from trainer.signals import StopRequest
from trainer.stall import StallWatch

log = logging.getLogger(__name__)

TRACES = "traces"  # the experiment's ``record``: TensorForce's episode traces (trainer/agents.py, agent_recorder)


def _error_text(error: BaseException) -> str:
    return str(io_failure(error) or error) or type(error).__name__  # a full disk in one line, not TF's page


def run(config: RunConfig) -> Result:
    """Train the experiment into ``config.output`` until its budget is spent or a stop is requested, holding the
    folder's trainer lock throughout (:mod:`trainer.output_lock`: a second trainer is refused, nothing written)."""
    output = config.output
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TfcliError(f"cannot create the output folder {output}: {error}") from error
    lock = output_lock.hold(output)
    painter = CurvePainter()  # imports matplotlib on the other core while this process imports TensorFlow
    try:
        return _run(config, painter)
    finally:
        painter.close()
        if lock is not None:
            lock.close()


def _run(config: RunConfig, painter: CurvePainter) -> Result:
    experiment = config.experiment
    output = config.output
    budget = Budget.of(experiment)
    stop = StopRequest().install()
    watch = StallWatch(experiment.step_timeout, environment_label(experiment)).install()
    state = RunState()
    restored = False  # whether ``state`` holds the run's counters yet (a failure before must not report zeros)
    hooks = Hooks([])
    pool: EnvironmentPool | None = None
    agent: Any = None
    result: Result | None = None
    if experiment.run_mode == "distributed":
        _import_tensorflow_meanwhile()
    try:
        try:
            keep = experiment.keep_checkpoints or config.keep_checkpoints
            store = CheckpointStore(output / "checkpoints", keep=keep)
            refuse_to_start_over(output, store)
            pool = make_pool(experiment, environments=config.environments, workers=config.workers, token=config.token)
            ready_pool = pool
            agent, checkpoint = store.resume(lambda: _make_agent(config, ready_pool))
        except InvalidInput as error:
            raise error.in_file(config.spec_name) from error  # as validation names it
        if checkpoint is not None:
            kept = rewind(output / PROGRESS, checkpoint.state["episodes"])
            state = RunState.resumed(checkpoint.state, [episode.episode_return for episode in kept])
        else:
            rewind(output / PROGRESS, 0)
        state.starts += 1  # this start: max_cost counts node time per start (trainer/kernel/budget.py)
        restored = True
        log.info(
            "%s: %s, %d environment(s), budget %s (%s left)",
            experiment.name,
            experiment.run_mode,
            pool.size,
            budget.describe(),
            budget.left(state).describe(" / "),
        )
        if experiment.deterministic:
            log.warning("deterministic: true — an evaluation run: the agent acts greedily and does not learn")
        assert experiment.saver_frequency is not None and experiment.summary_frequency is not None
        if config.hold is not None:  # started ahead of its turn: get ready on the idle core, then wait for a slot
            get_ready(agent, deterministic=experiment.deterministic)
            wait_for_turn(config.hold, stop)
        state.started = time.monotonic()  # wall time counts training, not building the pool and the agent
        hook_list: list[Hook] = [
            CheckpointHook(store, agent, experiment.saver_frequency, state, resumed=checkpoint is not None),
            ProgressLog(output / PROGRESS, config.publish_seconds),
            TensorBoardSummaries(output / "summaries" / "trainer", experiment.summary_frequency, state),
            HParamsSession(output / "summaries" / "hparams", experiment, output / PROGRESS),
            reporter(budget, experiment.summary_frequency, state, progress_bar=config.progress_bar),
        ]
        limit = cost_limit(experiment, output, config.hourly_price, config.start_allowance_seconds, stop)
        if limit is not None:
            hook_list.append(limit)
            limit.check(state)  # a resumed run may have reached it already
        elif experiment.max_cost is not None or experiment.sweep_budget is not None:
            log.info("max_cost is enforced where the stack gives the run its price (GKE); this run has none")
        early_stop = early_stopping(experiment.early_stop, experiment.name, output, stop, state)
        if early_stop is not None:
            hook_list.append(early_stop)
        hooks = Hooks(hook_list)
        withdraw(output)  # the previous segment's ending (read above: early_stopping's release), now stale (§6.3)
        outcome: str = train(
            pool=WatchedPool(pool, watch),
            acting=acting_for(agent, deterministic=experiment.deterministic),
            budget=budget,
            state=state,
            hook=hooks,
            stop=stop,
        )
        if outcome == "paused" and early_stop is not None and early_stop.pruned:
            outcome = "pruned"  # the early stop asked for the stop: the run ends here for good (exit 0)
        hooks.on_end(state, outcome)
        result = Result.of(outcome, state, reason=(stop.reason or None) if outcome != "completed" else None)
    except BaseException as error:
        try:
            hooks.on_end(state, "failed")
        except Exception as also:
            log.warning("while ending the failed run: %s", io_failure(also) or also)
        try:
            text = _error_text(error)
            _finish(
                config,
                Result.of("failed", state, error=text) if restored else Result.failed_before_resume(output, text),
                painter,
            )
        except Exception as also:  # e.g. the output folder is gone: the original error matters more
            log.warning("could not write %s: %s", config.output / "result.json", also)
        raise
    finally:
        watch.uninstall()
        stop.uninstall()
        if agent is not None:
            agent.close()
        if pool is not None:
            # Env workers end with the run, and with a cost limit (nothing restarts that run by itself).
            run_over = result is not None and (result.status in ("completed", "pruned") or result.cost_limited)
            close_pool(pool, run_over=run_over)
    assert result is not None
    _finish(config, result, painter)
    return result


def refuse_to_start_over(output: Path, store: CheckpointStore) -> None:
    """Results that a checkpoint backed, but no checkpoint left to continue them from (``checkpoints/`` deleted or
    emptied by hand): the run fails naming what is missing, rather than train from zero over ``progress.jsonl`` and
    ``result.json`` (docs/design.md §6.4). Starting over is the user's call: ``--restart`` deletes them first.

    The folder's history says whether a checkpoint existed: :data:`trainer.checkpoints.CHECKPOINTED` (written when
    the first one completed; it outlives ``checkpoints/`` and a withdrawn ``result.json``), or, in a folder from
    before it, a ``result.json`` that a checkpoint backed. Where none was ever made (a run killed by SIGKILL, an OOM
    kill or a lost node before its first checkpoint), every episode in ``progress.jsonl`` is past the newest
    checkpoint — the lines a resume always plays again — so the run starts over, dropping them, and loses nothing.
    """
    if store.marked():
        return  # checkpoints exist: resume() restores one, or fails naming each that does not load
    episodes = len(read_episodes(output / PROGRESS))
    timesteps = checkpointed_timesteps(output)
    if not store.ever_checkpointed() and not timesteps:
        return  # never checkpointed: nothing here a resume would keep (rewind drops those lines, with a log line)
    if not episodes and not timesteps:
        return  # nothing left that training would overwrite
    held = f"{episodes:,} episode(s) in {PROGRESS}" if episodes else f"{timesteps:,} timesteps in result.json"
    evidence = store.checkpointed_file.name if store.ever_checkpointed() else "result.json"
    raise TfcliError(
        f"{output} holds results ({held}) that checkpoints backed ({evidence} says so), but no complete checkpoint "
        f"to continue them from ({store.directory} has none); refusing to train from zero over them",
        hint="put the checkpoints back, or start over with `--restart` (deletes the results)",
    )


def _import_tensorflow_meanwhile() -> None:
    """Import TensorFlow in a background thread while the pool connects to its env-workers.

    A distributed learner cannot build its agent before the workers answer (the agent needs their specs), and the
    workers start as the learner does: importing TensorFlow (~2 s) meanwhile takes it off the path to the first
    timestep. Only TensorFlow: TensorForce's import patches msgpack, which the transport is using at that moment
    (``trainer.compat`` undoes the patch once TensorForce is in).
    """

    def load() -> None:
        from trainer.heavy_imports import collection_paused

        quiet_tensorflow_import()
        try:
            if "tensorflow" not in sys.modules:  # frozen once per process, not again for each run of a test's
                with collection_paused():
                    import tensorflow  # noqa: F401
        except Exception as error:  # the main thread's own import reports it properly
            log.debug("importing TensorFlow in the background failed: %s", error)

    threading.Thread(target=load, name="import-tensorflow", daemon=True).start()


def _make_agent(config: RunConfig, pool: EnvironmentPool) -> Any:
    """The run's agent; the pool stands in for the environment (its specs, its episode limit in agent steps)."""
    from trainer.agents import agent_recorder, agent_summarizer, build_agent  # imports TensorFlow

    experiment = config.experiment
    summaries = config.output / "summaries"
    record = experiment.record
    problems = compatibility_problems(experiment, pool.states(), pool.actions(), pool.max_episode_timesteps())
    if problems:  # the same words as `tfcli validate`, before TensorForce's own (terser) checks
        raise InvalidInput(problems)
    return build_agent(
        experiment.agent,
        environment=pool,
        network=experiment.network,
        max_episode_timesteps=None,  # the pool's limit
        parallel_interactions=pool.size,
        seed=experiment.seed,
        summarizer=agent_summarizer(summaries, experiment.agent_summaries) if config.agent_summaries else None,
        recorder=agent_recorder(config.output / TRACES, record) if record is not None else None,
    )


def _finish(config: RunConfig, result: Result, painter: CurvePainter) -> None:
    """``result.json`` first (the one file tools wait for), then the learning curve."""
    result.write(config.output)
    try:
        painter.paint(read_episodes(config.output / PROGRESS), config.output / CURVE, title=config.experiment.name)
    except Exception as error:  # a picture is not worth failing a finished run for
        log.warning("could not draw %s: %s", CURVE, io_failure(error) or error)
