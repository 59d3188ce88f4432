"""``python -m trainer``: the program inside the containers and behind ``tfcli experiment start --local``.

``run --spec SPEC --output DIR [--workers HOST:PORT,...] [--environments auto|in-process|subprocess]`` trains;
``env-worker --spec SPEC --port PORT [--host HOST]`` serves environments to a distributed run's learner.
``sweep-worker --specs DIR --output-parent DIR --bucket B --prefix SWEEP`` is one of an early-stopped GKE sweep's
worker pods (trainer/sweep_worker.py). All take ``--code DIR`` (repeatable): a folder put first on ``sys.path``, so
that the user's own environments (``entry_point: envs.gridworld:GridWorld``) import — the project's root locally,
the shipped code's mount on GKE. Subprocess pools inherit it: ``spawn`` hands the parent's ``sys.path`` to each child.

This module is the trainer's edge, the one place that turns errors into messages and exit codes: 0 completed
(or pruned by early stopping), 1 failed (an I/O error such as a full disk too: one line saying what, where and the
space left; the traceback only with ``--debug`` or ``TFCLI_DEBUG=1``), 2 invalid input (``<file>: <field>:
<message>`` on stderr, no traceback), 3 paused at ``max_cost`` (0 for a sweep's trial, ``--output-parent``: its
Job index ends without failing), 143 paused by SIGTERM/SIGINT (``env-worker`` too: it exits 0 only when the learner
tells it the run is over).
It imports nothing heavy at the top: subprocess pools start workers with ``spawn``, which imports this module
again in every worker, and those must not load TensorFlow.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from trainer.compat import quiet_tensorflow_import
from trainer.fast_exit import exit_now
from trainer.kernel.errors import TfcliError, io_failure

log = logging.getLogger("trainer")

quiet_tensorflow_import()  # before anything imports TensorFlow (a trainer log starts with the user's lines)

TOKEN_VARIABLE = "TRAINER_TOKEN"
CODE_HELP = "a folder of the project's own code to import environments from (first on sys.path; repeatable)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m trainer", description="Train a TensorForce experiment.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="train an experiment into an output folder (resuming what is there)")
    run.add_argument("--spec", required=True, help="experiment spec file (YAML or JSON) or a config-library name")
    where = run.add_mutually_exclusive_group(required=True)
    where.add_argument("--output", type=Path, help="results folder (checkpoints, summaries, ...)")
    where.add_argument(
        "--output-parent",
        type=Path,
        help="results folder's parent: the run writes to PARENT/<the spec's name> (a GKE sweep's slot pod)",
    )
    run.add_argument("--workers", default=None, help="env-worker addresses HOST:PORT,... (run_mode distributed)")
    run.add_argument(
        "--environments",
        choices=("auto", "in-process", "subprocess"),
        default="auto",
        help="multi-threaded runs: step environments in this process or one subprocess each "
        "(auto: subprocesses when a step is costly)",
    )
    run.add_argument("--debug", action="store_true", help="verbose logs and full tracebacks")
    run.add_argument("--code", action="append", default=[], metavar="DIR", help=CODE_HELP)

    worker = commands.add_parser("env-worker", help="serve the experiment's environment to a distributed learner")
    worker.add_argument("--spec", required=True, help="experiment spec file (YAML or JSON) or a config-library name")
    worker.add_argument("--port", required=True, type=int, help="TCP port to listen on")
    worker.add_argument("--host", default="0.0.0.0", help="address to listen on (default: all)")
    worker.add_argument("--debug", action="store_true", help="verbose logs and full tracebacks")
    worker.add_argument("--code", action="append", default=[], metavar="DIR", help=CODE_HELP)

    sweep = commands.add_parser("sweep-worker", help="a GKE sweep's worker: train its trials, claimed in its bucket")
    sweep.add_argument("--specs", required=True, type=Path, help="folder of the trials' spec files (*.yaml)")
    sweep.add_argument("--output-parent", required=True, type=Path, help="the sweep's results folder (FUSE mount)")
    sweep.add_argument("--bucket", required=True, help="the results bucket (claims and reads go through its API)")
    sweep.add_argument("--prefix", required=True, help="the sweep's folder in the bucket (the mount's PARENT)")
    sweep.add_argument("--run", type=int, default=0, help="the Job's re-run number (resume -s): its own claims")
    sweep.add_argument("--debug", action="store_true", help="verbose logs and full tracebacks")
    sweep.add_argument("--code", action="append", default=[], metavar="DIR", help=CODE_HELP)
    return parser


def _setup_logging(debug: bool) -> None:
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    logging.getLogger("trainer").setLevel(logging.DEBUG if debug else logging.INFO)


def _run(arguments: argparse.Namespace) -> int:
    from trainer.ahead import hold_file
    from trainer.config import RunConfig, parse_workers
    from trainer.kernel.spec import load_experiment
    from trainer.kernel.spec.documents import display_path

    loaded = load_experiment(arguments.spec)
    experiment = loaded.spec
    _setup_logging(arguments.debug or experiment.debug_logging)
    if arguments.output is None:  # a sweep's slot runs whichever trial its spec names, into that trial's folder
        arguments.output = arguments.output_parent / experiment.name
    from trainer.ended import nothing_to_train
    from trainer.hooks.early_stop import waiting_decided
    from trainer.kernel.budget import Budget
    from trainer.mount_view import refresh

    refresh(arguments.output)  # another pod may have trained it last: read its files as they are (GCS FUSE's cache)
    ended = nothing_to_train(arguments.output, Budget.of(experiment)) or waiting_decided(
        arguments.output, experiment.early_stop, experiment.name
    )
    if ended is not None:  # before TensorFlow is imported: a resumed sweep's finished trials end in a second
        (log.warning if ended.exit_code else log.info)("%s", ended.message)
        return ended.exit_code
    from trainer.hooks.cost_limit import sweep_spent

    hourly_price, allowance = _price_and_allowance()
    spent = sweep_spent(arguments.output, experiment.sweep_budget, experiment.name, hourly_price, allowance)
    if spent is not None:  # the sweep's budget ran out before this trial's turn: paused, not built
        log.warning("%s; raise the sweep's max_cost and resume it to continue", spent.reason)
        return spent.exit_code_of(trial=arguments.output_parent is not None)
    config = RunConfig(
        experiment=experiment,
        output=arguments.output,
        spec_name=display_path(loaded.path) if loaded.path else str(arguments.spec),
        workers=parse_workers(arguments.workers) if arguments.workers is not None else (),
        environments=arguments.environments,
        token=os.environ.get(TOKEN_VARIABLE),
        hourly_price=hourly_price,
        start_allowance_seconds=allowance,
        publish_seconds=_publish_seconds(),
        hold=hold_file(),
    )
    from trainer.run import run

    result = run(config)
    if result.cost_limited:
        log.warning("%s; raise max_cost and start the experiment again to continue", result.reason)
    elif result.status == "pruned":
        log.warning("pruned after %s timesteps: %s", f"{result.timesteps:,}", result.reason)
    elif result.status == "paused":
        log.warning("paused after %s timesteps; run the same command again to resume", f"{result.timesteps:,}")
    return result.exit_code_of(trial=arguments.output_parent is not None)  # a GKE sweep's slot


def _price_and_allowance() -> tuple[float | None, float]:
    """The run's price and node-time allowance per start, as the stack handed them (docs/design.md §6.5)."""
    from trainer.hooks.cost_limit import (
        HOURLY_PRICE_VARIABLE,
        START_ALLOWANCE_VARIABLE,
        parse_hourly_price,
        parse_start_allowance,
    )

    try:
        price = parse_hourly_price(os.environ.get(HOURLY_PRICE_VARIABLE))
        return price, parse_start_allowance(os.environ.get(START_ALLOWANCE_VARIABLE))
    except ValueError as error:
        from trainer.kernel.errors import InvalidInput

        raise InvalidInput(str(error)) from None


