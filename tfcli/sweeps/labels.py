"""A sweep's labels are its trials' settings: ``sweep.yaml`` must still say what each trial was made with.

``list -s``, ``status -s`` and ``compare`` label a trial's results with its combination as ``sweep.yaml`` expands
(``agent.learning_rate=0.001, seed 1``), while the trial trains what its own ``experiment.yaml`` says. Both are
written together (``tfcli experiment sweep``, ``resume --total-timesteps``); a hand-edited ``sweep.yaml`` (axes
values changed or reordered, seeds changed) would otherwise relabel results with settings they were not trained
with. So reading a sweep's trials compares, for each trial that exists, the swept keys and the seed, and refuses a
difference naming the trial, the key, both values and the way out.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.documents import display_path, read_document
from trainer.kernel.spec.sweep_axes import get_dotted

if TYPE_CHECKING:  # the sweep file's models (pydantic): not for every `list`
    from trainer.kernel.spec.sweep import Trial

_MISSING = object()


def _value(data: Any, key: str) -> Any:
    try:
        return get_dotted(data, key)
    except KeyError:
        return _MISSING


def refuse_relabelled(experiments: Path, trials: list[Trial], shown: str) -> None:
    """``InvalidInput`` when a trial's ``experiments/<trial>/experiment.yaml`` was made with other swept values (or
    another seed) than the sweep file ``shown`` now gives it; trials not made yet are not compared."""
    for trial in trials:
        spec_file = experiments / trial.name / "experiment.yaml"
        if not spec_file.is_file():
            continue
        data = read_document(spec_file)
        for key in [*trial.combination, "seed"]:
            made, labelled = _value(data, key), _value(trial.data, key)
            if made != labelled:
                was = "unset" if made is _MISSING else repr(made)
                now = "unset" if labelled is _MISSING else repr(labelled)
                raise InvalidInput(
                    f"{shown}: trial {trial.name} was made with {key}={was} ({display_path(spec_file)}), but this "
                    f"file now gives it {key}={now}: its results would be labelled with settings they were not "
                    "trained with",
                    hint="restore the sweep file as it was, or make the sweep again with `tfcli experiment sweep "
                    "-f FILE --restart` (deletes its trials' results)",
                )
