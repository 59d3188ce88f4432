"""Give a stack file its secrets provider before Pulumi opens the stack: the step before ``pulumi up`` in CI.

Pulumi reads a stack's secrets provider from ``stacks/Pulumi.<stack>.yaml`` (``secretsprovider`` + ``encryptedkey``
for a cloud KMS key, ``encryptionsalt`` for a passphrase). ``pulumi/actions``' ``secrets-provider`` input only
applies when the action *creates* the stack, and the keys it writes land in the runner's checkout, which is thrown
away: the next run (the merge's ``up``, every later dispatch) selects the existing stack without them and cannot
decrypt its secrets. So, idempotently:

1. the committed file names its provider: nothing to do (the way to keep it: commit the keys);
2. the stack exists in the backend: copy the provider recorded in its state (``pulumi stack export``, which needs
   no decryption) into the file;
3. the stack exists but was never deployed (no provider in its state): remove the empty stack (``pulumi stack rm``
   refuses if it has resources) and create it as in 4;
4. no stack: ``pulumi stack init --secrets-provider PROVIDER``, which writes the keys into the file.

In cases 2-4 it prints a ``::notice::`` with the lines to commit, so that tfcli on a laptop and CI open the stack
with the same key. Run from the project root (``Pulumi.yaml``), with the Pulumi CLI on PATH and
``PULUMI_BACKEND_URL`` set::

    python .github/scripts/stack_secrets.py STACK [--provider gcpkms://...]   # exit 1 with a message on failure
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

KEYS = ("secretsprovider", "encryptedkey", "encryptionsalt")


def stack_file(stack: str) -> Path:
    return Path("stacks") / f"Pulumi.{stack}.yaml"


def committed_keys(path: Path) -> dict[str, str]:
    """The secrets-provider keys the stack file already has (top level)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {key: str(data[key]) for key in KEYS if isinstance(data, dict) and data.get(key)}


def keys_from_state(providers: dict[str, Any] | None) -> dict[str, str] | None:
    """The stack-file keys for the secrets provider a stack's state records (``deployment.secrets_providers``):
    empty for Pulumi Cloud's own (``service``), which needs nothing in the file; None when it records none."""
    if not providers:
        return None
    kind, state = providers.get("type"), providers.get("state") or {}
    if kind == "cloud" and state.get("url") and state.get("encryptedkey"):
        return {"secretsprovider": str(state["url"]), "encryptedkey": str(state["encryptedkey"])}
    if kind == "passphrase" and state.get("salt"):
        return {"encryptionsalt": str(state["salt"])}
    if kind == "service":
        return {}
    raise SystemExit(f"the stack's state records a secrets provider this script does not know: {kind!r}")


def add_keys(path: Path, keys: dict[str, str]) -> None:
    """Insert ``keys`` as top-level entries after the file's leading comments (where Pulumi puts them), leaving
    every other line as it is."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = 0
    while at < len(lines) and lines[at].startswith("#"):
        at += 1
    entries = yaml.safe_dump(keys, sort_keys=False, default_flow_style=False, width=10_000)
    path.write_text("".join(lines[:at]) + entries + "".join(lines[at:]), encoding="utf-8")


def pulumi(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["pulumi", *arguments, "--non-interactive"], capture_output=True, text=True)


def require(run: subprocess.CompletedProcess[str], what: str) -> subprocess.CompletedProcess[str]:
    if run.returncode != 0:
        raise SystemExit(f"{what} failed:\n{run.stderr.strip() or run.stdout.strip()}")
    return run


def stack_exists(stack: str) -> bool:
    listed = json.loads(require(pulumi("stack", "ls", "--json"), "pulumi stack ls").stdout or "[]")
    return any(entry.get("name") == stack or str(entry.get("name", "")).endswith(f"/{stack}") for entry in listed)


def ensure(stack: str, provider: str) -> str:
    """Make ``stacks/Pulumi.<stack>.yaml`` carry its secrets provider; says which case applied."""
    path = stack_file(stack)
    if not path.is_file():
        raise SystemExit(f"no stack file {path}")
    if committed_keys(path):
        return "committed"
    if stack_exists(stack):
        exported = json.loads(require(pulumi("stack", "export", "--stack", stack), "pulumi stack export").stdout)
        deployment = exported.get("deployment") or {}
        keys = keys_from_state(deployment.get("secrets_providers"))
        if keys == {}:
            return "managed by Pulumi Cloud"
        if keys:
            add_keys(path, keys)
            return "restored from the stack's state"
        if deployment.get("resources"):
            raise SystemExit("the stack has resources but its state records no secrets provider")
        # Created (by an earlier run) but never deployed: nothing is encrypted yet, so it can start over.
        require(pulumi("stack", "rm", stack, "--yes", "--preserve-config"), "pulumi stack rm (an empty stack)")
    init = ["stack", "init", stack] + (["--secrets-provider", provider] if provider else [])
    require(pulumi(*init), "pulumi stack init")
    return "created"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stack")
    parser.add_argument("--provider", default="", help="secrets provider for a new stack (default: the backend's)")
    args = parser.parse_args(argv)
    try:
        how = ensure(args.stack, args.provider)
    except SystemExit as error:
        print(f"::error::stack {args.stack}: {error}", file=sys.stderr)
        return 1
    path = stack_file(args.stack)
    keys = committed_keys(path)
    print(f"stack {args.stack}: secrets provider {how}")
    if how in ("restored from the stack's state", "created") and keys:
        lines = yaml.safe_dump(keys, sort_keys=False, width=10_000).strip().replace("\n", "%0A")
        print(f"::notice title=Commit these lines to {path}::{lines}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
