"""A sweep's trials at a time: one setting with one rule and one meaning, locally and on GKE.

It is given in two places, and the flag wins: ``start -s --parallel N`` (or ``-p``; also ``render -s``) over the
sweep file's ``parallel`` (``experiment sweep -p N`` writes it there). :func:`resolved_parallel` picks the value in
effect, the same way for both backends; when neither is given each backend has its default (locally what the cores
fit, tfcli/local/sweeps.py; on GKE what the learner pool holds, infra/sizing.py). On GKE the value reaches the sweep
stack as ``tfcli:parallelism`` (tfcli/stackfiles/sweep.py), which the stack program resolves again against the
sweep in ``tfcli:sweep`` with this same function (infra/sweep_config.py): the key stands for the flag there, so
``pulumi up -s SWEEP`` without tfcli deploys what ``start -s`` would. That many trials train at once; the value in
effect is recorded in the sweep's ``run.json`` (``parallel``) and shown by ``status -s`` and ``plan -s``.

Fewer than one would start nothing and wait for ever: :func:`parallel_problem` is the one check, and each place
refuses it (exit 2) naming where it was given (the flag, ``<sweep file>: parallel``, ``Pulumi.<stack>.yaml:
tfcli:parallelism``).

Pure, no pydantic: the flag is checked before a sweep's spec is read.
"""

from __future__ import annotations

from trainer.kernel.errors import InvalidInput

MIN_PARALLEL = 1
PARALLEL_FLAG = "--parallel"
FILE_KEY = "parallel"  # the sweep file's key


def parallel_problem(value: int) -> str | None:
    """What is wrong with ``value`` as trials at a time (None: nothing); the sweep file's validator says it too."""
    return f"at least {MIN_PARALLEL}, got {value}" if value < MIN_PARALLEL else None


def checked_parallel(value: int | None, where: str = PARALLEL_FLAG) -> int | None:
    """``value`` when it is a count of trials at a time, or None (not given: the default applies); raises
    :class:`InvalidInput` naming ``where`` (the flag, or ``Pulumi.<stack>.yaml: tfcli:parallelism``) otherwise."""
    problem = None if value is None else parallel_problem(value)
    if problem is not None:
        raise InvalidInput(f"{where}: {problem}")
    return value


def resolved_parallel(
    given: int | None, from_file: int | None, *, given_where: str = PARALLEL_FLAG, file: str = "the sweep file"
) -> int | None:
    """The trials at a time in effect: ``given`` (the flag, or the stack key that carries it) over the sweep file's
    ``parallel``; None when neither says (the backend's default applies). Each is checked where it comes from."""
    if given is not None:
        return checked_parallel(given, given_where)
    return checked_parallel(from_file, f"{file}: {FILE_KEY}")
