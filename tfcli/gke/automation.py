"""The one door to Pulumi: stacks of the project driven through the Automation API (``pulumi.automation``).

A :class:`LocalWorkspace` runs in the project root, so ``Pulumi.yaml`` (``stackConfigDir: stacks``) and the stack
files tfcli writes are exactly what ``pulumi up -s NAME`` would use. The workspace's environment carries:

- ``PULUMI_BACKEND_URL`` from ``tfcli.yaml``'s ``state_backend`` (``file://./.pulumi`` made absolute, its folder
  created; ``gs://...`` as is);
- the passphrase that encrypts the stacks' secrets: Pulumi's self-managed backends need
  ``PULUMI_CONFIG_PASSPHRASE`` (or ``..._FILE``) in the environment, and tfcli says so before running anything;
- with ``credentials: key-file``, ``GOOGLE_APPLICATION_CREDENTIALS`` (a path) — the key itself goes into the stack
  as the *secret* config ``gcp:credentials`` (Pulumi stores ciphertext).

Every failure comes back as a :class:`TfcliError` (exit code 1) with a hint: no Pulumi CLI, no such stack, another
update running, no Google credentials, no passphrase, or the last meaningful lines Pulumi printed.
Pulumi is imported inside the functions here, never at module level (``tfcli --help`` stays fast).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfcli.errors import TfcliError
from tfcli.gke.events import QuietObserver, UpdateObserver, UpdateTracker, plain
from tfcli.project import ProjectDir
from tfcli.stackfiles.files import StackFile, stack_path

if TYPE_CHECKING:
    from pulumi.automation import LocalWorkspace, PulumiCommand, Stack

PASSPHRASE_VARS = ("PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE")
CREDENTIALS_KEY = "gcp:credentials"
PULUMI_ROOT_VAR = "TFCLI_PULUMI_ROOT"  # where tfcli installs (and looks for) its own Pulumi CLI
SECRETS_PROVIDER_VAR = "PULUMI_SECRETS_PROVIDER"  # e.g. gcpkms://projects/P/locations/global/keyRings/R/cryptoKeys/K
INSTALL_SCRIPT = "https://get.pulumi.com/install.sh"
INSTALL_HINT = (
    "`tfcli pulumi install` (`--yes` where nothing can answer its question) installs the Pulumi CLI this tfcli is "
    "tested with for tfcli alone; or install it yourself: the "
    "official install script from Pulumi's website (curl -fsSL https://get.pulumi.com | sh), or your package "
    "manager (brew install pulumi, choco install pulumi, winget install pulumi); then check `pulumi version` works"
)
_CREDENTIAL_PATTERNS = (
    "could not find default credentials",
    "invalid_grant",
    "invalid_rapt",
    "reauthentication required",
    "unable to find default credentials",
)
_MISSING_PASSPHRASE = ("passphrase must be set", "unable to find either `pulumi_config_passphrase`")
_WRONG_PASSPHRASE = ("incorrect passphrase", "failed to decrypt")
_API_DISABLED = re.compile(
    r"(?:Error 403: )?(?P<name>[^:.]*?API) has not been used in project (?P<project>\S+) before or it is disabled"
)
_API_URL = re.compile(r"apis/api/(?P<service>[a-z0-9.-]+\.googleapis\.com)")
_API_SERVICES = {  # display name -> service, for messages without the console URL
    "Kubernetes Engine API": "container.googleapis.com",
    "Compute Engine API": "compute.googleapis.com",
    "Cloud Resource Manager API": "cloudresourcemanager.googleapis.com",
    "Identity and Access Management (IAM) API": "iam.googleapis.com",
    "Cloud Storage API": "storage.googleapis.com",
    "IAM Service Account Credentials API": "iamcredentials.googleapis.com",
    "Artifact Registry API": "artifactregistry.googleapis.com",
}
_QUOTA = re.compile(
    r"Quota '(?P<metric>[A-Z0-9_]+)' exceeded\.?\s*Limit: (?P<limit>[0-9.]+)(?: in region (?P<region>[a-z0-9-]+))?"
    r"|resource \"(?P<metric2>[A-Z0-9_]+)\": request requires '(?P<needed>[0-9.]+)'"
)
_PERMISSION = re.compile(
    r"Error 403: .*?(?:Required '(?P<permission>[a-zA-Z.]+)' permission|does not have [a-z.]+ access"
    r"|caller does not have permission|Permission '(?P<permission2>[a-zA-Z.]+)' denied)"
)
_EXISTS = re.compile(r"stack '[^']+' already exists")
_NOISE = re.compile(r"^\s*(at |goroutine |\[\d+ ?[a-z]*\]$)|PULUMI_DEBUG_COMMANDS|^\s*(Resources|Duration):")


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


def pulumi_version() -> str:
    """The Pulumi CLI version tfcli installs: the installed SDK's own (``pulumi`` is pinned in pyproject.toml)."""
    from importlib.metadata import version

    return version("pulumi")


