"""``tfcli --help`` must stay fast: the CLI imports no TensorFlow, Pulumi, cloud SDK or pydantic at start-up."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "tensorflow", "tensorforce", "pulumi", "pulumi_gcp", "pulumi_kubernetes", "google.cloud", "gymnasium", "kubernetes",
    "numpy",  # the sweeps' statistics: imported when a table is drawn, not for --help
)  # fmt: skip


def test_importing_the_cli_imports_nothing_heavy() -> None:
    code = (
        "import sys, tfcli.cli.app\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r}))\n"
    )
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert output.strip() == "[]"


def test_help_runs_and_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from tfcli.cli.app import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        f"print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert "validate" in result.stdout
    assert "HEAVY []" in result.stdout
