"""TensorForce agent files with the keys tfcli owns (``saver``, ``summarizer``, ``recorder``,
``max_episode_timesteps``, ``parallel_interactions``, ``states``, ``actions``), translated into tfcli's settings.

TensorForce 0.6.5's meanings (its ``TensorforceAgent`` docstring): ``saver`` saves every ``frequency`` ``unit``
(timesteps, episodes or updates, default updates) and keeps ``max_checkpoints``; ``summarizer.summaries`` names what
is written ("all": every label but "graph"); ``recorder`` writes episode traces every ``frequency`` episodes after
``start``, keeping ``max-traces`` files. Directories and file names are tfcli's (everything goes under the run's
``results/``), and so are the keys the experiment decides (the episode limit, how many environments step at once).
"""

from __future__ import annotations

import difflib
from typing import Any

from trainer.kernel.spec.recording import ALL_AGENT_SUMMARIES
from trainer.kernel.spec.translation import DocumentTranslator, Translation

OWNED = ("saver", "summarizer", "recorder", "max_episode_timesteps", "parallel_interactions", "states", "actions")
_SUBKEYS = {
    "saver": ("directory", "filename", "frequency", "unit", "max_checkpoints", "max_hour_frequency"),
    "summarizer": ("directory", "filename", "max_summaries", "flush", "summaries"),
    "recorder": ("directory", "frequency", "start", "max-traces", "max_traces"),
}
_UNITS = {"timesteps": "t", "episodes": "e"}


def is_tensorforce_agent(document: Any) -> bool:
    """An agent mapping that uses a key tfcli owns, or TensorForce's ``type`` for the agent's name."""
    return isinstance(document, dict) and (
        any(key in document for key in OWNED) or ("type" in document and "agent" not in document)
    )


class _Agent(DocumentTranslator):
    """One agent document being translated; problems are gathered and raised together."""

    def section(self, key: str) -> dict[str, Any] | None:
        """``saver`` / ``summarizer`` / ``recorder`` as a mapping (a string is TensorForce's directory-only form)."""
        value = self.rest.pop(key)
        if isinstance(value, str):
            value = {"directory": value}
        if value is None:
            return None
        if not isinstance(value, dict):
            self.problem(key, f"expected a directory or a mapping of {', '.join(_SUBKEYS[key])}")
            return None
        for sub in value:
            if sub not in _SUBKEYS[key]:
                close = difflib.get_close_matches(str(sub), _SUBKEYS[key], n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                self.problem(f"{key}.{sub}", f"unknown key{hint}; allowed here: {', '.join(_SUBKEYS[key])}")
        owned = ("directory", "filename", "max_summaries")
        self.out.managed += [f"{key}.{sub} (results/)" for sub in owned if sub in value]
        return value

    def positive(self, path: str, value: Any) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self.problem(path, f"expected a whole number above 0, got {value!r}")
            return None
        return value

    def saver(self) -> None:
        saver = self.section("saver")
        if saver is None:
            return
        unit = saver.get("unit", "updates")
        if unit not in (*_UNITS, "updates"):
            self.problem("saver.unit", f"got {unit!r}; expected timesteps, episodes or updates")
        elif "frequency" in saver and (frequency := self.positive("saver.frequency", saver["frequency"])):
            if unit in _UNITS:
                every = f"{frequency}{_UNITS[unit]}"
                self.out.experiment["saver_frequency"] = every
                self.out.mapped.append(f"saver.frequency {frequency} {unit} -> saver_frequency {every}")
            else:
                self.out.ignored.append("saver.frequency in updates (tfcli saves by seconds, episodes or timesteps)")
        if "max_checkpoints" in saver and (kept := self.positive("saver.max_checkpoints", saver["max_checkpoints"])):
            self.out.experiment["keep_checkpoints"] = kept
            self.out.mapped.append(f"saver.max_checkpoints {kept} -> keep_checkpoints {kept}")
        if "max_hour_frequency" in saver:
            self.out.ignored.append("saver.max_hour_frequency (tfcli keeps the newest checkpoints only)")

    def summarizer(self) -> None:
        summarizer = self.section("summarizer")
        if summarizer is None:
            return
        if "flush" in summarizer:
            self.out.ignored.append("summarizer.flush (the trainer flushes every 10 s)")
        if "summaries" not in summarizer:
            return
        summaries = summarizer["summaries"]
        if summaries == "all":
            chosen = list(ALL_AGENT_SUMMARIES)
        elif isinstance(summaries, list) and all(isinstance(label, str) for label in summaries):
            unknown = [label for label in summaries if label not in (*ALL_AGENT_SUMMARIES, "graph")]
            if unknown:
                self.problem(
                    "summarizer.summaries",
                    f"unknown summaries {unknown}; TensorForce 0.6 has {', '.join(ALL_AGENT_SUMMARIES)}, graph",
                )
                return
            if "graph" in summaries:
                self.out.ignored.append("summarizer.summaries 'graph' (a traced graph, not a learning signal)")
            chosen = [label for label in summaries if label != "graph"]
        else:
            self.problem("summarizer.summaries", f"expected 'all' or a list of summary names, got {summaries!r}")
            return
        self.out.experiment["agent_summaries"] = chosen
        self.out.mapped.append(f"summarizer.summaries -> agent_summaries {', '.join(chosen)}")

    def recorder(self) -> None:
        recorder = self.section("recorder")
        if recorder is None:
            return
        record: dict[str, Any] = {}
        for key, name in (("frequency", "frequency"), ("max-traces", "max_traces"), ("max_traces", "max_traces")):
            if key in recorder and (value := self.positive(f"recorder.{key}", recorder[key])):
                record[name] = value
        if "start" in recorder:
            start = recorder["start"]
            if isinstance(start, bool) or not isinstance(start, int) or start < 0:
                self.problem("recorder.start", f"expected a whole number >= 0, got {start!r}")
            else:
                record["start"] = start
        self.out.experiment["record"] = record
        self.out.mapped.append("recorder -> record (traces in results/traces/)")

    def translate(self) -> Translation:
        if "type" in self.rest and "agent" not in self.rest:
            self.rest["agent"] = self.rest.pop("type")
            self.out.mapped.append(f"type {self.rest['agent']} -> agent {self.rest['agent']}")
        for key in ("saver", "summarizer", "recorder"):
            if key in self.rest:
                getattr(self, key)()
        if "max_episode_timesteps" in self.rest:
            limit = self.positive("max_episode_timesteps", self.rest.pop("max_episode_timesteps"))
            if limit:
                self.out.experiment["max_timesteps_per_episode"] = limit
                self.out.mapped.append(f"max_episode_timesteps {limit} -> max_timesteps_per_episode {limit}")
        if "parallel_interactions" in self.rest:
            self.rest.pop("parallel_interactions")
            self.out.managed.append("parallel_interactions (run_mode, num_workers)")
        taken = [key for key in ("states", "actions") if self.rest.pop(key, None) is not None]
        if taken:
            self.out.managed.append(f"{', '.join(taken)} (from the environment)")
        self.out.document = self.rest  # with problems too: the other keys still get checked
        return self.out


def translate_agent(document: dict[str, Any], *, shown: str, prefix: str = "") -> Translation:
    """The tfcli form of a TensorForce agent document; problems name ``shown`` and the field (``prefix`` + key)."""
    return _Agent(document, shown, prefix).translate()