def pulumi_root() -> Path:
    """tfcli's own Pulumi CLI folder: ``$TFCLI_PULUMI_ROOT``, else ``~/.tfcli/pulumi/<version>`` (``bin/pulumi``)."""
    if os.environ.get(PULUMI_ROOT_VAR):
        return Path(os.environ[PULUMI_ROOT_VAR]).expanduser()
    return Path.home() / ".tfcli" / "pulumi" / pulumi_version()


def pulumi_executable(root: Path) -> Path:
    return root / "bin" / ("pulumi.exe" if os.name == "nt" else "pulumi")


class PulumiMissing(TfcliError):
    """No Pulumi CLI: neither in tfcli's own folder nor on PATH."""

    def __init__(self, root: Path) -> None:
        self.root = root
        super().__init__(
            f"the Pulumi CLI (`pulumi`) is not installed: it is not on PATH, nor in {root}",
            hint=INSTALL_HINT,
        )


def install_description(root: Path) -> list[str]:
    """What ``install_pulumi`` does, said before it does it."""
    version = pulumi_version()
    return [
        f"tfcli drives Pulumi through its Automation API, which runs the Pulumi CLI; version {version} (the one "
        "this tfcli is tested with) can be installed for tfcli alone:",
        f"  - downloads Pulumi's install script ({INSTALL_SCRIPT}) and runs it, which downloads the release archive "
        f"of Pulumi {version} for this system (from github.com/pulumi/pulumi releases or get.pulumi.com)",
        f"  - unpacks it into {root} (the `pulumi` executable in {pulumi_executable(root).parent}); nothing else "
        "is changed: not your PATH, not your shell profile",
        "  - the archive is about 100 MB (the CLI and its language plugins); it takes a minute or two on a typical "
        "connection",
        f"  - set {PULUMI_ROOT_VAR} to install (and look) elsewhere; delete the folder to uninstall",
    ]


def install_pulumi(root: Path | None = None) -> Path:
    """Install the pinned Pulumi CLI into ``root`` (default :func:`pulumi_root`) with the SDK's own installer."""
    from pulumi.automation import PulumiCommand
    from semver import VersionInfo

    root = root or pulumi_root()
    root.mkdir(parents=True, exist_ok=True)
    try:
        PulumiCommand.install(root=str(root), version=VersionInfo.parse(pulumi_version()))
    except (OSError, subprocess.CalledProcessError) as error:
        detail = (
            error.output.decode(errors="replace").strip() if isinstance(error, subprocess.CalledProcessError) else ""
        )
        raise TfcliError(
            f"could not install the Pulumi CLI {pulumi_version()} into {root}: {error}"
            + (f"\n{detail}" if detail else ""),
            hint=f"check the connection to get.pulumi.com and github.com, then `tfcli pulumi install`; {INSTALL_HINT}",
        ) from None
    return root


InstallPrompt = Callable[[PulumiMissing], bool]


def _install_prompt() -> InstallPrompt | None:
    """The CLI's "install it now?" question (``tfcli.gke.install_prompt``), if the CLI set one."""
    import tfcli.gke

    prompt: InstallPrompt | None = getattr(tfcli.gke, "install_prompt", None)
    return prompt


def pulumi_command() -> PulumiCommand:
    """The Pulumi CLI to run: tfcli's own (``pulumi_root()/bin/pulumi``), else ``pulumi`` on PATH, else — when the
    CLI's prompt says yes — the pinned version installed now. Otherwise :class:`PulumiMissing`."""
    from pulumi.automation import PulumiCommand
    from semver import VersionInfo

    root = pulumi_root()
    pinned = VersionInfo.parse(pulumi_version())
    if pulumi_executable(root).is_file():
        return PulumiCommand(root=str(root), version=pinned)
    if shutil.which("pulumi") is not None:
        return PulumiCommand()
    missing = PulumiMissing(root)
    prompt = _install_prompt()
    if prompt is None or not prompt(missing):
        raise missing
    install_pulumi(root)
    return PulumiCommand(root=str(root), version=pinned)


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


