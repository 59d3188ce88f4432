"""Reading a deployed 1,000-trial GKE sweep from its bucket: a cold ``status -s`` and a follow tick, before and after.

The bucket is gcp-storage-emulator (as tests/gke/conftest.py starts it, here in a process of its own) holding, for
each of ``--trials`` trials, a ``progress.jsonl`` of ``--episodes`` lines and a ``result.json`` in the trainer's
formats; the sweep's stack is the tests' fake ``pulumi`` (tests/gke/fake_pulumi.py). ``--latency-ms`` makes the
emulator answer each request that much later, on a thread per connection, to model Cloud Storage's round trips
(tens of milliseconds from a laptop) rather than the loopback's.

Measured, each code in its own process, in turn:

- **cold status -s**: the whole process ``python -m tfcli experiment status -s NAME --json`` (the median of
  ``--repeat`` runs after a warm-up), whose output the before and after codes must agree on;
- **cold view** and **follow tick**: in a process of its own, ``view()`` as ``status -s`` and each poll of
  ``start -s --wait`` call it: once cold, then ``--repeat`` ticks, before each of which ``--changed`` trials get 10
  new episodes (their ``progress.jsonl`` rewritten, as gcsfuse does) and one of them its final ``result.json``.
  A tick includes the fake ``pulumi``'s stack reads (about 0.1 s each).

"before" is the code of ``--before REV`` (default: the parent of the commit that added
``tfcli/gke/bucket_reads.py``: one trial at a time, two requests per object, everything again on every tick), run from
an export of that tree; "sequential" is today's code with one worker (the listing and the incremental reads
without the pool); "pooled" is today's code as shipped. Goal (issue 18): under 10 s cold, under 2 s per tick.
Run: ``uv run python -m bench.sweep_status [--trials 1000] [--episodes 300] [--repeat 3] [--latency-ms 0]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FAKE_PULUMI = ROOT / "tests" / "gke" / "fake_pulumi.py"
SWEEP = "bench-sweep"
GCP_PROJECT = "tfcli-bench-project"
GOAL_COLD, GOAL_TICK = 10.0, 2.0


def serve(port: int, latency_ms: float, serial: bool) -> None:
    """The emulator, in this process until killed, answering as Cloud Storage does: concurrently (a thread per
    connection) and over kept-alive connections (HTTP/1.1), each request ``latency_ms`` late. ``serial``: as shipped
    (and as tests/gke/conftest.py runs it), one connection at a time, each closed after one request."""
    from http.server import ThreadingHTTPServer

    from gcp_storage_emulator import server

    handler = server.RequestHandler
    if latency_ms > 0:
        for verb in ("do_GET", "do_POST", "do_PUT", "do_DELETE", "do_PATCH"):
            original = getattr(handler, verb)

            def delayed(self: Any, original: Any = original) -> None:
                time.sleep(latency_ms / 1000)
                original(self)

            setattr(handler, verb, delayed)
    if not serial:

        class Concurrent(ThreadingHTTPServer):
            request_queue_size = 256  # (the default 5 drops the connections of a burst: 1 s until a client retries)

        handler.protocol_version = "HTTP/1.1"  # (every response has a Content-Length)
        handler.disable_nagle_algorithm = True  # (its headers and body are two writes: 40 ms of delayed ACK each)
        server.server.HTTPServer = Concurrent  # type: ignore[misc]
    server.create_server("127.0.0.1", port, in_memory=True).run()


def progress_lines(first: int, count: int) -> str:
    from trainer.kernel.state import Episode

    episodes = [
        Episode(worker=0, episode=i, timesteps=i * 200, length=200, wall_seconds=i * 0.7, episode_return=i * 0.5)
        for i in range(first, first + count)
    ]
    return "".join(json.dumps(episode.as_json()) + "\n" for episode in episodes)


def result_json(status: str, episodes: int) -> str:
    from trainer.kernel.state import RunState
    from trainer.results import Result

    state = RunState(timesteps=episodes * 200, episodes=episodes, updates=episodes // 10)
    state.recent_returns.extend(i * 0.5 for i in range(max(1, episodes - 99), episodes + 1))
    state.earlier_wall_seconds = episodes * 0.7
    return json.dumps(Result.of(status, state).as_json())


def client() -> Any:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import storage

    return storage.Client(project="bench", credentials=AnonymousCredentials())


def populate(bucket: str, trials: int, episodes: int) -> int:
    """Every trial's two objects (three in four trials completed, the rest paused); returns the bytes written."""
    gcs = client()
    target = gcs.create_bucket(bucket)
    log = progress_lines(1, episodes)

    def upload(trial: int) -> int:
        status = "completed" if trial % 4 else "paused"
        result = result_json(status, episodes)
        target.blob(f"{SWEEP}/{SWEEP}-{trial}/progress.jsonl").upload_from_string(log)
        target.blob(f"{SWEEP}/{SWEEP}-{trial}/result.json").upload_from_string(result)
        return len(log) + len(result)

    written = sum(
        upload(trial) for trial in range(trials)
    )  # (one at a time: the emulator's writes are not thread-safe)
    assert len(list(gcs.list_blobs(bucket))) == 2 * trials
    return written


