"""Which Pulumi stacks a change touches: the stack names whose ``stacks/Pulumi.<stack>.yaml`` was added or changed.

Used by ``.github/workflows/experiments.yml`` to preview (pull request) or deploy (merge) exactly those stacks.
Deleted stack files are not deployed (tearing a stack down is the manual ``destroy`` dispatch, on purpose).

    python3 .github/scripts/changed_stacks.py BASE HEAD     # prints stacks=["a","b"] for $GITHUB_OUTPUT
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
    print(f"stacks={json.dumps(stacks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
