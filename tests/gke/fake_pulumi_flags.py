"""The fake ``pulumi``'s command line: the flags of Pulumi 3.272's commands and cobra's parsing of them (a flag a
command does not have is ``unknown flag``, exit 255), so that tfcli cannot pass what the real CLI would refuse."""

from __future__ import annotations

from fake_pulumi_stack import fail

# Flags of Pulumi 3.272's commands (True: takes a value). Cobra rejects any other with "unknown flag".
GLOBAL_FLAGS = {
    "--color": True, "--cwd": True, "-C": True, "--disable-integrity-checking": False, "--emoji": False, "-e": False,
    "--fully-qualify-stack-names": False, "-Q": False, "--logflow": False, "--logtostderr": False,
    "--memprofilerate": True, "--non-interactive": False, "--otel-traces": True, "--profiling": True,
    "--tracing": True, "--tracing-header": True, "--verbose": True, "-v": True,
}  # fmt: skip
_STACK = {"--stack": True, "-s": True}
_UPDATE = {
    **_STACK, "--yes": False, "-y": False, "--skip-preview": False, "-f": False, "--event-log": True,
    "--exec-kind": True, "--exec-agent": True, "--client": True, "--message": True, "-m": True, "--parallel": True,
    "-p": True, "--diff": False, "--debug": False, "-d": False, "--refresh": False, "-r": False, "--target": True,
    "-t": True, "--exclude": True, "--target-dependents": False, "--exclude-dependents": False,
    "--suppress-outputs": False, "--suppress-progress": False, "--suppress-permalink": False,
    "--continue-on-error": False, "--attach-debugger": False, "--config-file": True, "--run-program": True,
    "--json": False, "-j": False, "--show-config": False, "--show-reads": False, "--show-replacement-steps": False,
    "--show-sames": False, "--show-full-output": False, "--show-secrets": False, "--policy-pack": True,
    "--policy-pack-config": True, "--config": True, "-c": True, "--config-path": False,
}  # fmt: skip
COMMAND_FLAGS: dict[str, dict[str, bool]] = {
    "version": {},
    "stack select": {**_STACK, "--create": False, "-c": False, "--secrets-provider": True},
    "stack init": {**_STACK, "--secrets-provider": True, "--copy-config-from": True, "--no-select": False,
                   "--teams": True, "--remote-stack-config": False},
    "config set-all": {**_STACK, "--path": False, "--plaintext": True, "--secret": True, "--json": True,
                       "--config-file": True},
    "config get": {**_STACK, "--path": False, "--json": False, "-j": False, "--open": False, "--config-file": True},
    "config set": {**_STACK, "--path": False, "--plaintext": False, "--secret": False, "--config-file": True,
                   "--type": True},
    "up": {**_UPDATE, "--expect-no-changes": False, "--replace": True, "--plan": True, "--import-file": True},
    "destroy": {**_UPDATE, "--exclude-protected": False, "--remove": False, "--preview-only": False},
    "stack output": {**_STACK, "--json": False, "-j": False, "--shell": False, "--show-secrets": False},
    "stack history": {**_STACK, "--json": False, "-j": False, "--page-size": True, "--page": True,
                      "--show-secrets": False, "--full-dates": False},
    "stack rm": {**_STACK, "--yes": False, "-y": False, "--force": False, "-f": False, "--preserve-config": False,
                 "--remove-backups": False},
    "cancel": {**_STACK, "--yes": False, "-y": False},
}  # fmt: skip


def parse(args: list[str]) -> tuple[str, list[str], dict[str, list[str]]]:
    """(command, positional words after it, options) as cobra would see them; unknown flags end the process."""
    sep = "--" in args
    head, tail = (args[: args.index("--")], args[args.index("--") + 1 :]) if sep else (args, [])
    takes_value = {flag for table in (GLOBAL_FLAGS, *COMMAND_FLAGS.values()) for flag, value in table.items() if value}
    takes_value.discard("--json")  # a value only in `config set-all --json`
    words = []
    index = 0
    while index < len(head):
        arg = head[index]
        if arg.startswith("-"):
            index += 2 if ("=" not in arg and arg in takes_value) else 1
            continue
        words.append(arg)
        index += 1
    command = " ".join(words[:2]) if words[:1] in (["stack"], ["config"]) else (words[0] if words else "")
    if command not in COMMAND_FLAGS:
        fail(f"fake pulumi: unsupported command {args}", 2)
    table = {**GLOBAL_FLAGS, **COMMAND_FLAGS[command]}
    options: dict[str, list[str]] = {}
    positional: list[str] = []
    index = 0
    while index < len(head):
        arg = head[index]
        index += 1
        if not arg.startswith("-"):
            positional.append(arg)
            continue
        name, has_value, value = arg.partition("=")
        if name not in table:
            fail(f"error: unknown flag: {name}", 255)
        if table[name] and not has_value:
            if index >= len(head):
                fail(f"error: flag needs an argument: {name}", 255)
            value = head[index]
            index += 1
        options.setdefault(name, []).append(value if (table[name] or has_value) else "true")
    positional = positional[len(command.split()) :] + (tail if sep else [])
    return command, positional, options


def the_stack(options: dict[str, list[str]]) -> str | None:
    values = options.get("--stack") or options.get("-s")
    return values[-1] if values else None
