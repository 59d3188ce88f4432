"""Hostile and broken spec input (issue 21's table): refused fast with exit 2 naming the file, nothing written.

Each probe was measured on the main before the fix: the alias bomb and ``/dev/zero`` ran until the kernel killed
them, 100,000 unknown keys printed 100,000 lines, a NaN reached TensorForce, a binary stack file was an internal error
and a sweep took the folder of another sweep as a trial's.
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_kit import invoke
from trainer.kernel.errors import MAX_PROBLEMS
from trainer.kernel.spec.documents import MAX_DEPTH, MAX_SPEC_BYTES

# 9 levels of 9 aliases: 9**9 (387 million) strings once expanded, in 400 bytes
ALIAS_BOMB = "\n".join(
    [
        "name: bomb",
        "agent: ppo",
        "environment:",
        "  type: gymnasium",
        "  level: CartPole-v1",
        "  kwargs:",
        '    l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
        *(f"    l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)),
        "total_timesteps: 1000",
    ]
)


def run_tfcli(*args: str, cwd: Path, memory_mb: int = 2048, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """tfcli as its own process under a memory limit: a probe that expands without bound dies instead of passing."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

    return subprocess.run(
        [sys.executable, "-m", "tfcli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
    )


def assert_refused(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for needle in needles:
        assert needle in result.stderr


def test_an_alias_bomb_is_refused_by_validate_and_new_without_expanding(lab: Path) -> None:
    (lab / "bomb.yaml").write_text(ALIAS_BOMB)
    assert_refused(run_tfcli("validate", "bomb.yaml", cwd=lab), "bomb.yaml: its aliases expand to more than")
    assert_refused(run_tfcli("experiment", "new", "-f", "bomb.yaml", cwd=lab), "bomb.yaml: its aliases expand")
    assert not any((lab / "experiments").iterdir())


def test_a_few_aliases_still_read(lab: Path) -> None:
    (lab / "shared.yaml").write_text(
        "name: shared\nagent: {agent: ppo, network: &net [{type: dense, size: 8}]}\nnetwork: *net\n"
        "environment: cartpole\ntotal_timesteps: 1000\n"
    )
    code, _, stderr = invoke("validate", "shared.yaml", "--no-build")
    assert code == 0, stderr


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a: &a [*a]\n", "nested more than 64 levels deep (or a recursive alias)"),
        ("x: " + "[" * 200 + "]" * 200 + "\n", "nested more than 64 levels deep"),
        ("x: " + "[" * 100_000 + "\n", "bad.yaml:"),  # unclosed: a syntax error or too deep, never a crash
    ],
)
def test_recursive_and_deep_yaml_is_refused(lab: Path, text: str, needle: str) -> None:
    (lab / "bad.yaml").write_text(text)
    assert_refused(run_tfcli("validate", "bad.yaml", cwd=lab), needle)


def test_deep_json_is_refused(lab: Path) -> None:
    (lab / "deep.json").write_text('{"name": ' + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "}")
    assert_refused(run_tfcli("validate", "deep.json", cwd=lab), f"deep.json: nested more than {MAX_DEPTH} levels")
    (lab / "deeper.json").write_text("[" * 200_000 + "]" * 200_000)
    assert_refused(run_tfcli("validate", "deeper.json", cwd=lab), "deeper.json: ")


def test_dev_zero_and_a_fifo_are_not_read(lab: Path) -> None:
    assert_refused(run_tfcli("validate", "/dev/zero", cwd=lab, memory_mb=1024), "/dev/zero: not a regular file")
    import os

    os.mkfifo(lab / "pipe.yaml")  # nobody writes: reading it would block for ever
    assert_refused(run_tfcli("validate", "pipe.yaml", cwd=lab, timeout=20), "pipe.yaml: not a regular file")


