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


def _modules_after(argv: list[str]) -> list[str]:
    """The modules loaded once the CLI has handled ``argv`` (in a fresh interpreter)."""
    code = (
        "import sys\n"
        "from tfcli.cli.app import app\n"
        f"try:\n    app({argv!r})\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return result.stdout.splitlines()[-1].split()


def test_help_imports_no_pydantic_and_no_spec_model() -> None:
    """``tfcli --help`` loads no pydantic model (tfcli's spec, project or run models: ~0.6 s): a command imports
    the models it uses when it runs (issue 30)."""
    loaded = _modules_after(["--help"])
    assert [m for m in loaded if m.split(".")[0] in ("pydantic", "pydantic_core")] == []
    models = ("tfcli.spec", "tfcli.project", "tfcli.runs", "tfcli.experiments", "tfcli.sweeps")
    assert [m for m in loaded if m.startswith(models)] == []


def test_a_group_help_imports_no_spec_model() -> None:
    """``tfcli experiment --help`` neither: pydantic itself is typer's there (it validates parameters with it)."""
    loaded = _modules_after(["experiment", "--help"])
    models = ("tfcli.spec", "tfcli.project", "tfcli.runs", "tfcli.experiments", "tfcli.sweeps")
    assert [m for m in loaded if m.startswith(models)] == []
