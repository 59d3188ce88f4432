"""The reference tables users read stay true to the code (issue 34: "every documented command runs as printed"):
docs/reference.md's experiment spec table names every key an experiment accepts, its config-library list every
bundled config, and trainer/README.md's "What DIR holds" every summaries/ folder the trainer writes."""

from __future__ import annotations

import re
from pathlib import Path

from trainer.kernel.spec import Cluster, Experiment
from trainer.kernel.spec.library import BUNDLED_CONFIGS, KINDS

ROOT = Path(__file__).resolve().parents[1]


def section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of any level."""
    start = text.index(heading) + len(heading)
    following = re.search(r"^#", text[start:], re.MULTILINE)
    return text[start : start + following.start()] if following else text[start:]


def table_keys(heading: str) -> set[str]:
    """The keys the first column of the table under ``heading`` in docs/reference.md names."""
    table = section((ROOT / "docs" / "reference.md").read_text(), heading)
    return {key for cell in re.findall(r"^\| ([^|]+) \|", table, re.MULTILINE) for key in re.findall(r"`(\w+)`", cell)}


def test_the_experiment_spec_table_names_every_accepted_key() -> None:
    assert set(Experiment.model_fields) - table_keys("### Experiment spec") == set()


def test_the_cluster_spec_table_names_every_accepted_key() -> None:
    assert {"gpu_sharing", "provisioning"} <= set(Cluster.model_fields)
    assert set(Cluster.model_fields) - table_keys("### Cluster spec") == set()


def test_the_config_library_lists_every_bundled_config() -> None:
    bundled = {path.stem for kind in KINDS for path in (BUNDLED_CONFIGS / kind).iterdir() if path.is_file()}
    for doc, heading in (("docs/reference.md", "## The config library"), ("README.md", "## The bundled library")):
        listed = section((ROOT / doc).read_text(), heading)
        assert {name for name in bundled if f"`{name}`" not in listed} == set(), doc


def test_what_the_results_folder_holds_lists_every_summaries_folder() -> None:
    holds = section((ROOT / "trainer" / "README.md").read_text(), "## What `DIR` holds")
    written = set(re.findall(r'"summaries" / "(\w+)"', (ROOT / "trainer" / "run.py").read_text()))
    written |= set(re.findall(r"summaries/(\w+)/", (ROOT / "trainer" / "agents.py").read_text()))
    assert written >= {"trainer", "hparams", "agent"}
    assert {name for name in written if f"`{name}/`" not in holds and f"summaries/{name}/" not in holds} == set()