def make_project(folder: Path, trials: int, env: dict[str, str]) -> Path:
    """A project with the sweep created and started on the fake pulumi (its bucket: what the stack outputs)."""
    import yaml

    from tfcli.scaffold import PULUMI_YAML

    project = folder / "lab"
    tfcli = [sys.executable, "-m", "tfcli"]
    subprocess.run([*tfcli, "init", str(project)], check=True, capture_output=True, env=env)
    settings = {"name": "bench", "gcp_project": GCP_PROJECT, "location": "us-central1-a"}
    (project / "tfcli.yaml").write_text(yaml.safe_dump(settings))
    (project / "Pulumi.yaml").write_text(PULUMI_YAML.format(name="bench"))
    seeds = 10
    rates = [round(1e-4 * (1 + k), 6) for k in range(trials // seeds)]
    sweep = {"name": SWEEP, "base": "cartpole-ppo", "axes": {"agent.learning_rate": rates}, "seeds": seeds}
    (project / "configs" / "sweeps" / f"{SWEEP}.yaml").write_text(yaml.safe_dump(sweep))
    for command in (["sweep", "-f", SWEEP, "--no-build"], ["start", "-s", SWEEP]):
        done = subprocess.run([*tfcli, "experiment", *command], cwd=project, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"tfcli experiment {' '.join(command)}: {done.stdout}{done.stderr}")
    return project


def agrees(before: Any, after: Any) -> bool:
    """Whether ``after`` says what ``before`` said: the same values under every key ``before`` has (a later tfcli may
    print more fields, such as a sweep's ``detail``)."""
    if isinstance(before, dict):
        return isinstance(after, dict) and all(
            key in after and agrees(value, after[key]) for key, value in before.items()
        )
    if isinstance(before, list):
        return isinstance(after, list) and len(before) == len(after) and all(map(agrees, before, after))
    return bool(before == after)


def fake_pulumi_env(folder: Path, emulator: str) -> dict[str, str]:
    bin_dir, state = folder / "fake-bin", folder / "fake-state"
    bin_dir.mkdir()
    state.mkdir()
    script = bin_dir / "pulumi"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_PULUMI}" "$@"\n')
    script.chmod(0o755)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PULUMI_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FAKE_PULUMI_STATE=str(state),
               PULUMI_CONFIG_PASSPHRASE="bench", TFCLI_PULUMI_ROOT=str(folder / "tfcli-pulumi"),
               STORAGE_EMULATOR_HOST=emulator)  # fmt: skip
    return env


def measure(mode: str, changed: int, repeat: int) -> None:
    """In the project (cwd), with the code on sys.path: one cold ``view()``, then ``repeat`` ticks; prints JSON."""
    from tfcli.experiments.store import ExperimentStore
    from tfcli.gke.stacks import Stacks
    from tfcli.gke.sweep_readings import view
    from tfcli.project import open_project
    from tfcli.sweeps.store import get_sweep

    store = ExperimentStore(open_project())
    sweep, stacks = get_sweep(store, SWEEP), Stacks(store.project)
    kwargs: dict[str, Any] = {}
    if mode != "before":
        from tfcli.gke.bucket_reads import BucketReads

        kwargs["reads"] = BucketReads(workers=1) if mode == "sequential" else BucketReads()
    began = time.perf_counter()
    current = view(store, sweep, stacks=stacks, **kwargs)
    cold = time.perf_counter() - began
    bucket = client().bucket(str(current.stack.outputs["bucket"]))
    ticks = []
    for tick in range(repeat):
        grown = []
        for trial in range(tick * changed, (tick + 1) * changed):
            blob = bucket.blob(f"{SWEEP}/{SWEEP}-{trial}/progress.jsonl")
            text = blob.download_as_text()
            blob.upload_from_string(text + progress_lines(text.count("\n") + 1, 10))
            grown.append((trial, text.count("\n") + 10))
        final = bucket.blob(f"{SWEEP}/{SWEEP}-{tick * changed}/result.json")
        final.upload_from_string(result_json("completed", grown[0][1]))
        began = time.perf_counter()
        current = view(store, sweep, stacks=stacks, **kwargs)
        ticks.append(time.perf_counter() - began)
        readings = {reading.trial.index: reading for reading in current.readings}
        for trial, episodes in grown:  # the tick saw the new episodes and the new result
            assert readings[trial].reader.episodes == episodes, (trial, readings[trial].reader)
            assert len(readings[trial].records) == episodes and isinstance(readings[trial].records[-1], dict)
        assert readings[tick * changed].result["status"] == "completed"
    print(json.dumps({"cold": cold, "ticks": ticks}))


