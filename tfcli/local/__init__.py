"""The local backend: experiments as processes on this machine (no cloud account needed). Importing the package
registers it as ``local`` (:mod:`tfcli.runs.registry`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfcli.runs.registry import Caller, Registration, register

if TYPE_CHECKING:
    from tfcli.local.backend import LocalBackend


def make_local(caller: Caller) -> LocalBackend:
    from tfcli.local.backend import LocalBackend

    return LocalBackend()


register(Registration("local", make_local, flag="--local"))  # its runs are processes here, results in place
