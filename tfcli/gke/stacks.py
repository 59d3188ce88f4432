"""The one door to Pulumi's stacks: the project's stacks driven through the Automation API (``pulumi.automation``).

A :class:`LocalWorkspace` runs in the project root, so ``Pulumi.yaml`` (``stackConfigDir: stacks``) and the stack
files tfcli writes are exactly what ``pulumi up -s NAME`` would use. The workspace's environment carries:

- ``PULUMI_BACKEND_URL`` from ``tfcli.yaml``'s ``state_backend`` (``file://./.pulumi`` made absolute, its folder
  created; ``gs://...`` as is);
- the passphrase that encrypts the stacks' secrets: Pulumi's self-managed backends need
  ``PULUMI_CONFIG_PASSPHRASE`` (or ``..._FILE``) in the environment, and tfcli says so before running anything;
- with ``credentials: key-file``, ``GOOGLE_APPLICATION_CREDENTIALS`` (a path) — the key itself goes into the stack
  as the *secret* config ``gcp:credentials`` (Pulumi stores ciphertext), piped to Pulumi's stdin
  (:meth:`Stacks.set_secret`), never on a command line.

Every failure comes back as a :class:`TfcliError` (:mod:`tfcli.gke.pulumi_errors`); the CLI itself is found or
installed by :mod:`tfcli.gke.pulumi_cli`. Pulumi is imported inside the functions here, never at module level
(``tfcli --help`` stays fast).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcli.gke.events import QuietObserver, UpdateObserver, UpdateTracker
from tfcli.gke.pulumi_cli import InstallPrompt, pulumi_command
from tfcli.gke.pulumi_errors import PulumiFailure, pulumi_errors
from tfcli.project import ProjectDir
from tfcli.stackfiles.files import StackFile, stack_path
from trainer.kernel.config_keys import CREDENTIALS_KEY
from trainer.kernel.errors import TfcliError

if TYPE_CHECKING:
    from pulumi.automation import LocalWorkspace, Stack

PASSPHRASE_VARS = ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE")
SECRETS_PROVIDER_VAR = "PULUMI_SECRETS_PROVIDER"  # e.g. gcpkms://projects/P/locations/global/keyRings/R/cryptoKeys/K


def backend_url(project: ProjectDir) -> str:
    """``state_backend`` with a relative ``file://`` path made absolute (and its folder created)."""
    url = project.settings.state_backend
    if not url.startswith("file://"):
        return url
    path = Path(url.removeprefix("file://")).expanduser()
    if not path.is_absolute():
        path = project.root / path
    path.mkdir(parents=True, exist_ok=True)
    return "file://" + str(path.resolve())


def has_no_state(project: ProjectDir, stack: str) -> bool:
    """True when a ``file://`` backend holds no state for ``stack``, so Pulumi never created it: the local
    filesystem backend keeps a stack's state in ``<backend>/.pulumi/stacks/[<project>/]<stack>.json`` (``.json.gz``
    when gzipped, a ``.bak`` beside it; Pulumi's docs, "State and backends"). Any other backend: False (unknown
    without Pulumi)."""
    url = backend_url(project)
    if not url.startswith("file://"):
        return False
    folder = Path(url.removeprefix("file://")) / ".pulumi" / "stacks"
    return not any(folder.glob(f"{stack}.json*")) and not any(folder.glob(f"*/{stack}.json*"))


def key_file(project: ProjectDir) -> Path | None:
    """The service-account key of ``credentials: key-file`` (checked to exist), else None."""
    settings = project.settings
    if settings.credentials != "key-file":
        return None
    if not settings.key_file:
        raise TfcliError(
            "tfcli.yaml says credentials: key-file but names no key_file",
            hint="set key_file to the service-account key's path (tfcli init --key-file PATH)",
        )
    path = Path(settings.key_file).expanduser()
    path = path if path.is_absolute() else project.root / path
    if not path.is_file():
        raise TfcliError(
            f"the key file {settings.key_file} (credentials: key-file in tfcli.yaml) does not exist",
            hint="point key_file at the service-account key, or use credentials: application-default",
        )
    return path


def secrets_provider(project: ProjectDir, stack_file: StackFile | None) -> str | None:
    """The secrets provider a new stack is created with: the stack file's (``secretsprovider``, e.g. from CI), else
    ``$PULUMI_SECRETS_PROVIDER``, else ``passphrase`` — what Pulumi's self-managed backends (``file://``, ``gs://``)
    use. None for Pulumi Cloud, which manages secrets itself."""
    provider = stack_file.document.get("secretsprovider") if stack_file is not None else None
    if provider:
        return str(provider)
    if os.environ.get(SECRETS_PROVIDER_VAR):
        return os.environ[SECRETS_PROVIDER_VAR]
    return None if project.settings.state_backend.startswith("https://") else "passphrase"


def _needs_passphrase(project: ProjectDir, stack_file: StackFile | None) -> bool:
    """Self-managed backends encrypt secrets with a passphrase unless another secrets provider is named."""
    provider = secrets_provider(project, stack_file)
    return provider is not None and provider.startswith(("passphrase", "default"))


