"""The reference tables users read stay true to the code (issue 34: "every documented command runs as printed"):
docs/reference.md's experiment spec table names every key an experiment accepts, its config-library list every
bundled config, and trainer/README.md's "What DIR holds" every summaries/ folder the trainer writes."""

from __future__ import annotations

import re
from pathlib import Path

from tfcli.spec import Experiment
from tfcli.spec.library import BUNDLED_CONFIGS, KINDS

ROOT = Path(__file__).resolve().parents[1]


def section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of any level."""
    start = text.index(heading) + len(heading)
    following = re.search(r"^#", text[start:], re.MULTILINE)
    return text[start : start + following.start()] if following else text[start:]


def test_the_experiment_spec_table_names_every_accepted_key() -> None:
    table = section((ROOT / "docs" / "reference.md").read_text(), "### Experiment spec")
    documented = {
        key for cell in re.findall(r"^\| ([^|]+) \|", table, re.MULTILINE) for key in re.findall(r"`(\w+)`", cell)
    }
    assert set(Experiment.model_fields) - documented == set()


def test_the_config_library_lists_every_bundled_config() -> None:
    listed = section((ROOT / "docs" / "reference.md").read_text(), "## The config library")
    bundled = {path.stem for kind in KINDS for path in (BUNDLED_CONFIGS / kind).iterdir() if path.is_file()}
    assert {name for name in bundled if f"`{name}`" not in listed} == set()


def test_what_the_results_folder_holds_lists_every_summaries_folder() -> None:
    holds = section((ROOT / "trainer" / "README.md").read_text(), "## What `DIR` holds")
    written = set(re.findall(r'"summaries" / "(\w+)"', (ROOT / "trainer" / "run.py").read_text()))
    written |= set(re.findall(r"summaries/(\w+)/", (ROOT / "trainer" / "agents.py").read_text()))
    assert written >= {"trainer", "hparams", "agent"}
    assert {name for name in written if f"`{name}/`" not in holds and f"summaries/{name}/" not in holds} == set()
