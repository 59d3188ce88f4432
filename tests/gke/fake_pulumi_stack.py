"""The fake ``pulumi``'s files: its state folder (``$FAKE_PULUMI_STATE``: ``state.json``, ``control.json``,
``calls.jsonl``) and the stack files (``stacks/Pulumi.<stack>.yaml``) as Pulumi 3.272 writes them: plaintext config
values as strings, secrets as ``{secure: ...}`` ciphertext, the passphrase secrets manager's ``encryptionsalt``
checked against ``PULUMI_CONFIG_PASSPHRASE``/``_FILE`` before anything is encrypted or decrypted."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

SECRETS_PROVIDERS = ("default", "passphrase", "awskms://", "azurekeyvault://", "gcpkms://", "hashivault://")
NO_PASSPHRASE = (  # Pulumi 3.x, non-interactive, neither variable set (github.com/pulumi/pulumi/issues/11886)
    "error: getting secrets manager: passphrase must be set with PULUMI_CONFIG_PASSPHRASE or "
    "PULUMI_CONFIG_PASSPHRASE_FILE environment variables"
)
WRONG_PASSPHRASE = (
    "error: incorrect passphrase, please set PULUMI_CONFIG_PASSPHRASE to the correct passphrase or set "
    "PULUMI_CONFIG_PASSPHRASE_FILE to a file containing the passphrase"
)


def passphrase() -> str | None:
    if (value := os.environ.get("PULUMI_CONFIG_PASSPHRASE")) is not None:
        return value
    if path := os.environ.get("PULUMI_CONFIG_PASSPHRASE_FILE"):
        return Path(path).read_text().rstrip("\n")
    return None


def check_phrase(salt: str, phrase: str) -> str:
    return base64.b64encode(hashlib.sha256(f"{salt}:{phrase}".encode()).digest()[:12]).decode()


def unlock(stack: str, record: dict[str, Any]) -> None:
    """What Pulumi's passphrase secrets manager does before it encrypts or decrypts: needs the right passphrase."""
    if record.get("secrets_provider", "passphrase") not in ("passphrase", "default"):
        return
    document, _ = read_config(stack)
    phrase = passphrase()
    if phrase is None:
        fail(NO_PASSPHRASE)
    assert phrase is not None
    salt = document.get("encryptionsalt")
    if salt is None:  # (a stack file written without Pulumi's salt: Pulumi makes one)
        write_document(stack, {"encryptionsalt": new_salt(phrase)})
    elif salt.split(":")[-1] != check_phrase(salt.split(":")[1], phrase):
        fail(WRONG_PASSPHRASE)


def new_salt(phrase: str) -> str:
    salt = base64.b64encode(os.urandom(8)).decode()
    return f"v1:{salt}:v1:{check_phrase(salt, phrase)}"


def state_dir() -> Path:
    """Read when used, not at import: tests import these modules under several state folders."""
    return Path(os.environ["FAKE_PULUMI_STATE"])


def load(name: str, default: Any) -> Any:
    try:
        return json.loads((state_dir() / name).read_text())
    except FileNotFoundError:
        return default


def save(name: str, data: Any) -> None:
    (state_dir() / name).write_text(json.dumps(data, indent=2))


def injected(command: str, stack: str | None) -> dict[str, Any] | None:
    """The failure ``control.json`` asks this call to report (counted down), or None."""
    control = load("control.json", {})
    for entry in control.get("fail", []):
        if entry.get("command") == command and entry.get("stack") in (None, stack) and entry.get("times", 1) > 0:
            entry["times"] = entry.get("times", 1) - 1
            save("control.json", control)
            return dict(entry)
    return None


def fail(message: str, code: int = 255) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.exit(code)


def stack_file(stack: str) -> Path:
    if not Path("Pulumi.yaml").is_file():
        fail(f"error: no Pulumi.yaml project file found (searching upwards from {os.getcwd()}). If you have not "
             "created a project yet, use `pulumi new` to do so: no project file found")  # fmt: skip
    import yaml  # imported only by the commands that read YAML: every call starts a Python process

    settings = yaml.safe_load(Path("Pulumi.yaml").read_text())
    folder = Path((settings or {}).get("stackConfigDir", "."))
    return folder / f"Pulumi.{stack}.yaml"


def read_config(stack: str) -> tuple[dict[str, Any], dict[str, Any]]:
    import yaml

    path = stack_file(stack)
    document = (yaml.safe_load(path.read_text()) or {}) if path.is_file() else {}
    return document, dict(document.get("config") or {})


def write_document(stack: str, entries: dict[str, Any], config: dict[str, Any] | None = None) -> None:
    """Set top-level entries (``encryptionsalt``, ``secretsprovider``, ...) and the config of the stack file."""
    import yaml

    path = stack_file(stack)
    document, current = read_config(stack)
    document = {**entries, **{key: value for key, value in document.items() if key not in entries}}
    if config is not None or current:
        document["config"] = config if config is not None else current
    text = (
        "".join(line + "\n" for line in path.read_text().splitlines() if line.startswith("#")) if path.is_file() else ""
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=120))


def write_config(stack: str, values: dict[str, tuple[str, bool]]) -> None:
    _, config = read_config(stack)
    state = load("state.json", {"stacks": {}})
    for key, (value, secret) in values.items():
        state.setdefault("secrets", {}).setdefault(stack, {})[key] = value if secret else None
        if secret:
            digest = base64.b64encode(hashlib.sha256(value.encode()).digest()).decode()
            config[key] = {"secure": f"v1:{digest}"}
        else:
            config[key] = value
    save("state.json", state)
    write_document(stack, {}, config)
