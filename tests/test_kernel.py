"""The kernel at the bottom (docs/design.md §3.2): importing it loads nothing of tfcli, infra or the rest of the
trainer, so the trainer's image, infra's program and the CLI can all stand on it. import-linter checks the import
statements (`top-level-layers`, `kernel-at-the-bottom`); this checks what a real interpreter loads."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = ROOT / "trainer" / "kernel"


def _modules_loaded_by(statement: str) -> list[str]:
    script = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, cwd=ROOT).stdout
    return json.loads(out.splitlines()[-1])


def test_importing_every_kernel_module_loads_nothing_of_tfcli_infra_or_the_rest_of_the_trainer() -> None:
    names = sorted(
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for path in KERNEL.rglob("*.py")
    )
    assert "trainer.kernel.spec.loader" in names and "trainer.kernel.config_keys" in names
    loaded = _modules_loaded_by("\n".join(f"import {name}" for name in names))
    ours = [name for name in loaded if name.split(".")[0] in ("tfcli", "infra", "trainer")]
    outside = [name for name in ours if name != "trainer" and not name.startswith("trainer.kernel")]
    assert outside == [], f"the kernel loaded {outside}"
    assert set(names) <= set(ours)


def test_the_trainer_package_itself_runs_nothing_so_importing_the_kernel_runs_nothing_else() -> None:
    tree = ast.parse((ROOT / "trainer" / "__init__.py").read_text())
    statements = [
        node for node in tree.body if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]
    assert statements == []


def test_the_bundled_library_lives_in_the_kernel_beside_the_reader_that_resolves_its_names() -> None:
    from trainer.kernel.spec.library import BUNDLED_CONFIGS

    assert BUNDLED_CONFIGS == KERNEL / "configs"
    assert (BUNDLED_CONFIGS / "experiments" / "cartpole-ppo.yaml").is_file()
