"""The trainer's typed input: the validated experiment plus what the command line adds.

``run(config)`` is a plain function of this object (docs/design.md §13.6); the command line only builds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import Experiment

Address = tuple[str, int]
EnvironmentsOption = Literal["auto", "in-process", "subprocess"]
ENVIRONMENTS_OPTIONS: tuple[str, ...] = ("auto", "in-process", "subprocess")


@dataclass(frozen=True)
class RunConfig:
    experiment: Experiment
    output: Path
    spec_name: str = "experiment"  # how messages name the spec file, e.g. "experiments/cartpole.yaml"
    workers: tuple[Address, ...] = ()  # env-worker addresses (distributed runs)
    environments: EnvironmentsOption = "auto"  # multi-threaded runs: in-process or subprocess environments
    token: str | None = None  # shared secret for the env-worker transport
    keep_checkpoints: int = 3
    progress_bar: bool | None = None  # None: a rich progress bar when stdout is a terminal, else log lines
    hourly_price: float | None = None  # dollars per hour of the run (TFCLI_HOURLY_PRICE): enforces max_cost
    start_allowance_seconds: float = 0.0  # node time per start max_cost counts (TFCLI_START_ALLOWANCE_SECONDS; GKE)
    publish_seconds: float | None = None  # progress.jsonl closed and reopened this often (TFCLI_PUBLISH_SECONDS; 60)
    hold: Path | None = None  # a sweep trial started ahead of its turn waits on this file (trainer/ahead.py)
    agent_summaries: bool = True  # TensorForce's own summaries in summaries/agent/ (bench/training.py turns them off)


def parse_workers(text: str) -> tuple[Address, ...]:
    """``"host-0:7000,host-1:7000"`` -> ``(("host-0", 7000), ("host-1", 7000))``; IPv6 as ``[::1]:7000``."""
    addresses: list[Address] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, colon, port = item.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise InvalidInput(f"--workers: '{item}' is not HOST:PORT (e.g. env-worker-0.my-experiment:7000)")
        addresses.append((host, int(port)))
    if not addresses:
        raise InvalidInput("--workers: give at least one HOST:PORT")
    return tuple(addresses)
