"""Prove an experiment runs before anything is spent on it: the trainer's own build-and-step, problems named.

``tfcli validate`` (and anything else that promises a spec will train) calls :func:`build_experiment`; it runs
:func:`trainer.preflight.preflight` — the environment and the agent exactly as the trainer builds them, stepped
once, in a child process (:mod:`trainer.environments.isolated`: the environment's code may end the process or
hang) — and words what went wrong as ``<file>: <field>: <message>``. It imports TensorFlow, so only the commands
that need it import this module, inside the command.
"""

from __future__ import annotations

from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec import Experiment


def importable_project_code() -> None:
    """The project's root first on ``sys.path``, as the trainer's ``--code`` puts it, so that its own environments
    (``envs/``) build in this process too (``validate``, ``play``)."""
    from trainer.code_paths import add_code_paths
    from trainer.kernel.spec.library import find_project_root

    root = find_project_root()
    if root is not None:
        add_code_paths([root])


def build_experiment(experiment: Experiment, *, shown: str) -> str:
    """One line saying what was built and stepped; :class:`InvalidInput` naming ``shown`` and the field if not."""
    (built,) = build_experiments([(experiment, shown)])
    if isinstance(built, InvalidInput):
        raise built
    return built


def build_experiments(items: list[tuple[Experiment, str]]) -> list[str | InvalidInput]:
    """:func:`build_experiment` for each ``(experiment, shown)``, in one child process (TensorFlow imported once for
    a sweep's combinations): each a line, or the :class:`InvalidInput` naming its file. An environment that ends
    the child (or hangs) is reported against the experiment being built then; the rest are not built."""
    from trainer.environments.isolated import run_isolated
    from trainer.preflight import describe_each, environment_label

    importable_project_code()
    current = [0]  # the experiment the child is building (it reports each index as it starts)

    def started(index: int) -> None:
        current[0] = index

    try:
        # In a child process: the environment's code may end the process (sys.exit, os._exit) or hang.
        answers = run_isolated(
            describe_each,
            ([experiment for experiment, _ in items],),
            environment=lambda: environment_label(items[current[0]][0]),
            timeout=max(experiment.step_timeout for experiment, _ in items),
            on_report=started,
        )
    except TfcliError as error:  # the child died, hung, or failed outside any one build
        failure = error if isinstance(error, InvalidInput) else InvalidInput(error.lines())
        return [failure.in_file(items[current[0]][1])]
    return [
        answer if isinstance(answer, str) else InvalidInput(answer).in_file(shown)
        for answer, (_, shown) in zip(answers, items, strict=True)
    ]
