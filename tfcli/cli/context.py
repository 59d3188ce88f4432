"""What every command of a CLI call shares: the project (opened on first use), its runs, and the backends with the
CLI's own ways of showing Pulumi updates and of offering to install a missing Pulumi CLI."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfcli.backends import Backends
    from tfcli.experiments.store import ExperimentStore
    from tfcli.gke.stacks import Stacks
    from tfcli.project import ProjectDir
    from tfcli.runs.run import Run


@dataclass
class CliContext:
    """One per command; everything is made when first asked for (``tfcli --help`` opens no project)."""

    @cached_property
    def store(self) -> ExperimentStore:
        from tfcli.experiments.store import ExperimentStore
        from tfcli.project import open_project

        return ExperimentStore(open_project())

    @property
    def project(self) -> ProjectDir:
        return self.store.project

    @cached_property
    def backends(self) -> Backends:
        from tfcli.backends import Backends
        from tfcli.cli.build_prompt import offer_build
        from tfcli.cli.pulumi import offer_install
        from tfcli.cli.stack_progress import RichUpdateObserver

        return Backends(observer=RichUpdateObserver(), install_prompt=offer_install, build_prompt=offer_build)

    def stacks(self) -> Stacks:
        """The project's Pulumi stacks for the cluster commands (the experiment commands reach them through their
        run's backend), offering to install a missing Pulumi CLI."""
        from tfcli.cli.build_prompt import offer_build
        from tfcli.cli.pulumi import offer_install
        from tfcli.gke.stacks import Stacks

        return Stacks(self.project, install_prompt=offer_install, build_prompt=offer_build)

    def run(self, *, experiment: str | None = None, sweep: str | None = None) -> Run:
        """``-e NAME`` or ``-s SWEEP`` of this project (exactly one)."""
        from tfcli.runs.run import Run
        from trainer.kernel.errors import InvalidInput

        if (experiment is None) == (sweep is None):  # said before any project is opened
            raise InvalidInput("give exactly one of -e NAME (an experiment) or -s SWEEP (a sweep)")
        return Run.named(self.store, experiment=experiment, sweep=sweep)
