"""The commands bench/README.md and docs/ci.md print exist with the flags they show (issue 34). These docs' commands
run for minutes (benchmarks) or need GCP (CI's deploy and reap jobs), so they are not console sessions; what can
drift without anyone noticing, a module renamed or a flag dropped, is checked here without running them."""

from __future__ import annotations

import re

import pytest
import typer.main
from doc_sessions import ROOT

from tfcli.cli.app import app

BENCH = re.compile(r"uv run python -m bench\.([a-z_]+)([^\n`|]*)")
FLAG = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")
TFCLI = re.compile(r"`(tfcli [^`]*)`")
TOOL = re.compile(r"^uv run ([\w-]+)", re.MULTILINE)


def bench_commands() -> list[tuple[str, list[str]]]:
    text = (ROOT / "bench" / "README.md").read_text()
    return [(name, FLAG.findall(rest)) for name, rest in BENCH.findall(text)]


@pytest.mark.parametrize(("name", "flags"), bench_commands())
def test_each_benchmark_the_readme_prints_exists_with_its_flags(name: str, flags: list[str]) -> None:
    source = (ROOT / "bench" / f"{name}.py").read_text()
    assert "ArgumentParser" in source, f"bench.{name} takes no flags"
    missing = [flag for flag in flags if f'"{flag}"' not in source]
    assert not missing, f"bench/README.md shows bench.{name} {missing}; its parser has no such flag"


def resolves(words: list[str]) -> list[str]:
    """What in ``tfcli WORDS...`` names no command or option (placeholders like NAME and "$X" are values)."""
    command = typer.main.get_command(app)  # typer's own click: a group is what has ``commands``
    wrong = []
    for word in words[1:]:
        if word in getattr(command, "commands", {}):
            command = command.commands[word]  # type: ignore[attr-defined]
        elif hasattr(command, "commands") and not word.startswith("-"):
            wrong.append(f"{command.name} has no command {word}")
        elif word.startswith("-") and word not in {"--help", *(o for p in command.params for o in p.opts)}:
            wrong.append(f"{command.name} {word}")
    return wrong


def test_the_tfcli_commands_ci_md_and_bench_readme_print_exist() -> None:
    found = [m for doc in ("docs/ci.md", "bench/README.md") for m in TFCLI.findall((ROOT / doc).read_text())]
    assert len(found) >= 8
    wrong = [f"`{text}`: {w}" for text in found for w in resolves(text.replace("...", "").split())]
    assert not wrong, wrong


def test_ci_md_tools_are_installed_and_ci_yml_runs_ci_run() -> None:
    tools = TOOL.findall((ROOT / "docs" / "ci.md").read_text())
    assert {"pytest", "ruff", "mypy", "lint-imports"} <= set(tools)
    assert all((ROOT / ".venv" / "bin" / tool).exists() for tool in tools), tools
    assert "bash .ci/run" in (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert (ROOT / ".ci" / "run").is_file()
