"""Prove an experiment runs before anything is spent on it: the trainer's own build-and-step, problems named.

``tfcli validate`` (and anything else that promises a spec will train) calls :func:`build_experiment`; it runs
:func:`trainer.preflight.preflight` — the environment and the agent exactly as the trainer builds them, stepped
once, in a child process (:mod:`trainer.environments.isolated`: the environment's code may end the process or
hang) — and words what went wrong as ``<file>: <field>: <message>``. It imports TensorFlow, so only the commands
that need it import this module, inside the command.
"""

from __future__ import annotations

from tfcli.errors import InvalidInput, TfcliError
from tfcli.spec import Experiment


def importable_project_code() -> None:
    """The project's root first on ``sys.path``, as the trainer's ``--code`` puts it, so that its own environments
    (``envs/``) build in this process too (``validate``, ``play``)."""
    from tfcli.spec.library import find_project_root
    from trainer.code_paths import add_code_paths

    root = find_project_root()
    if root is not None:
        add_code_paths([root])


def build_experiment(experiment: Experiment, *, shown: str) -> str:
    """One line saying what was built and stepped; :class:`InvalidInput` naming ``shown`` and the field if not."""
    from trainer.environments.isolated import run_isolated
    from trainer.preflight import describe_preflight, environment_label

    importable_project_code()

    try:
        # In a child process: the environment's code may end the process (sys.exit, os._exit) or hang.
        return str(
            run_isolated(
                describe_preflight,
                (experiment,),
                environment=environment_label(experiment),
                timeout=experiment.step_timeout,
            )
        )
    except InvalidInput as error:
        raise error.in_file(shown) from error
    except TfcliError as error:  # e.g. a level that needs a package that is not installed
        raise InvalidInput(error.lines()).in_file(shown) from error
