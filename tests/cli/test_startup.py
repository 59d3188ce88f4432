"""``tfcli --help`` must stay fast: the CLI imports no TensorFlow, Pulumi, cloud SDK or pydantic at start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def _modules_after(argv: list[str], cwd: Path | None = None) -> list[str]:
    """The modules loaded once the CLI has handled ``argv`` (in a fresh interpreter, in ``cwd``)."""
    code = (
        "import sys\n"
        "from tfcli.cli.app import app\n"
        f"try:\n    app({argv!r})\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=cwd)
    return result.stdout.splitlines()[-1].split()


def test_help_imports_no_pydantic_and_no_spec_model() -> None:
    """``tfcli --help`` loads no pydantic model (tfcli's spec, project or run models: ~0.6 s): a command imports
    the models it uses when it runs (issue 30)."""
    loaded = _modules_after(["--help"])
    assert [m for m in loaded if m.split(".")[0] in ("pydantic", "pydantic_core")] == []
    models = ("trainer.kernel.spec", "tfcli.project", "tfcli.runs", "tfcli.experiments", "tfcli.sweeps")
    assert [m for m in loaded if m.startswith(models)] == []


def test_a_group_help_imports_no_spec_model() -> None:
    """``tfcli experiment --help`` neither: pydantic itself is typer's there (it validates parameters with it)."""
    loaded = _modules_after(["experiment", "--help"])
    models = ("trainer.kernel.spec", "tfcli.project", "tfcli.runs", "tfcli.experiments", "tfcli.sweeps")
    assert [m for m in loaded if m.startswith(models)] == []


def test_list_of_a_local_project_imports_no_gke_backend(tmp_path: Path) -> None:
    """``experiment list`` where no run is on GKE loads no GKE backend (its stacks, bucket and sweep readings):
    a backend is imported where a run recorded it."""
    _modules_after(["init", str(tmp_path)])
    loaded = _modules_after(["experiment", "list"], cwd=tmp_path)
    assert "tfcli.experiments.store" in loaded  # it did read the project
    gke = {"tfcli.gke.backend", "tfcli.gke.stacks", "tfcli.gke.sweep_readings", "tfcli.gke.bucket_reads"}
    assert gke & set(loaded) == set()  # (tfcli.gke.events: the CLI's Pulumi progress observer, a few classes)


def test_list_of_finished_runs_imports_no_numpy(tmp_path: Path) -> None:
    """``experiment list`` of a project with a finished run and a sweep reads statuses only: the sweeps' statistics,
    the comparison tables and the rung judgement (numpy, ~0.2 s) load where a table or a rung needs them
    (issue 30)."""
    _modules_after(["init", str(tmp_path)])
    _modules_after(["experiment", "new", "-f", "cartpole-ppo", "-n", "done"], cwd=tmp_path)
    results = tmp_path / "experiments" / "done" / "results"
    results.mkdir(parents=True)
    (results / "result.json").write_text('{"status": "completed", "timesteps": 100000, "episodes": 400}')
    (tmp_path / "experiments" / "done" / "run.json").write_text('{"backend": "local", "started_at": "2026-01-01"}')
    loaded = _modules_after(["experiment", "list"], cwd=tmp_path)
    assert "trainer.kernel.budget" in loaded  # it did read the run's result (tfcli.experiments.status.reported_state)
    assert [m for m in loaded if m.split(".")[0] == "numpy"] == []
    assert {"tfcli.runs.comparison", "tfcli.sweeps.aggregate", "trainer.rung_wait"} & set(loaded) == set()


def test_list_of_experiments_and_a_sweep_imports_no_spec_model(tmp_path: Path) -> None:
    """``experiment list`` reads the stored specs as plain data (``SpecView``): the experiment and sweep-file models
    (pydantic, ~0.2 s of a 2-core machine) load where a spec is validated, not to list runs (issue 30)."""
    _modules_after(["init", str(tmp_path)])
    _modules_after(["experiment", "new", "-f", "cartpole-ppo", "-n", "one"], cwd=tmp_path)
    sweep = ["experiment", "sweep", "-f", "cartpole-ppo", "-n", "sw", "--set", "agent.learning_rate=0.001,0.01"]
    _modules_after([*sweep, "--seeds", "1", "--no-build"], cwd=tmp_path)
    loaded = _modules_after(["experiment", "list"], cwd=tmp_path)
    assert {"tfcli.experiments.store", "tfcli.sweeps.store"} <= set(loaded)  # it did read both
    models = {
        "trainer.kernel.spec.experiment",
        "trainer.kernel.spec.sweep",
        "trainer.kernel.spec.environment",
        "trainer.kernel.spec.cluster",
    }
    assert models & set(loaded) == set()


SUPERVISOR_PROBE = """
import subprocess, sys
from pathlib import Path
import tfcli.local.supervisor

class Launched(Exception):
    pass

def popen(command, **options):
    models = ("trainer.kernel.spec.base", "trainer.kernel.spec.experiment", "trainer.kernel.spec.loader")
    models += ("tfcli.project",)
    loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core") or m in models)
    print("COMMAND", " ".join(command[1:4]))
    print("LOADED", loaded)
    raise Launched

tfcli.local.supervisor.subprocess.Popen = popen
try:
    tfcli.local.supervisor.supervise(Path(sys.argv[1]))
except Launched:
    pass
"""


def test_the_supervisor_starts_its_trainer_before_loading_a_spec_model(tmp_path: Path) -> None:
    """The supervisor reads its run mode from the stored spec as plain data and starts the trainer with no pydantic
    model loaded: validating the spec (~0.5 s) is the trainer's first step anyway, and the supervisor's own start-up
    lies on the path to every run's first timestep (issue 30)."""
    _modules_after(["init", str(tmp_path)])
    _modules_after(["experiment", "new", "-f", "cartpole-ppo", "-n", "one"], cwd=tmp_path)
    folder = tmp_path / "experiments" / "one"
    env = {k: v for k, v in os.environ.items() if k != "TFCLI_WARM_TRAINER"}
    result = subprocess.run(
        [sys.executable, "-c", SUPERVISOR_PROBE, str(folder)], capture_output=True, text=True, env=env, check=True
    )
    assert "COMMAND -m trainer run" in result.stdout
    assert "LOADED []" in result.stdout