def _split_output(error: BaseException) -> tuple[str, str]:
    """(stdout, stderr) of an Automation API ``CommandError`` (its text is ``code: ..\\n stdout: ..\\n stderr: ..``)."""
    text = str(error)
    head, _, stderr = text.rpartition("\n stderr: ")
    _, _, stdout = head.partition("\n stdout: ")
    return stdout, stderr


def meaningful_lines(text: str, limit: int = 6) -> list[str]:
    """The last lines worth showing of Pulumi's output (no blanks, stack traces or boilerplate)."""
    lines = [plain(line) for line in text.splitlines()]
    return [line.strip() for line in lines if line.strip() and not _NOISE.search(line)][-limit:]


@dataclass
class PulumiFailure:
    """Context for turning a failed command into a message."""

    project: ProjectDir
    stack: str
    action: str
    missing_hint: str | None = None
    tracker: UpdateTracker | None = None
    output: list[str] = field(default_factory=list)


def _credentials_hint(project: ProjectDir) -> str:
    if project.settings.credentials == "key-file":
        return "the key in key_file (tfcli.yaml) was refused: check that it exists, is not revoked and has access"
    return "run `gcloud auth application-default login` (or set credentials: key-file and key_file in tfcli.yaml)"


def _region(project: ProjectDir) -> str:
    location = project.settings.location or ""
    return location.rsplit("-", 1)[0] if location.count("-") == 2 else location


def translate(error: BaseException, failure: PulumiFailure) -> TfcliError:
    """A Pulumi or Automation API failure as a message a user can act on."""
    from pulumi.automation import errors

    stack = failure.stack
    if isinstance(error, FileNotFoundError):
        return TfcliError("the Pulumi CLI (`pulumi`) is not installed or not on PATH", hint=INSTALL_HINT)
    if isinstance(error, subprocess.CalledProcessError | errors.InvalidVersionError):
        return TfcliError(f"the Pulumi CLI does not work here: {error}", hint=INSTALL_HINT)
    if isinstance(error, errors.StackNotFoundError):
        return TfcliError(
            f"there is no Pulumi stack '{stack}' in {failure.project.settings.state_backend}",
            hint=failure.missing_hint or f"nothing of '{stack}' is deployed",
        )
    if isinstance(error, errors.ConcurrentUpdateError):
        return TfcliError(
            f"another Pulumi update of stack '{stack}' is in progress (the stack is locked)",
            hint=f"wait for it to finish; if no update runs (one crashed), `pulumi cancel -s {stack}` "
            "(or removing the stale lock Pulumi names) releases it",
        )
    stdout, stderr = _split_output(error)
    diagnostics = failure.tracker.errors if failure.tracker is not None else []
    text = "\n".join((stdout, stderr, *failure.output, *diagnostics))
    everything = text.lower()
    if _EXISTS.search(text):
        return TfcliError(
            f"a Pulumi stack '{stack}' already exists in {failure.project.settings.state_backend}",
            hint="another command created it at the same time; run this one again",
        )
    if any(pattern in everything for pattern in _MISSING_PASSPHRASE):
        return TfcliError(
            f"Pulumi could not {failure.action} stack '{stack}': its secrets need a passphrase and none is set",
            hint="export PULUMI_CONFIG_PASSPHRASE='...' (or PULUMI_CONFIG_PASSPHRASE_FILE=PATH): the one the stack "
            "was created with",
        )
    if any(pattern in everything for pattern in _WRONG_PASSPHRASE):
        return TfcliError(
            f"Pulumi could not decrypt the secrets of stack '{stack}': wrong passphrase",
            hint="set PULUMI_CONFIG_PASSPHRASE to the passphrase these stacks were created with",
        )
    if any(pattern in everything for pattern in _CREDENTIAL_PATTERNS):
        return TfcliError(
            f"Pulumi could not {failure.action} stack '{stack}': no valid Google Cloud credentials",
            hint=_credentials_hint(failure.project),
        )
    gcp_project = failure.project.settings.gcp_project or "PROJECT"
    if match := _API_DISABLED.search(text):
        name = match["name"].strip()
        url = _API_URL.search(text[match.start() :])
        service = url["service"] if url else _API_SERVICES.get(name, "SERVICE.googleapis.com")
        return TfcliError(
            f"Pulumi could not {failure.action} stack '{stack}': the {name} ({service}) is not enabled in GCP "
            f"project {gcp_project}",
            hint=f"gcloud services enable {service} --project {gcp_project}  (then wait a minute or two and run the "
            "command again; docs/gke.md lists every API tfcli needs)",
        )
    if match := _QUOTA.search(text):
        metric = match["metric"] or match["metric2"]
        region = match["region"] or _region(failure.project)
        return TfcliError(
            f"Pulumi could not {failure.action} stack '{stack}': the GCP quota {metric} of project {gcp_project} is "
            f"too low{f' in {region}' if region else ''}",
            hint=f"see it with `gcloud compute regions describe {region or 'REGION'} --project {gcp_project} "
            f"--flatten=quotas --filter=quotas.metric:{metric}` and ask for more at "
            f"https://console.cloud.google.com/iam-admin/quotas?project={gcp_project} (GPUs also need "
            "GPUS_ALL_REGIONS); or pick another region or GPU type, or spot (its own PREEMPTIBLE_ quota)",
        )
    if match := _PERMISSION.search(text):
        permission = match["permission"] or match["permission2"]
        return TfcliError(
            f"Pulumi could not {failure.action} stack '{stack}': your Google account lacks a permission"
            + (f" ({permission})" if permission else "")
            + f" in project {gcp_project}",
            hint="docs/gke.md lists the IAM roles a first deploy needs (roles/container.admin, roles/storage.admin, "
            "roles/iam.serviceAccountAdmin, roles/iam.serviceAccountUser, roles/resourcemanager.projectIamAdmin, "
            "roles/compute.viewer)",
        )
    lines = list(failure.tracker.errors[-4:]) if failure.tracker is not None else []
    lines += [line for line in meaningful_lines(stderr) if line not in lines]
    if not lines:
        lines = meaningful_lines(stdout)
    return TfcliError(
        "\n".join([f"pulumi could not {failure.action} stack '{stack}':", *(f"  {line}" for line in lines)]),
        hint="run again with --debug for Pulumi's whole output, or run the same `pulumi` command yourself",
    )


