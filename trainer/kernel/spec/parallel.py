"""A sweep's trials at a time: one setting with one rule, wherever it is given.

It is given three ways — ``start -s --parallel N`` (or ``-p``; locally and on GKE alike, and to ``render -s`` and
``plan -s``), the sweep file's ``parallel`` (read by pydantic with the same lower bound) and a sweep stack's
``tfcli:parallelism`` (infra/sweep_config.py) — and means the same in each: that many trials train at once. Fewer
than one would start nothing and wait for ever, so each is refused (exit 2) naming where it was given.

Pure, no pydantic: the flag is checked before a sweep's spec is read.
"""

from __future__ import annotations

from trainer.kernel.errors import InvalidInput

MIN_PARALLEL = 1
PARALLEL_FLAG = "--parallel"


def checked_parallel(value: int | None, where: str = PARALLEL_FLAG) -> int | None:
    """``value`` when it is a count of trials at a time, or None (not given: the default applies); raises
    :class:`InvalidInput` naming ``where`` (the flag, or ``Pulumi.<stack>.yaml: tfcli:parallelism``) otherwise."""
    if value is not None and value < MIN_PARALLEL:
        raise InvalidInput(f"{where}: at least {MIN_PARALLEL}, got {value}")
    return value