def test_an_oversized_spec_is_refused_before_parsing(lab: Path) -> None:
    (lab / "huge.yaml").write_text("name: huge\n" + "# padding\n" * (MAX_SPEC_BYTES // 10 + 1))
    assert_refused(run_tfcli("validate", "huge.yaml", cwd=lab), "huge.yaml: over 1024 KiB")


def test_a_flood_of_unknown_keys_prints_fifty_problems_and_a_count(lab: Path) -> None:
    keys = 90_000
    body = "".join(f"k{i}: 1\n" for i in range(keys))
    (lab / "keys.yaml").write_text(f"name: keys\nagent: ppo\nenvironment: cartpole\ntotal_timesteps: 100\n{body}")
    result = run_tfcli("validate", "keys.yaml", cwd=lab)
    assert_refused(result, "keys.yaml: k0: unknown key", f"keys.yaml: ... and {keys - MAX_PROBLEMS:,} more problems")
    assert result.stderr.count("unknown key") == MAX_PROBLEMS
    assert f"k{MAX_PROBLEMS}:" not in result.stderr


def test_a_binary_stack_file_is_named(lab: Path) -> None:
    (lab / "stacks" / "Pulumi.junk.yaml").write_bytes(bytes(range(256)) * 8)
    result = run_tfcli("cluster", "list", cwd=lab)
    assert_refused(result, "Pulumi.junk.yaml: not a text file")
    (lab / "stacks" / "Pulumi.junk.yaml").write_text("a: &a [*a]\n")
    assert_refused(run_tfcli("cluster", "list", cwd=lab), "Pulumi.junk.yaml: nested more than")


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_non_finite_numbers_in_a_spec_name_the_field(lab: Path, value: str) -> None:
    (lab / "nan.yaml").write_text(
        f"name: nan\nenvironment: cartpole\nagent: {{agent: ppo, learning_rate: {value}}}\ntotal_timesteps: 1000\n"
    )
    code, _, stderr = invoke("validate", "nan.yaml", "--no-build")
    assert code == 2 and "nan.yaml: agent.learning_rate: " in stderr and "is not a finite number" in stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_numbers_from_set_name_the_trial_and_field(lab: Path, value: str) -> None:
    code, _, stderr = invoke(
        "experiment", "sweep", "-f", "cartpole-ppo", "-n", "nan", "--set", f"agent.learning_rate={value},1e-3"
    )
    assert code == 2 and "trial nan-0" in stderr and "agent.learning_rate: " in stderr
    assert "is not a finite number" in stderr and "Traceback" not in stderr
    assert not any((lab / "experiments").iterdir())


def test_names_are_unique_across_experiments_sweeps_and_trials_both_ways(lab: Path) -> None:
    sweep = ("experiment", "sweep", "-f", "cartpole-ppo", "--no-build", "--set", "agent.batch_size=8,16")
    assert invoke(*sweep, "-n", "pf-1")[0] == 0  # trials pf-1-0, pf-1-1
    code, _, stderr = invoke(*sweep, "-n", "pf")  # its trial pf-1 would be the sweep pf-1's folder
    assert code == 2 and "would name its trials like the sweep(s) pf-1" in stderr
    assert not (lab / "experiments" / "pf").exists() and not (lab / "experiments" / "pf-0").exists()

    assert invoke(*sweep, "-n", "lr")[0] == 0  # trials lr-0, lr-1
    code, _, stderr = invoke(*sweep, "-n", "lr-1")  # a trial's folder
    assert code == 2 and "'lr-1' is a name of sweep 'lr''s trials" in stderr
    code, _, stderr = invoke(*sweep, "-n", "lr-7")  # reserved for lr's trials even before it has that many
    assert code == 2 and "'lr-7' is a name of sweep 'lr''s trials" in stderr
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "lr-0")
    assert code == 2 and "'lr-0' is a name of sweep 'lr''s trials" in stderr
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "lr")
    assert code == 2 and "is a sweep's name" in stderr

    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "solo-0")[0] == 0
    code, _, stderr = invoke(*sweep, "-n", "solo")  # its trial solo-0 is an experiment already
    assert code == 2 and "experiments named like sweep 'solo''s trials already exist: solo-0" in stderr
    code, _, stderr = invoke(*sweep, "-n", "solo-0")
    assert code == 2 and "'solo-0' is already an experiment's name" in stderr
    assert invoke(*sweep, "-n", "lr")[0] == 0  # the same sweep again is still its own
