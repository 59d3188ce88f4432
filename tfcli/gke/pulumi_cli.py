"""The Pulumi CLI that tfcli drives: found in tfcli's own folder or on PATH, or installed (the SDK's version) when the
caller's prompt says yes. Pulumi is imported inside the functions here (``tfcli --help`` stays fast)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from trainer.kernel.errors import TfcliError

if TYPE_CHECKING:
    from pulumi.automation import PulumiCommand

PULUMI_ROOT_VAR = "TFCLI_PULUMI_ROOT"  # where tfcli installs (and looks for) its own Pulumi CLI
INSTALL_SCRIPT = "https://get.pulumi.com/install.sh"
INSTALL_HINT = (
    "`tfcli pulumi install` (`--yes` where nothing can answer its question) installs the Pulumi CLI this tfcli is "
    "tested with for tfcli alone; or install it yourself: the "
    "official install script from Pulumi's website (curl -fsSL https://get.pulumi.com | sh), or your package "
    "manager (brew install pulumi, choco install pulumi, winget install pulumi); then check `pulumi version` works"
)


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


InstallPrompt = Callable[[PulumiMissing], bool]  # asked when no Pulumi CLI is found: install it now?


def pulumi_command(install_prompt: InstallPrompt | None = None) -> PulumiCommand:
    """The Pulumi CLI to run: tfcli's own (``pulumi_root()/bin/pulumi``), else ``pulumi`` on PATH, else — when the
    caller's ``install_prompt`` says yes — the pinned version installed now. Otherwise :class:`PulumiMissing`."""
    from pulumi.automation import PulumiCommand
    from semver import VersionInfo

    root = pulumi_root()
    pinned = VersionInfo.parse(pulumi_version())
    if pulumi_executable(root).is_file():
        return PulumiCommand(root=str(root), version=pinned)
    if shutil.which("pulumi") is not None:
        return PulumiCommand()
    missing = PulumiMissing(root)
    if install_prompt is None or not install_prompt(missing):
        raise missing
    install_pulumi(root)
    return PulumiCommand(root=str(root), version=pinned)