@contextlib.contextmanager
def pulumi_errors(failure: PulumiFailure) -> Iterator[None]:
    """Turn what the Automation API raises in the block into a :class:`TfcliError`."""
    from pulumi.automation import errors

    try:
        yield
    except FileNotFoundError as error:
        if Path(str(error.filename or "")).name not in ("pulumi", "pulumi.exe"):
            raise
        raise translate(error, failure) from None
    except (errors.CommandError, errors.InvalidVersionError, subprocess.CalledProcessError) as error:
        if os.environ.get("TFCLI_DEBUG"):
            raise
        raise translate(error, failure) from None


@dataclass(frozen=True)
class StackState:
    """A stack as Pulumi knows it: whether it exists, its outputs, and its last operation."""

    name: str
    exists: bool
    outputs: dict[str, Any]
    last_kind: str | None = None  # update | destroy | refresh | ...
    last_result: str | None = None  # succeeded | failed | in-progress

    @property
    def deployed(self) -> bool:
        """Resources are up: the last successful operation left outputs behind."""
        return bool(self.outputs)

    @property
    def may_have_resources(self) -> bool:
        """Deployed, or an update ran (maybe failed half-way) since the last successful destroy."""
        destroyed = self.last_kind == "destroy" and self.last_result == "succeeded"
        return self.deployed or (self.exists and self.last_kind is not None and not destroyed)


class Stacks:
    """The project's Pulumi stacks (one workspace, made on first use, for all the stacks of a command)."""

    def __init__(self, project: ProjectDir) -> None:
        self.project = project
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
                command = pulumi_command()
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
        )

    def set_config(self, stack: Stack, values: dict[str, str], *, secrets: dict[str, str] | None = None) -> None:
        """``pulumi config set-all`` of plain values, and secrets with ``--secret`` (Pulumi stores ciphertext).

        A secret is set only when it changed (``config get`` reads it back through a pipe): the Automation API can
        hand a value to Pulumi only on its command line, where it is briefly visible to this machine's processes.
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
                    config[key] = ConfigValue(value=value, secret=True)
            if config:
                stack.set_all_config(config)

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
