"""run.json: the shared record and each backend's own section (docs/design.md §9.2), and files of the format tfcli
wrote before sections existed (flat keys beside ``backend``), which must still load."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from tfcli.experiments.record import Handle, RunRecord
from tfcli.gke.handle import GkeHandle, deployed_on_gke, gke_trial_of
from tfcli.local.handle import LocalHandle

# run.json files exactly as the previous version wrote them (RunRecord.dumps: every field, flags when raised).
FLAT_LOCAL_SWEEP = {
    "backend": "local", "started_at": "2026-11-26T23:26:00+00:00", "pid": 5178, "pause_requested": True,
    "stopped_at": None, "stack": None, "shared_cluster": None, "sweep": None, "parallel": 2, "ended_as": None,
    "ended_reason": None,
}  # fmt: skip
FLAT_GKE_TRIAL = {
    "backend": "gke", "started_at": "2026-11-26T23:26:00+00:00", "pid": None, "stopped": True,
    "stopped_at": "2026-11-27T01:00:00+00:00", "stack": "lr", "shared_cluster": None, "sweep": "lr", "parallel": None,
    "ended_as": "failed", "ended_reason": "OOMKilled",
}  # fmt: skip


def _read(tmp_path: Path, data: object) -> RunRecord:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    return RunRecord.read(path)


def test_a_local_run_json_of_the_previous_format_loads_into_the_shared_record_and_the_local_handle(
    tmp_path: Path,
) -> None:
    record = _read(tmp_path, FLAT_LOCAL_SWEEP)
    assert (record.backend, record.started_at, record.parallel, record.stopped) == (
        "local", "2026-11-26T23:26:00+00:00", 2, False
    )  # fmt: skip
    assert record.handle(LocalHandle) == LocalHandle(pid=5178, pause_requested=True)
    assert record.handle(GkeHandle) == GkeHandle()  # a local run has no GKE state
    written = json.loads(record.dumps())
    assert written["local"] == {"pid": 5178, "pause_requested": True}
    assert "pid" not in written and "stack" not in written  # rewritten in today's format
    assert RunRecord.from_json(written) == record


def test_a_gke_trial_of_the_previous_format_keeps_its_sweep_and_how_the_cluster_ended_it(tmp_path: Path) -> None:
    record = _read(tmp_path, FLAT_GKE_TRIAL)
    gke = record.handle(GkeHandle)
    assert (gke.stack, gke.sweep, gke.ended_as, gke.ended_reason) == ("lr", "lr", "failed", "OOMKilled")
    assert record.stopped and record.stopped_at == "2026-11-27T01:00:00+00:00"
    assert not deployed_on_gke(record) and gke_trial_of(record) is None  # stopped: no stack holds it
    assert gke_trial_of(record.but(stopped=False)) == "lr"


def test_each_backend_writes_its_own_section_and_keeps_the_others(tmp_path: Path) -> None:
    record = RunRecord(backend="gke", started_at="t").with_handle(GkeHandle(stack="si1"))
    record = record.with_handle(LocalHandle(pid=7))
    data = json.loads(record.dumps())
    assert data == {
        "backend": "gke", "started_at": "t", "stopped_at": None, "parallel": None,
        "gke": {"stack": "si1", "shared_cluster": None, "sweep": None, "ended_as": None, "ended_reason": None},
        "local": {"pid": 7},
    }  # fmt: skip
    assert _read(tmp_path, data) == record


@dataclass(frozen=True)
class SlurmHandle(Handle):
    """A backend of its own, unknown to tfcli: its section is stored and read back without tfcli knowing it."""

    KEY: ClassVar[str] = "slurm"
    job: int | None = None
    partition: str | None = None


def test_a_handle_of_a_backend_tfcli_does_not_know_round_trips(tmp_path: Path) -> None:
    record = RunRecord(backend="slurm").with_handle(SlurmHandle(job=42, partition="gpu"))
    again = _read(tmp_path, json.loads(record.dumps()))
    assert again.backend == "slurm" and again.handle(SlurmHandle) == SlurmHandle(42, "gpu")


def test_wrong_types_read_as_unset_and_unknown_keys_are_ignored(tmp_path: Path) -> None:
    record = _read(
        tmp_path, {"backend": "local", "pid": "12", "pause_requested": "yes", "parallel": True, "extra": {"a": 1}}
    )
    assert record.handle(LocalHandle) == LocalHandle() and record.parallel is None
    odd = _read(tmp_path, {"backend": "gke", "started_at": 5, "gke": {"stack": ["si1"], "sweep": "lr"}})
    assert odd.started_at is None and odd.handle(GkeHandle) == GkeHandle(sweep="lr")
    assert _read(tmp_path, {"backend": 3, "pid": 4}) == RunRecord()  # no backend: no section to read flat keys into
    assert _read(tmp_path, ["not", "a", "record"]) == RunRecord()
    assert not RunRecord().started and RunRecord(backend="local").started