def pulumi_env(project: ProjectDir, stack_file: StackFile | None = None) -> dict[str, str]:
    """The environment every Pulumi command of this project runs with (beside the user's own)."""
    if _needs_passphrase(project, stack_file) and not any(os.environ.get(name) is not None for name in PASSPHRASE_VARS):
        raise TfcliError(
            "PULUMI_CONFIG_PASSPHRASE is not set: Pulumi encrypts the secrets of stacks kept in "
            f"{project.settings.state_backend} with a passphrase",
            hint="export PULUMI_CONFIG_PASSPHRASE='...' (or PULUMI_CONFIG_PASSPHRASE_FILE=PATH) and keep it safe: "
            "every later command and CI job on these stacks needs the same one",
        )
    env = {"PULUMI_BACKEND_URL": backend_url(project), "PULUMI_SKIP_UPDATE_CHECK": "true"}
    if (key := key_file(project)) is not None:
        env["GOOGLE_APPLICATION_CREDENTIALS"] = str(key)
    return env


@dataclass(frozen=True)
class StackState:
    """A stack as Pulumi knows it: whether it exists, its outputs, and its last operation."""

    name: str
    exists: bool
    outputs: dict[str, Any]
    last_kind: str | None = None  # update | destroy | refresh | ...
    last_result: str | None = None  # succeeded | failed | in-progress
    last_ended: str | None = None  # when the last operation ended (ISO time, UTC; None: none yet, or in progress)

    @property
    def deployed(self) -> bool:
        """Resources are up: the last successful operation left outputs behind."""
        return bool(self.outputs)

    @property
    def may_have_resources(self) -> bool:
        """Deployed, or an update ran (maybe failed half-way) since the last successful destroy."""
        destroyed = self.last_kind == "destroy" and self.last_result == "succeeded"
        return self.deployed or (self.exists and self.last_kind is not None and not destroyed)