def _publish_seconds() -> float | None:
    from trainer.hooks.progress_log import PUBLISH_VARIABLE, parse_publish_seconds

    try:
        return parse_publish_seconds(os.environ.get(PUBLISH_VARIABLE))
    except ValueError as error:
        from trainer.kernel.errors import InvalidInput

        raise InvalidInput(str(error)) from None


def _env_worker(arguments: argparse.Namespace) -> int:
    from trainer.kernel.spec import load_experiment

    experiment = load_experiment(arguments.spec).spec
    _setup_logging(arguments.debug or experiment.debug_logging)
    from trainer.env_worker import serve  # the distributed transport; imported only here

    run_over = serve(experiment, host=arguments.host, port=arguments.port, token=os.environ.get(TOKEN_VARIABLE))
    # 0 only when the learner said the run is over: an indexed Job never runs an index that exited 0 again.
    from trainer.kernel.spec.outcomes import EXIT_PAUSED

    return 0 if run_over else EXIT_PAUSED


def _sweep_worker(arguments: argparse.Namespace) -> int:
    _setup_logging(arguments.debug)
    from trainer.sweep_worker import run_worker

    code = [part for folder in arguments.code for part in ("--code", folder)]
    return run_worker(arguments.specs, arguments.output_parent, arguments.bucket, arguments.prefix, code, arguments.run)


def main(argv: list[str] | None = None) -> int:
    arguments = _parser().parse_args(argv)
    debug = arguments.debug or os.environ.get("TFCLI_DEBUG", "").lower() in ("1", "true", "yes")
    if debug:
        _setup_logging(True)
    commands: dict[str, Any] = {"run": _run, "env-worker": _env_worker, "sweep-worker": _sweep_worker}
    from trainer.code_paths import add_code_paths

    add_code_paths(arguments.code)
    try:
        code: int = commands[arguments.command](arguments)
        return code
    except TfcliError as error:
        if debug:
            raise
        for line in error.lines():
            print(line if error.exit_code == 2 else f"error: {line}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # a full disk (OSError, TensorFlow's I/O errors): one line, not a page of traceback
        doing = "training" if arguments.command == "run" else "serving environments"
        failure = io_failure(error, doing, otherwise=getattr(arguments, "output", None))
        if failure is None or debug:
            raise
        print(f"error: {failure.message}", file=sys.stderr)
        return failure.exit_code


if __name__ == "__main__":
    exit_now(main())
