"""Pulumi's failures as messages a user can act on: no Pulumi CLI, no such stack, another update running, no Google
credentials, no passphrase, an API not enabled, a quota, a permission, or the last meaningful lines Pulumi printed.
Every one comes back as a :class:`TfcliError` (exit code 1) with a hint."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tfcli.gke.events import UpdateTracker, plain
from tfcli.gke.pulumi_cli import INSTALL_HINT
from tfcli.project import ProjectDir
from trainer.kernel.errors import TfcliError

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
_API_QUOTA = re.compile(r"Error 429: .*?Quota exceeded for quota metric '(?P<metric>[^']+)'")
_ROLE_FOR = {  # a permission's service -> the predefined role that holds it, for the image stack's own APIs
    "cloudbuild": "roles/cloudbuild.builds.editor",
    "artifactregistry": "roles/artifactregistry.admin",
}
_EXISTS = re.compile(r"stack '[^']+' already exists")
_NOISE = re.compile(r"^\s*(at |goroutine |\[\d+ ?[a-z]*\]$)|PULUMI_DEBUG_COMMANDS|^\s*(Resources|Duration):")


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
    if match := _API_QUOTA.search(text):  # an API's rate quota (Cloud Build's build requests, ...)
        return TfcliError(
            f"Pulumi could not {failure.action} stack '{stack}': GCP project {gcp_project} used up its quota "
            f"'{match['metric']}'",
            hint="wait a minute and run the command again; a higher limit: "
            f"https://console.cloud.google.com/iam-admin/quotas?project={gcp_project}",
        )
    if match := _PERMISSION.search(text):
        permission = match["permission"] or match["permission2"]
        role = _ROLE_FOR.get((permission or "").split(".", 1)[0])
        return TfcliError(
            f"Pulumi could not {failure.action} stack '{stack}': your Google account lacks a permission"
            + (f" ({permission})" if permission else "")
            + f" in project {gcp_project}",
            hint=f"gcloud projects add-iam-policy-binding {gcp_project} --member=user:YOUR_ACCOUNT --role={role}"
            if role
            else "docs/gke.md lists the IAM roles a first deploy needs (roles/container.admin, roles/storage.admin, "
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
