"""TensorForce's own spec forms, accepted as they are: each agent and environment document (inline or from a file)
is translated into tfcli's form before validation, and a short note says what was mapped, what tfcli manages and
what is ignored (docs/reference.md, "Coming from TensorForce").

A translation may imply experiment keys (an agent file's ``max_episode_timesteps``, a saver's frequency, an
environment's ``reward_threshold``). They apply only where the experiment (its file or a flag) says nothing, so what
the user typed for this run wins over what a shared file says; the note then says which value is used. Network
files need no translation: ``{type: layered, layers: [...]}``, ``{type: auto, ...}`` and a bare list of layers are
TensorForce's ``network`` argument as they are.
"""

from __future__ import annotations

from typing import Any

from trainer.kernel.spec.tensorforce_agents import is_tensorforce_agent, translate_agent
from trainer.kernel.spec.tensorforce_environments import is_tensorforce_environment, translate_environment
from trainer.kernel.spec.translation import Translation, emit

_FORMS = {
    "agent": (is_tensorforce_agent, translate_agent),
    "environment": (is_tensorforce_environment, translate_environment),
}


def implied_origin(translation: Translation, key: str, *, where: str, prefix: str) -> str:
    """Where an experiment key a translation implied came from, for its validation errors: the TensorForce file and
    its own key (``configs/agents/tf.json: saver.max_checkpoints (read as keep_checkpoints)``), or the inline
    document's (``exp.yaml: agent.saver.max_checkpoints ...``) — never the experiment's file or "the command line",
    which said nothing about it."""
    source = next((item.split(" ", 1)[0] for item in translation.mapped if f"-> {key}" in item), None)
    named = f"{prefix}{source}" if source else prefix.rstrip(".") or "its settings"
    return f"{where}: {named} (read as {key})"


def translate_references(raw: dict[str, Any], *, shown: str, origins: dict[str, str]) -> list[str]:
    """Replace ``raw``'s agent and environment, when in TensorForce's form, by their tfcli form (in place).

    ``shown`` is the experiment's own file, ``origins`` the file each referenced document came from; each
    experiment key a translation sets is added to it, naming the file and TensorForce key it came from. Returns the
    problems (each naming that file and the field); a document with problems keeps in ``raw`` only what validation
    should still check (or nothing), so that no problem is reported twice in other words.
    """
    problems: list[str] = []
    set_by: dict[str, str] = {}  # experiment keys a translated file set, and which file
    for field, (is_form, translate) in _FORMS.items():
        document = raw.get(field)
        if not isinstance(document, dict) or not is_form(document):
            continue
        where, prefix = (origins[field], "") if field in origins else (shown, f"{field}.")
        translation: Translation = translate(document, shown=where, prefix=prefix)
        if translation.problems:
            problems.extend(translation.problems)
            if translation.document is None:
                raw.pop(field)
            else:
                raw[field] = translation.document
            continue
        raw[field] = translation.document
        for key, value in translation.experiment.items():
            if key in raw and raw[key] != value:
                translation.mapped = [item for item in translation.mapped if not item.endswith(f"-> {key} {value}")]
                translation.ignored.append(f"{key} {value} ({set_by.get(key, 'the experiment')} sets {raw[key]})")
            else:
                raw[key] = value
                set_by[key] = f"the {field} file" if not prefix else f"the inline {field}"
                origins[key] = implied_origin(translation, key, where=where, prefix=prefix)
        emit(translation.note(where if not prefix else f"{shown}: {field}", field))
    return problems
