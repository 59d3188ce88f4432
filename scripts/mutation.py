"""Mutation testing of the pure core modules, each against its own tests: ``uv run python scripts/mutation.py``.

For every module below, mutmut (pinned in pyproject's dev group) makes small wrong versions of it (``<`` for ``<=``,
``+ 1`` for ``- 1``, a constant changed, a line dropped) and runs the module's own test files on each. A mutant the
tests still pass is a wrong program the suite would let through. The table at the end is per module: mutants made,
killed, the survivors listed as equivalent below (a change no caller can observe), and the score
``killed / (made - equivalent)``; the goal is 90 % on each. Survivors that are not listed are printed by name
(``--show``: with their diffs). A module whose pure rules share the file with I/O is mutated only in the functions
``ONLY`` names for it.

Each module works in its own folder ``.mutation/<module>/`` (git ignores it): symlinks to the repository's packages
and tests, a pyproject.toml with the settings for mutmut and pytest, and mutmut's ``mutants/`` copy, made anew each
run (mutmut would keep a verdict after a test changed). ``MODULE ...`` runs only those (e.g.
``trainer/schedule.py``). Exit status 1 when a module is under the goal.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / ".mutation"
GOAL = 0.90

# module -> the test files that are its own (run on every mutant of it; the faster, the shorter the run).
MODULES: dict[str, list[str]] = {
    "tfcli/sweeps/stats.py": ["tests/sweeps/test_stats_oracles.py", "tests/sweeps/test_stats.py"],
    "trainer/kernel/spec/sweep_axes.py": ["tests/spec/test_sweep_axes.py"],
    "trainer/kernel/spec/frequency.py": ["tests/spec/test_frequency.py"],
    "trainer/kernel/spec/gpu_zones.py": ["tests/spec/test_gpu_zones.py"],
    "trainer/kernel/spec/ttl.py": ["tests/spec/test_ttl.py"],
    "trainer/kernel/spec/counted.py": ["tests/spec/test_frequency.py", "tests/spec/test_ttl.py"],
    "tfcli/runs/reaping.py": ["tests/cli/test_reap_rule.py"],
    "infra/naming.py": ["tests/infra/test_naming.py"],
    "infra/image_context.py": ["tests/infra/test_image_context.py"],
    "infra/image_progress.py": ["tests/infra/test_image_progress.py"],
    "trainer/transport/codec.py": ["tests/trainer/test_codec.py"],
    "trainer/schedule.py": ["tests/trainer/test_schedule.py"],
    "trainer/kernel/budget.py": ["tests/trainer/test_budget.py"],
    "trainer/kernel/scores.py": ["tests/trainer/test_scores.py"],
    "trainer/rungs.py": ["tests/trainer/test_rungs.py"],
    "trainer/rung_scores.py": ["tests/trainer/test_published_scores.py"],
    "tfcli/gke/sweep_job.py": ["tests/gke/test_sweep_job.py"],
    "tfcli/runs/resuming.py": ["tests/cli/test_resume_rules.py"],
    "tfcli/gke/states.py": ["tests/gke/test_run_states.py"],
    "trainer/sweep_queue.py": ["tests/trainer/test_sweep_queue.py"],
    "trainer/trial_sections.py": ["tests/trainer/test_trial_sections.py"],
    "trainer/kernel/spec/suggest.py": ["tests/spec/test_suggest.py"],
    "trainer/result_file.py": ["tests/trainer/test_result_file.py"],
    "trainer/kernel/spec/parallel.py": ["tests/spec/test_parallel.py"],
    "tfcli/experiments/spec_view.py": ["tests/spec/test_spec_view.py"],
    "tfcli/experiments/record.py": ["tests/runs/test_run_record.py"],
    "tfcli/runs/registry.py": ["tests/runs/test_registry_rules.py"],
}

# A module whose pure rules share the file with I/O: only these of its functions are mutated (as mutmut names them:
# ``x_function``, ``xǁClassǁmethod``); the rest is left to the tests that run the commands.
ONLY: dict[str, list[str]] = {
    # run.json's shape: the typed reading, the sections and the migration of flat keys; not RunRecord.read (a file)
    "tfcli/experiments/record.py": [
        "x_typed_value",
        "x_read_fields",
        "x_written_fields",
        "x_sections_of",
        "xǁRunRecordǁfrom_json",
        "xǁRunRecordǁto_json",
        "xǁRunRecordǁwith_handle",
    ],
    # which members a resume holds and extends, and what it refuses; not _spec_budget and write_budget (the run's
    # files)
    "tfcli/runs/resuming.py": [
        "xǁResumeOptionsǁbudget",
        "xǁResumeOptionsǁcheck",
        "xǁResumePlanǁextends",
        "x__check_budget",
        "x_plan_resume",
        "x_check_experiment_resumable",
        "x__extend_hint",
    ],
}

# Surviving mutants that no test can kill because the program behaves the same: mutmut's name -> why.
# Listed, not hidden: the table shows how many each module has, and a listed name that stops surviving (the code
# moved) is reported so the list stays true.
EQUIVALENT: dict[str, str] = {
    "infra.naming.x_fit__mutmut_11": "rstrip('XX-XX') strips the same as rstrip('-'): names are lower case, no 'X'",
    "tfcli.sweeps.stats.x_stratified_resamples__mutmut_6": "integers(runs, ...) is integers(0, runs, ...): same draws",
    "tfcli.sweeps.stats.x_curve_band__mutmut_14": "integers(runs, ...) is integers(0, runs, ...): same draws",
    **{
        f"trainer.kernel.spec.sweep_axes.x_describe__mutmut_{n}": "zip(..., strict=True) -> strict None/False/left "
        "out: "
        "the names are made from the combination's own keys, so the two always have one length"
        for n in (21, 24, 25)
    },
    **{
        f"trainer.kernel.spec.sweep_axes.x_describe__mutmut_{n}": "rsplit('.', 1)[-1] -> rsplit('.')[-1] or "
        "rsplit('.', 2)[-1]: the last part is the same however many splits are made before it"
        for n in (5, 8)
    },
    "trainer.kernel.scores.x_smooth__mutmut_4": "cumsum from 1.0 instead of 0.0: every window is a difference of two "
    "running sums, so the constant cancels",
    "trainer.transport.codec.x__dtype__mutmut_4": "decode('ASCII') is decode('ascii'): codec names ignore case",
    **{
        f"trainer.rung_scores.x__read_text__mutmut_{n}": "encoding 'UTF-8' or the locale's instead of 'utf-8': the "
        "files it reads are json.dumps output, ASCII only"
        for n in (1, 3)
    },
    "trainer.rung_scores.xǁRungScoresǁscore__mutmut_2": "'if reached(...) or True': reached() has run either way, "
    "and a score not reached is not in _known, so .get gives None as the else branch does",
    "trainer.kernel.spec.sweep_axes.x_scalar__mutmut_5": "lstrip('XX+-XX') strips the same as lstrip('+-'): the "
    "text was lower-cased, so it has no 'X'",
    **{
        f"trainer.kernel.scores.x_iqm__mutmut_{n}": "asarray without dtype=float: sorting and numpy's mean of "
        "integers give the same float64 numbers"
        for n in (4, 6)
    },
    "tfcli.gke.sweep_job.x_parse_indexes__mutmut_7": "None read as 'XXXX' instead of '': not an index list either, "
    "so empty all the same",
    **{
        f"tfcli.gke.sweep_job.xǁJobReadingǁof__mutmut_{n}": "failed = '' / 'failed if ... or True': the other of the "
        "two guards still gives None when there is no Failed condition"
        for n in (33, 54)
    },
    "trainer.transport.codec.x_encode__mutmut_33": "reshape(-2) is reshape(-1): numpy takes any negative as 'infer'",
    **{
        f"infra.image_context.x__glob_regex__mutmut_{n}": "'end <= 0' / 'end < 1' for 'end < 0': a found ']' is "
        "past the '[' at i >= 0, so end is never 0"
        for n in (50, 51)
    },
    **{
        f"infra.image_context.x_context_files__mutmut_{n}": "read_text(encoding=None / 'UTF-8') for 'utf-8': the "
        "same codec here (a UTF-8 locale) and case does not matter"
        for n in (14, 17)
    },
}


@dataclass
class Score:
    module: str
    made: int
    killed: int
    survived: list[str]
    other: int  # suspicious, skipped, not checked

    @property
    def equivalent(self) -> int:
        return sum(1 for name in self.survived if name in EQUIVALENT)

    @property
    def score(self) -> float:
        counted = self.made - self.equivalent
        return self.killed / counted if counted else 1.0


def _pytest_settings() -> dict[str, list[str]]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)["tool"]["pytest"]["ini_options"]


PYTEST_SETTINGS = _pytest_settings()


def slug(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".")


def prepare(module: str, tests: list[str]) -> Path:
    folder = WORK / slug(module)
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("tfcli", "trainer", "infra", "tests"):
        link = folder / name
        if not link.exists():
            link.symlink_to(ROOT / name, target_is_directory=True)
    quoted = ", ".join(f'"{test}"' for test in tests)
    (folder / "pyproject.toml").write_text(
        "[tool.mutmut]\n"
        'source_paths = ["tfcli", "trainer", "infra"]\n'
        f'only_mutate = ["{module}"]\n'
        f"pytest_add_cli_args_test_selection = [{quoted}]\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider"]\n'
        # pytest would otherwise find the repository's settings above this folder: its addopts start two test
        # processes per mutant (mutmut runs mutants side by side instead); the warnings it ignores stay ignored.
        "\n[tool.pytest.ini_options]\n"
        'addopts = "-p no:xdist"\n'
        f"filterwarnings = {json.dumps(PYTEST_SETTINGS['filterwarnings'])}\n"
    )
    return folder


def chosen_mutants(module: str) -> list[str]:
    """mutmut's name patterns for the mutants of ``module`` that are tested (none: all of them)."""
    return [f"{slug(module)}.{function}__mutmut_*" for function in ONLY.get(module, [])]


