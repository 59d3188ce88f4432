"""GKE experiments over their whole life: status, pause/resume, --wait, download, stop and logs, with the stack
played by the fake ``pulumi`` and the results bucket by gcp-storage-emulator (real HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_kit import invoke
from gke_testkit import FakePulumi, stack_config

BUCKET = "tfcli-si1-96f4ee46"  # by heart: a renamed bucket fails tests


def status() -> dict[str, Any]:
    code, stdout, stderr = invoke("experiment", "status", "-e", "si1", "--json")
    assert code == 0, stderr
    return dict(json.loads(stdout))


def episodes(count: int, length: int = 50) -> bytes:
    lines = [
        {"worker": 0, "episode": i, "timesteps": i * length, "return": float(i), "length": length, "wall": i}
        for i in range(1, count + 1)
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def upload(gcs: Any, files: dict[str, bytes | dict[str, Any]]) -> None:
    bucket = gcs.bucket(BUCKET)
    for name, data in files.items():
        body = json.dumps(data).encode() if isinstance(data, dict) else data
        bucket.blob(f"si1/{name}").upload_from_string(body)


@pytest.fixture
def started(gke_project: Path, fake_pulumi: FakePulumi, gcs: Any, monkeypatch: pytest.MonkeyPatch) -> FakePulumi:
    """si1 (cartpole-ppo, 100,000 timesteps) deployed on its own cluster, its bucket empty."""
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    monkeypatch.setattr(tfcli.gke.waiting, "PAUSE_TIMEOUT", 1.0)
    gcs.create_bucket(BUCKET)
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1")
    assert code == 0, stdout + stderr
    fake_pulumi.clear()
    return fake_pulumi


def test_status_and_list_read_the_bucket_and_the_stack(started: FakePulumi, gcs: Any, gke_project: Path) -> None:
    assert status()["state"] == "running" and status()["timesteps"] == 0
    upload(gcs, {"progress.jsonl": episodes(10)})
    current = status()
    assert (current["state"], current["backend"], current["timesteps"], current["episodes"]) == (
        "running",
        "gke",
        500,
        10,
    )
    assert current["progress"] == pytest.approx(0.005) and current["mean_return"] == pytest.approx(5.5)
    # A stale local copy is never what status reports.
    results = gke_project / "experiments" / "si1" / "results"
    results.mkdir()
    (results / "result.json").write_text('{"status": "completed", "timesteps": 100000}')
    assert status()["state"] == "running"

    upload(gcs, {"result.json": {"status": "completed", "timesteps": 100_000, "episodes": 600, "wall_seconds": 12.5,
                                 "mean_return_last_100": 480.0}})  # fmt: skip
    (entry,) = json.loads(invoke("experiment", "list", "--json")[1])
    assert (entry["state"], entry["timesteps"], entry["progress"], entry["mean_return"]) == (
        "completed",
        100_000,
        1.0,
        480.0,
    )
    assert {"stack output", "stack history"} <= set(started.verbs())
    assert "si1 (multi-threaded, gke): completed" in invoke("experiment", "status", "-e", "si1")[1]


def test_pause_and_resume_flip_suspend_and_up(started: FakePulumi, gcs: Any, gke_project: Path) -> None:
    upload(gcs, {"progress.jsonl": episodes(4)})
    # The trainer answers SIGTERM (the Job suspended) with a checkpoint and result.json.
    started.on_suspend("si1", {"result.json": json.dumps({"status": "paused", "timesteps": 200})})
    code, stdout, stderr = invoke("experiment", "pause", "-e", "si1")
    assert code == 0, stderr
    assert "Paused si1 at 200 timesteps" in stdout
    set_all = [argv for argv in started.commands() if argv[:2] == ["config", "set-all"]]
    assert set_all[-1][-2:] == ["--plaintext", "tfcli:suspend=true"]
    assert "up" in started.verbs()
    assert stack_config(gke_project, "si1")["tfcli:suspend"] == "true"
    assert status()["state"] == "paused"

    started.clear()
    code, stdout, stderr = invoke("experiment", "resume", "-e", "si1")
    assert code == 0, stderr
    set_all = [argv for argv in started.commands() if argv[:2] == ["config", "set-all"]]
    assert set_all[-1][-2:] == ["--plaintext", "tfcli:suspend=false"]
    assert "1 updated" in stdout  # the Job's suspend flipped
    assert stack_config(gke_project, "si1")["tfcli:suspend"] == "false"
    assert status()["state"] == "running"


def test_pause_that_does_not_finish_in_time_says_it_is_pausing(started: FakePulumi, gcs: Any) -> None:
    upload(gcs, {"progress.jsonl": episodes(4)})
    code, stdout, _ = invoke("experiment", "pause", "-e", "si1")
    assert code == 0 and "Pausing si1" in stdout
    assert status()["state"] == "pausing"
    code, _, stderr = invoke("experiment", "resume", "-e", "si1")
    assert code == 0, stderr


def test_download_copies_the_bucket_prefix(started: FakePulumi, gcs: Any, gke_project: Path) -> None:
    upload(gcs, {"progress.jsonl": episodes(3), "checkpoints/1/state.json": b"{}"})
    code, stdout, stderr = invoke("experiment", "download", "-e", "si1")
    assert code == 0, stderr
    results = gke_project / "experiments" / "si1" / "results"
    assert (results / "progress.jsonl").read_bytes() == episodes(3)
    assert (results / "checkpoints" / "1" / "state.json").read_text() == "{}"
    assert "experiments/si1/results" in stdout


def test_stop_checkpoints_downloads_then_destroys(started: FakePulumi, gcs: Any, gke_project: Path) -> None:
    upload(gcs, {"progress.jsonl": episodes(3), "result.json": {"status": "completed", "timesteps": 150}})
    code, stdout, stderr = invoke("experiment", "stop", "-e", "si1")
    assert code == 0, stderr
    assert "pulumi destroy si1" in stdout and "24 deleted" in stdout
    assert started.verbs()[-1] == "stack history" and "destroy" in started.verbs()
    assert "up" not in started.verbs()  # it had completed: nothing to checkpoint
    results = gke_project / "experiments" / "si1" / "results"
    assert json.loads((results / "result.json").read_text())["status"] == "completed"
    assert started.stacks()["si1"]["resources"] == []
    current = status()
    assert (current["state"], current["timesteps"]) == ("stopped", 150)  # from the download: the bucket is gone

    code, _, stderr = invoke("experiment", "start", "-e", "si1")
    assert code == 1 and "was stopped" in stderr and "--restart" in stderr
    code, _, stderr = invoke("experiment", "start", "-e", "si1", "--restart")
    assert code == 0, stderr
    assert not results.exists()


def test_stop_of_a_running_experiment_pauses_it_first(started: FakePulumi, gcs: Any) -> None:
    upload(gcs, {"progress.jsonl": episodes(3)})
    code, _, stderr = invoke("experiment", "stop", "-e", "si1", "--no-download")
    assert code == 0, stderr
    assert "up" not in started.verbs() and started.verbs().count("destroy") == 1  # --no-download: no checkpoint wait
    started.clear()
    assert invoke("experiment", "stop", "-e", "si1")[0] == 0
    assert "destroy" not in started.verbs()  # nothing deployed any more


def test_wait_follows_the_bucket_then_tears_down_its_own_cluster(
    gke_project: Path, fake_pulumi: FakePulumi, gcs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tfcli.gke.waiting

    monkeypatch.setattr(tfcli.gke.waiting, "POLL_SECONDS", 0.05)
    gcs.create_bucket(BUCKET)
    upload(gcs, {"progress.jsonl": episodes(2000),
                 "result.json": {"status": "completed", "timesteps": 100_000, "episodes": 2000, "wall_seconds": 30.0,
                                 "timesteps_per_second": 3333.3, "mean_return_last_100": 490.0}})  # fmt: skip
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "si1")[0] == 0
    code, stdout, stderr = invoke("experiment", "start", "-e", "si1", "--wait")
    assert code == 0, stdout + stderr
    assert "si1 completed: 100,000 timesteps, 2,000 episodes" in stdout
    assert "tearing its cluster down" in stdout
    assert fake_pulumi.verbs().count("up") == 1 and fake_pulumi.verbs().count("destroy") == 1
    assert (gke_project / "experiments" / "si1" / "results" / "progress.jsonl").is_file()
    assert status()["state"] == "stopped"


def test_logs_of_a_stack_without_a_kubeconfig_say_how_to_get_one(started: FakePulumi) -> None:
    """Streaming itself is tested in test_cluster_watch.py (a fake API server); this stack predates the output."""
    code, _, stderr = invoke("experiment", "logs", "-e", "si1", "-f")
    assert code == 1
    assert "the experiment's stack has no kubeconfig output" in stderr and "experiment start -e NAME" in stderr


def test_local_run_is_refused_while_deployed_on_gke(started: FakePulumi) -> None:
    code, _, stderr = invoke("experiment", "start", "-e", "si1", "--local")
    assert code == 1 and "is deployed on GKE" in stderr and "experiment stop -e si1" in stderr
    code, _, stderr = invoke("experiment", "start", "-e", "si1", "--restart")
    assert code == 1 and "stop -e si1` first" in stderr


def test_list_marks_an_unreadable_gke_experiment_unknown(started: FakePulumi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULUMI_CONFIG_PASSPHRASE")
    code, stdout, stderr = invoke("experiment", "list")
    assert code == 0
    assert "unknown" in stdout and "PULUMI_CONFIG_PASSPHRASE is not set" in stderr
