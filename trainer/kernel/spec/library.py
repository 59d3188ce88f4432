"""Finding agent, network, environment, cluster and experiment specs by name.

Names are looked up in the project's ``configs/<kind>/`` first and then in the library bundled with tfcli, with or
without a ``.yaml``/``.yml``/``.json`` ending, so a project can override any bundled file by giving its own the
same name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec.documents import SPEC_SUFFIXES, display_path
from trainer.kernel.spec.suggest import did_you_mean

KINDS = ("experiments", "clusters", "agents", "networks", "environments", "sweeps")
BUNDLED_CONFIGS = Path(__file__).resolve().parent.parent / "configs"
PROJECT_FILE = "tfcli.yaml"


def find_project_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above ``start`` holding ``tfcli.yaml`` (a tfcli project), if any."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_FILE).is_file():
            return folder
    return None


@dataclass(frozen=True)
class ConfigLibrary:
    """An ordered list of config folders, each holding one sub-folder per kind."""

    folders: tuple[Path, ...]

    @classmethod
    def for_project(cls, start: Path | None = None) -> ConfigLibrary:
        """The project's ``configs/`` (when inside a project), then the bundled library."""
        root = find_project_root(start)
        folders = [root / "configs"] if root is not None and (root / "configs").is_dir() else []
        return cls((*folders, BUNDLED_CONFIGS))

    def find(self, kind: str, name: str) -> Path | None:
        """The file for ``name`` in the first folder that has it."""
        for folder in self.folders:
            for candidate in (name, *(name + suffix for suffix in SPEC_SUFFIXES)):
                path = folder / kind / candidate
                if path.is_file() and path.suffix in SPEC_SUFFIXES:
                    return path
        return None

    def names(self, kind: str) -> list[str]:
        """Every name of this kind, project files first, without duplicates."""
        seen: dict[str, None] = {}
        for folder in self.folders:
            if (folder / kind).is_dir():
                for path in sorted((folder / kind).iterdir()):
                    if path.is_file() and path.suffix in SPEC_SUFFIXES:
                        seen.setdefault(path.stem, None)
        return list(seen)

    def require(self, kind: str, name: str, *, where: str) -> Path:
        """Like :meth:`find`, but a missing name is an ``InvalidInput`` with a did-you-mean."""
        path = self.find(kind, name)
        if path is not None:
            return path
        names = self.names(kind)
        hint = did_you_mean(name, names)
        looked = ", ".join(
            f"the bundled {kind}" if folder == BUNDLED_CONFIGS else display_path(folder / kind)
            for folder in self.folders
        )
        singular = kind[:-1]
        raise InvalidInput(
            f"{where}no {singular} named '{name}'{hint}; looked in {looked}. Available: {', '.join(names) or 'none'}"
        )


def looks_like_path(value: str) -> bool:
    """A reference with a folder separator or a spec file ending is a path; anything else is a name."""
    return "/" in value or "\\" in value or value.endswith(SPEC_SUFFIXES)