def _utc(moment: datetime) -> str:
    """An update's time as ISO text in UTC (the Automation API parses Pulumi's ``...Z`` times without a zone)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).isoformat()


class Stacks:
    """The project's Pulumi stacks (one workspace, made on first use, for all the stacks of a command).

    ``install_prompt`` is asked when no Pulumi CLI is found (the CLI's "install it now?"); without one a missing CLI
    is an error that names ``tfcli pulumi install``. ``build_prompt`` is asked before a first trainer image build."""

    def __init__(
        self,
        project: ProjectDir,
        *,
        install_prompt: InstallPrompt | None = None,
        build_prompt: Callable[[str], bool] | None = None,
    ) -> None:
        self.project = project
        self.install_prompt = install_prompt
        self.build_prompt = build_prompt  # asked before a project's first trainer image build (tfcli.gke.image_stack)
        self._workspace: LocalWorkspace | None = None

    def _failure(self, stack: str, action: str, **kwargs: Any) -> PulumiFailure:
        return PulumiFailure(self.project, stack, action, **kwargs)

    def workspace(self, stack: str) -> LocalWorkspace:
        if not (self.project.root / "Pulumi.yaml").is_file():
            raise TfcliError(
                f"this project has no Pulumi.yaml (in {self.project.root}), so Pulumi cannot find its program",
                hint="`tfcli init` adds what is missing and keeps the rest",
            )
        stack_file = StackFile.read(stack_path(self.project, stack))
        env = pulumi_env(self.project, stack_file)
        provider = secrets_provider(self.project, stack_file)
        if self._workspace is None:
            from pulumi import automation as auto

            with pulumi_errors(self._failure(stack, "start Pulumi for")):
                command = pulumi_command(self.install_prompt)
                self._workspace = auto.LocalWorkspace(
                    work_dir=str(self.project.root), env_vars=env, secrets_provider=provider, pulumi_command=command
                )
        self._workspace.secrets_provider = provider  # used by `stack init` only: the provider of *this* stack
        return self._workspace

    def stack(self, name: str, *, create: bool = False, missing_hint: str | None = None) -> Stack:
        """Select the stack (creating it when ``create``: ``stack init --secrets-provider ...``); a missing one is an
        error with ``missing_hint``."""
        from pulumi import automation as auto

        workspace = self.workspace(name)
        with pulumi_errors(self._failure(name, "create" if create else "select", missing_hint=missing_hint)):
            if create:
                return auto.Stack.create_or_select(name, workspace)
            return auto.Stack.select(name, workspace)

    def state(self, name: str) -> StackState:
        """What is deployed: outputs and the last operation; a stack that does not exist is not an error here."""
        from pulumi import automation as auto
        from pulumi.automation import errors

        workspace = self.workspace(name)
        with pulumi_errors(self._failure(name, "read")):
            try:
                stack = auto.Stack.select(name, workspace)
            except errors.StackNotFoundError:
                return StackState(name, exists=False, outputs={})
            outputs = {key: value.value for key, value in stack.outputs().items()}
            history = stack.history(page_size=1, show_secrets=False)
        last = history[0] if history else None
        return StackState(
            name,
            exists=True,
            outputs=outputs,
            last_kind=last.kind if last else None,
            last_result=last.result if last else None,
            last_ended=_utc(last.end_time) if last and last.end_time else None,
        )

    def set_config(self, stack: Stack, values: dict[str, str], *, secrets: dict[str, str] | None = None) -> None:
        """``pulumi config set-all`` of plain values; each secret by :meth:`set_secret` (Pulumi stores ciphertext).

        A secret is set only when it changed (``config get`` reads it back through a pipe).
        """
        from pulumi.automation import ConfigValue, errors

        config = {key: ConfigValue(value=value) for key, value in values.items()}
        stack_file = StackFile.read(stack_path(self.project, stack.name))
        stored = stack_file.config if stack_file is not None else {}
        with pulumi_errors(self._failure(stack.name, "configure")):
            for key, value in (secrets or {}).items():
                current = None
                if key in stored:  # (a key the stack file lacks is not set: no need to ask Pulumi)
                    try:
                        current = stack.get_config(key)
                    except errors.CommandError:  # not set after all
                        current = None
                if current is None or not current.secret or current.value != value:
                    self.set_secret(stack, key, value)
            if config:
                stack.set_all_config(config)

    @staticmethod
    def set_secret(stack: Stack, key: str, value: str) -> None:
        """``pulumi config set --secret KEY`` with the value piped to its stdin, never on its command line: the
        Automation API's ``set_config`` passes values as arguments, which every local user can read in
        ``/proc/PID/cmdline`` while Pulumi runs (a service-account key, a transport token). Pulumi reads a value
        that is not on the command line from a piped stdin ("Multi-line values may be set by piping a file to
        standard in")."""
        import subprocess

        from pulumi.automation import CommandResult, LocalWorkspace, errors

        workspace = stack.workspace
        assert isinstance(workspace, LocalWorkspace)
        command = [workspace.pulumi_command.command, "--non-interactive", "config", "set", "--secret"]
        result = subprocess.run(
            [*command, "--stack", stack.name, "--", key],
            input=value,
            capture_output=True,
            text=True,
            cwd=workspace.work_dir,
            env={**os.environ, **(workspace.env_vars or {}), "PULUMI_AUTOMATION_API": "true"},
            check=False,
        )
        if result.returncode != 0:
            raise errors.create_command_error(CommandResult(result.stdout, result.stderr, result.returncode))

    def credentials(self) -> dict[str, str]:
        """The secret config for ``credentials: key-file`` (the key's content as ``gcp:credentials``)."""
        path = key_file(self.project)
        return {CREDENTIALS_KEY: path.read_text(encoding="utf-8")} if path is not None else {}

    def _run(self, stack: Stack, operation: str, observer: UpdateObserver | None, total: int | None) -> dict[str, Any]:
        tracker = UpdateTracker(operation, stack.name, total)
        observer = observer or QuietObserver()
        output: list[str] = []

        def on_event(event: Any) -> None:
            # Runs on the SDK's event thread, which loses what it raises: a bug here must not end the update.
            try:
                tracker.on_event(event)
                observer.changed(tracker)
            except Exception as error:
                tracker.event_errors.append(f"{type(error).__name__}: {error}")

        observer.begin(tracker)
        action = {"up": "update", "destroy": "destroy"}[operation]
        outputs: dict[str, Any] = {}
        try:
            with pulumi_errors(self._failure(stack.name, action, tracker=tracker, output=output)):
                if operation == "up":
                    result = stack.up(on_event=on_event, on_output=output.append, color="never")
                    outputs = {key: value.value for key, value in result.outputs.items()}
                else:
                    stack.destroy(on_event=on_event, on_output=output.append, color="never")
        except BaseException:
            tracker.finish(False)
            observer.end(tracker)
            raise
        tracker.finish(True)
        observer.end(tracker)
        return outputs

    def up(self, stack: Stack, *, observer: UpdateObserver | None = None, total: int | None = None) -> dict[str, Any]:
        """``pulumi up`` with its engine events fed to ``observer``; returns the stack's outputs."""
        return self._run(stack, "up", observer, total)

    def destroy(self, stack: Stack, *, observer: UpdateObserver | None = None, total: int | None = None) -> None:
        """``pulumi destroy``: every resource of the stack; its history and config stay."""
        self._run(stack, "destroy", observer, total)

    def remove(self, stack: Stack) -> None:
        """``pulumi stack rm``: the (empty) stack and its stack file."""
        with pulumi_errors(self._failure(stack.name, "remove")):
            stack.workspace.remove_stack(stack.name)


def planned_total(config: dict[str, Any], stack: str) -> int | None:
    """How many resources an update of this config touches, from the offline plan (None if it cannot say).

    The plan lists what the program declares; the engine adds the stack itself and the default GCP provider.
    """
    try:
        from infra.plan import plan_stack

        return len(plan_stack(config, stack=stack).resources) + 2
    except Exception:  # an estimate for a progress bar: never a reason to fail
        return None