def wait_for(port: int) -> None:
    import socket

    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"the emulator did not listen on port {port}")


def old_tree(revision: str | None, folder: Path) -> tuple[str, Path]:
    """An export of ``tfcli``, ``infra`` and ``trainer`` as they were before the concurrent reads."""
    if revision is None:
        added = subprocess.run(
            ["git", "log", "-n1", "--diff-filter=A", "--format=%H", "HEAD", "--", "tfcli/gke/bucket_reads.py"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        revision = f"{added}^" if added else "HEAD"
    name = subprocess.run(["git", "rev-parse", "--short", revision], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip
    tree = folder / "before"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", revision, "tfcli", "infra", "trainer"], cwd=ROOT, capture_output=True,
                             check=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return name, tree


def timed_status(project: Path, env: dict[str, str], repeat: int) -> tuple[float, str]:
    command = [sys.executable, "-m", "tfcli", "experiment", "status", "-s", SWEEP, "--json"]
    output = subprocess.run(command, cwd=project, env=env, check=True, capture_output=True, text=True).stdout
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run(command, cwd=project, env=env, check=True, capture_output=True)
        samples.append(time.perf_counter() - began)
    return statistics.median(samples), output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=800)  # about the most one GKE sweep holds (its ConfigMap)
    parser.add_argument("--episodes", type=int, default=300, help="lines of each trial's progress.jsonl")
    parser.add_argument("--changed", type=int, default=5, help="trials with new episodes at each tick")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to each request by the emulator")
    parser.add_argument(
        "--serial-emulator", action="store_true", help="the emulator as shipped: one connection at a time"
    )
    parser.add_argument("--before", help="the revision to compare with (default: before the concurrent reads)")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve(args.serve, args.latency_ms, args.serial_emulator)
    if args.measure:
        return measure(args.measure, args.changed, args.repeat)

    from infra.naming import bucket_name
    from tfcli.local.supervisor import free_port

    port = free_port()
    emulator = subprocess.Popen([sys.executable, "-m", "bench.sweep_status", "--serve", str(port),
                                 "--latency-ms", str(args.latency_ms),
                                 *(["--serial-emulator"] if args.serial_emulator else [])], cwd=ROOT)  # fmt: skip
    try:
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            url = f"http://127.0.0.1:{port}"
            os.environ["STORAGE_EMULATOR_HOST"] = url
            wait_for(port)
            env = fake_pulumi_env(folder, url)
            written = populate(bucket_name(SWEEP, GCP_PROJECT), args.trials, args.episodes)
            project = make_project(folder, args.trials, env)
            revision, tree = old_tree(args.before, folder)
            emulator_kind = "serial" if args.serial_emulator else "threaded"
            print(f"{args.trials} trials, {written / 2**20:.1f} MiB in the bucket ({args.episodes} episodes each); "
                  f"emulator {emulator_kind}, latency {args.latency_ms:g} ms; before = {revision}")  # fmt: skip
            codes = {"before": f"{tree}{os.pathsep}{ROOT}", "sequential": str(ROOT), "pooled": str(ROOT)}
            statuses, outputs = {}, {}
            for mode in ("before", "pooled"):  # (the CLI runs as shipped: the pool) before the ticks change the bucket
                run_env = {**env, "PYTHONPATH": codes[mode]}
                statuses[mode], outputs[mode] = timed_status(project, run_env, args.repeat)
            rows = []
            for mode, path in codes.items():
                child = [sys.executable, "-m", "bench.sweep_status", "--measure", mode,
                         "--changed", str(args.changed), "--repeat", str(args.repeat)]  # fmt: skip
                done = subprocess.run(child, cwd=project, env={**env, "PYTHONPATH": path}, capture_output=True,
                                      text=True)  # fmt: skip
                if done.returncode != 0:
                    raise SystemExit(f"{mode} ({path}): {done.stderr}")
                numbers = json.loads(done.stdout.splitlines()[-1])
                rows.append((mode, statuses.get(mode), numbers["cold"], statistics.median(numbers["ticks"])))
    finally:
        emulator.terminate()
        emulator.wait()
    same = agrees(json.loads(outputs["before"]), json.loads(outputs["pooled"]))
    print(f"{'code':<12} {'status -s (process)':>20} {'cold view()':>12} {'follow tick':>12}")
    for mode, status, cold, tick in rows:
        shown = "-" if status is None else f"{status:.2f} s"
        print(f"{mode:<12} {shown:>20} {cold:>10.2f} s {tick:>10.2f} s")
    _, status, cold, tick = rows[-1]
    verdict = "ok" if status is not None and status < GOAL_COLD and tick < GOAL_TICK else "MISS"
    print(f"goal: cold status -s < {GOAL_COLD:g} s, tick < {GOAL_TICK:g} s: {verdict}; "
          f"status -s --json the same before and after (the fields both print): {'yes' if same else 'NO'}")  # fmt: skip


if __name__ == "__main__":
    main()
