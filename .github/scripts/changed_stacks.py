"""Which Pulumi stacks a change touches: the stack names whose ``stacks/Pulumi.<stack>.yaml`` was added or changed,
the shared-cluster stacks (``tfcli:cluster``) apart from the others.

Used by ``.github/workflows/experiments.yml`` to preview (pull request) or deploy (merge) exactly those stacks: the
cluster stacks first, then the experiment and sweep stacks, which may run on one of them (``tfcli:sharedClusterStack``
reads the cluster stack's outputs, so an experiment added together with its new cluster would otherwise race it).
Deleted stack files are not deployed (tearing a stack down is the manual ``destroy`` dispatch, on purpose).

    python3 .github/scripts/changed_stacks.py BASE HEAD     # clusters=["c"] and stacks=["a","b"] for $GITHUB_OUTPUT
    python3 .github/scripts/changed_stacks.py --only NAME   # one stack chosen by hand (checked to exist)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

STACK_FILE = re.compile(r"^stacks/Pulumi\.(?P<stack>[a-z]([-a-z0-9]*[a-z0-9])?)\.yaml$")


def changed_stacks(name_status: str) -> list[str]:
    """Stack names from ``git diff --name-status`` output (sorted, each once)."""
    stacks: set[str] = set()
    for line in name_status.splitlines():
        fields = line.split("\t")
        if len(fields) < 2:
            continue
        status, path = fields[0], fields[-1]  # a rename (R100 old new) counts under its new name
        if status.startswith("D"):
            continue
        match = STACK_FILE.match(path)
        if match:
            stacks.add(match.group("stack"))
    return sorted(stacks)


def is_cluster_stack(text: str) -> bool:
    """Whether a stack file's config has ``tfcli:cluster`` (a shared cluster's stack): a key at the indentation of
    the first key under ``config:``, read without a YAML parser (the job runs the runner's bare system Python)."""
    lines = [line.rstrip() for line in text.splitlines()]
    if "config:" not in lines:
        return False
    after = lines[lines.index("config:") + 1 :]
    keys = [line for line in after if line.strip() and not line.lstrip().startswith("#")]
    if not keys or not keys[0][:1].isspace():
        return False
    indent = keys[0][: len(keys[0]) - len(keys[0].lstrip())]
    return any(line.startswith(f"{indent}tfcli:cluster:") for line in keys)


def split_clusters(stacks: list[str], root: Path = Path()) -> tuple[list[str], list[str]]:
    """(the cluster stacks, the others) among ``stacks``, from their files under ``root``."""
    clusters = [s for s in stacks if is_cluster_stack((root / "stacks" / f"Pulumi.{s}.yaml").read_text())]
    return clusters, [s for s in stacks if s not in clusters]


def diff(base: str, head: str) -> str:
    return subprocess.run(
        ["git", "diff", "--name-status", "-M", base, head, "--", "stacks/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--only":
        stack = argv[1]
        if not STACK_FILE.match(f"stacks/Pulumi.{stack}.yaml") or not Path(f"stacks/Pulumi.{stack}.yaml").is_file():
            print(f"no stack file stacks/Pulumi.{stack}.yaml", file=sys.stderr)
            return 2
        stacks = [stack]
    elif len(argv) == 2:
        stacks = changed_stacks(diff(argv[0], argv[1]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    clusters, runs = split_clusters(stacks)
    print(f"clusters={json.dumps(clusters)}")
    print(f"stacks={json.dumps(runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
