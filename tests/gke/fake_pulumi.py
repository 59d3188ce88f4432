"""A stand-in for the ``pulumi`` CLI at the Automation API's boundary (the real one is not installed here).

Put first on PATH (as ``pulumi``, see ``gke_testkit.FakePulumi``), it answers what ``pulumi.automation`` asks of a
LocalWorkspace: ``version``, ``stack select [--create]``, ``stack init``, ``config get`` (secrets "decrypted"),
``config set``/``set-all`` (written into ``stacks/Pulumi.<stack>.yaml`` as Pulumi does: plaintext values as strings,
secrets as ``{secure: ...}`` ciphertext), ``up`` and ``destroy``, ``stack output --json``, ``stack history --json``
and ``stack rm``.

The Kubernetes objects an ``up`` applies (rendered from the stack's config by infra's own code) are diffed, replaced,
created, awaited and deleted as pulumi-kubernetes 4.x does it (tests/gke/fake_k8s_provider.py: a Job whose
parallelism changes is replaced, a delete with ``skipAwait`` is not awaited and a create under a name still being
deleted fails the ``up`` with 409 AlreadyExists), pass the API server's admission as tests/job_controller.py models
it, and are kept in the state (``objects``, ``lingering``, ``k8s_log``; ``jobs`` and ``config_maps`` as the Job
controller stand-in and tests/gke/played_sweep.py read what was deployed).

It is as strict as Pulumi 3.272 where tfcli could go wrong: flags a command does not have are rejected (``unknown
flag``); every command but ``stack init``/``stack select --create`` needs a stack that was initialised; a
stack with the passphrase secrets provider (the default of self-managed backends) gets an ``encryptionsalt`` at
``stack init`` and every command that encrypts or decrypts (init, secret config, ``config get`` of a secret, up,
destroy, outputs with secrets) needs ``PULUMI_CONFIG_PASSPHRASE``/``_FILE`` and the same passphrase. Engine events go
where the SDK asks: CLI versions above 3.205 stream them over gRPC (``--event-log tcp://127.0.0.1:PORT``, the SDK's
``pulumirpc.Events/StreamEvents`` server), older ones append JSON lines to the ``--event-log`` file.

Everything lives in ``$FAKE_PULUMI_STATE``: ``calls.jsonl`` (argv, cwd and the relevant environment of every call,
and the config keys of the stack file when ``stack init`` and ``up`` ran), ``state.json`` (stacks: outputs,
resources, history) and ``control.json`` (the version to report, failures to inject: ``{"fail": [{"command": "up",
"stack": "x", "stderr": "...", "stdout": "...", "diagnostic": "...", "times": 1}]}``, the results bucket of each
stack, and what "the trainer" writes to it when an ``up`` suspends its Jobs).

Its parts: fake_pulumi_flags.py (the command line), fake_pulumi_stack.py (the state folder, stack files and passphrase),
fake_pulumi_operation.py (``up`` and ``destroy``, imported by those two commands only), fake_pulumi_program.py (what the
program declares and exports), fake_pulumi_events.py (engine events), fake_k8s_provider.py (pulumi-kubernetes),
fake_pulumi_images.py (image stacks: the build provider run against the Cloud Build stand-in, and the digests a run
stack's StackReference reads).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from fake_pulumi_flags import parse, the_stack
from fake_pulumi_stack import (
    SECRETS_PROVIDERS,
    fail,
    injected,
    load,
    read_config,
    save,
    stack_file,
    state_dir,
    unlock,
    write_config,
    write_document,
)

VERSION = "v3.272.0"  # the SDK's own version; above 3.205 the Automation API takes engine events over gRPC
ENV_KEYS = (
    "PULUMI_BACKEND_URL",
    "PULUMI_CONFIG_PASSPHRASE",
    "PULUMI_CONFIG_PASSPHRASE_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "PULUMI_AUTOMATION_API",
    "PULUMI_SKIP_UPDATE_CHECK",
)


def main(argv: list[str]) -> None:
    args = [arg for arg in argv if arg != "--non-interactive"]
    command, words, options = parse(argv)
    stack = the_stack(options)
    named = words[0] if command in ("stack init", "stack rm") and words else stack
    entry: dict[str, Any] = {"argv": args, "cwd": os.getcwd()}
    entry["env"] = {key: os.environ[key] for key in ENV_KEYS if key in os.environ}
    if command in ("stack init", "up") and named:  # what the stack file held when Pulumi was asked
        entry["config_keys"] = sorted(read_config(named)[1])
    with open(state_dir() / "calls.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")
    if command == "version":
        print(load("control.json", {}).get("version", VERSION))
        return
    state = load("state.json", {"stacks": {}})
    if command not in ("up", "destroy") and (problem := injected(command, named)) is not None:
        sys.stdout.write(problem.get("stdout", ""))
        fail(problem.get("stderr", "error: failed"), int(problem.get("code", 255)))
    if command in ("stack init", "stack select") or (command == "stack rm" and not named):
        pass
    elif named is None:
        fail("error: no stack selected; please use `pulumi stack select` to choose one")  # tfcli always names it
    elif named not in state["stacks"]:
        fail(f"error: no stack named '{named}' found")
    record = state["stacks"].get(named or "")
    if command in ("stack select", "stack init"):
        name = words[0] if command == "stack init" else stack
        if command == "stack init" and (stack is None) == (not words):
            fail("error: only one of --stack or argument stack name may be specified")
        name = name or stack
        assert name is not None
        if name in state["stacks"]:
            if command == "stack init":
                fail(f"error: stack '{name}' already exists")
            return
        if command == "stack select" and "--create" not in options and "-c" not in options:
            fail(f"error: no stack named '{name}' found")
        provider = (options.get("--secrets-provider") or ["passphrase"])[-1]
        if not provider.startswith(SECRETS_PROVIDERS):
            fail(f"error: unknown secrets provider type '{provider}'")
        record = {"outputs": {}, "resources": [], "history": [], "secrets_provider": provider}
        if provider in ("passphrase", "default"):
            unlock(name, record)  # the salt is made (or an existing one checked) with the passphrase
        else:
            write_document(name, {"secretsprovider": provider, "encryptedkey": "ZmFrZS1rZXk="})
        state = load("state.json", {"stacks": {}})
        state["stacks"][name] = record
        save("state.json", state)
    elif command == "config set-all":
        assert stack is not None and record is not None
        if "--json" in options:
            fail("fake pulumi: config set-all --json is not modelled", 2)
        values: dict[str, tuple[str, bool]] = {}
        for flag in ("--plaintext", "--secret"):
            for item in options.get(flag, []):
                key, equals, value = item.partition("=")
                if not equals:
                    fail(f"error: invalid key-value pair: {item}")
                values[key] = (value, flag == "--secret")
        if any(secret for _, secret in values.values()):
            unlock(stack, record)
        write_config(stack, values)
    elif command == "config get":
        assert stack is not None and record is not None
        if len(words) != 1:
            fail(f"error: accepts 1 arg(s), received {len(words)}")
        key = words[0]
        _, config = read_config(stack)
        if key not in config:
            fail(f"error: configuration key '{key}' not found for stack '{stack}'")
        secret = isinstance(config[key], dict) and "secure" in config[key]
        if secret:
            unlock(stack, record)
        value = state.get("secrets", {}).get(stack, {}).get(key) if secret else config[key]  # "decrypted"
        print(json.dumps({"value": value, "secret": secret}) if "--json" in options else value)
    elif command == "config set":
        assert stack is not None and record is not None
        if len(words) == 1 and not sys.stdin.isatty():  # as Pulumi: a value not on the command line is read from a
            value = sys.stdin.read().removesuffix("\n").removesuffix("\r")  # piped stdin, its last newline dropped
        elif len(words) == 2:
            value = words[1]
        else:
            fail(f"error: accepts between 1 and 2 arg(s), received {len(words)}")
        if "--secret" in options:
            unlock(stack, record)
        write_config(stack, {words[0]: (value, "--secret" in options)})
    elif command in ("up", "destroy"):
        assert stack is not None
        from fake_pulumi_operation import operation  # the rest of the fake: only these two commands import it

        operation(command, stack, options, state)
    elif command == "stack output":
        assert record is not None
        if "--show-secrets" in options:
            unlock(str(named), record)
        print(json.dumps(record["outputs"]))
    elif command == "stack history":
        assert record is not None
        size = (options.get("--page-size") or [None])[-1]
        entries = record["history"][: int(size)] if size else record["history"]
        print(json.dumps(entries))
    elif command == "stack rm":
        assert named is not None and record is not None
        if "--yes" not in options and "-y" not in options:
            fail("error: --yes must be passed in to proceed when running in non-interactive mode")
        if record.get("resources") and "--force" not in options:
            fail(
                f"error: '{named}' still has resources; removal rejected. Possible actions:\n- Make sure that "
                f"'{named}' is the stack that you want to destroy\n- Run `pulumi destroy` to delete the resources"
            )
        del state["stacks"][named]
        save("state.json", state)
        if "--preserve-config" not in options:
            stack_file(named).unlink(missing_ok=True)
    else:
        fail(f"fake pulumi: unsupported command {args}", 2)


if __name__ == "__main__":
    main(sys.argv[1:])
