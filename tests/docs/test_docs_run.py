"""Every documented console session runs as printed, in a fresh project, and prints what the doc shows (issue 34).

Each markdown file's ```` ```console ```` blocks run in order in one temporary folder with ``tfcli`` on PATH
(tests/docs/doc_sessions.py says how blocks are marked, run and compared, and why a collector of our own). A doc
that drifts fails with a diff per command. After merging changes that alter printed outputs (``plan`` figures, the
files ``init`` writes), refresh the docs with ``uv run pytest -n0 tests/docs --update-docs`` and review ``git diff``.
The sessions start real ``tfcli`` processes (each imports TensorFlow where it builds an agent), so they are slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_sessions import ROOT, Shell, blocks, diff, matches, refreshed, rewrite

pytestmark = pytest.mark.slow

DOCS = ["README.md", "docs/reference.md", "docs/gke.md", "trainer/README.md"]


@pytest.mark.parametrize("doc", DOCS)
def test_the_docs_console_sessions_run_as_printed(doc: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    update = bool(request.config.getoption("--update-docs", default=False))
    shell = Shell.fresh(tmp_path)
    problems, rewrites = [], []
    for block in blocks(ROOT / doc):
        if not block.run:
            continue
        outputs = []
        for command in block.commands:
            code, actual = shell.run(command.text)
            if code != block.exit_code:
                problems.append(f"{block.where}: `{command.text}` exited {code}, the doc expects {block.exit_code}")
            if not matches(command.printed, actual, block.trains):
                problems.append(
                    f"{block.where}: `{command.text}` prints otherwise now:\n"
                    f"{diff(command.printed, actual, block.trains)}"
                )
            outputs.append(refreshed(command.printed, actual, block.trains))
        rewrites.append((block, outputs))
    if update:
        rewrite(rewrites)
        problems = [problem for problem in problems if "exited" in problem]
    assert not problems, (
        "\n\n".join(problems) + "\n\n(refresh the printed outputs: pytest -n0 tests/docs --update-docs)"
    )