def run(module: str, folder: Path, children: int) -> Score:
    from mutmut.stats import status_by_exit_code

    mutmut = [sys.executable, "-m", "mutmut"]
    # mutmut keeps its verdicts until the mutated function changes, not when a test does: start over each time.
    shutil.rmtree(folder / "mutants", ignore_errors=True)
    patterns = chosen_mutants(module)
    done = subprocess.run(
        [*mutmut, "run", "--max-children", str(children), *patterns], cwd=folder, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.stdout.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"mutmut failed on {module}")
    meta = json.loads((folder / "mutants" / f"{module}.meta").read_text())
    codes: dict[str, int | None] = {
        name: code
        for name, code in meta["exit_code_by_key"].items()
        if not patterns or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
    }
    status = {name: status_by_exit_code[code] for name, code in codes.items()}
    # A mutant that hangs or crashes the tests is caught as surely as one that fails them.
    killed = [name for name, what in status.items() if what in ("killed", "timeout", "segfault")]
    # No test reached it: as good as surviving.
    survived = sorted(name for name, what in status.items() if what in ("survived", "no tests"))
    return Score(module, len(codes), len(killed), survived, len(codes) - len(killed) - len(survived))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", help="only these modules (default: all)")
    parser.add_argument("--children", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--show", action="store_true", help="print each unlisted survivor's diff")
    options = parser.parse_args()
    chosen = options.modules or list(MODULES)
    unknown = [module for module in chosen if module not in MODULES]
    if unknown:
        parser.error(f"not a module of this run: {', '.join(unknown)} (choose from {', '.join(MODULES)})")
    scores = []
    started = time.monotonic()
    for module in chosen:
        began = time.monotonic()
        score = run(module, prepare(module, MODULES[module]), options.children)
        scores.append(score)
        print(f"{module}: {score.killed}/{score.made} killed in {time.monotonic() - began:.0f}s", flush=True)
    print()
    print(f"{'module':<28} {'made':>5} {'killed':>6} {'equiv':>5} {'other':>5} {'score':>6}")
    for score in scores:
        print(
            f"{score.module:<28} {score.made:>5} {score.killed:>6} {score.equivalent:>5} {score.other:>5} "
            f"{score.score:>6.0%}"
        )
    print(f"\n{time.monotonic() - started:.0f}s in all")
    low = [score for score in scores if score.score < GOAL]
    for score in scores:
        for name in score.survived:
            if name not in EQUIVALENT:
                print(f"survived: {name}")
                if options.show:
                    shown = subprocess.run(
                        [sys.executable, "-m", "mutmut", "show", name],
                        cwd=WORK / slug(score.module),
                        capture_output=True,
                        text=True,
                    )
                    print(shown.stdout.strip() + "\n")
    stale = sorted(set(EQUIVALENT) - {name for score in scores for name in score.survived})
    mutated = {slug(score.module) for score in scores}
    for name in stale:
        if name.rsplit(".", 1)[0] in mutated:
            print(f"listed as equivalent but no longer made or killed now: {name}")
    return 1 if low else 0


if __name__ == "__main__":
    sys.exit(main())
