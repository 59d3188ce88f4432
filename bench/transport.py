"""Raw round trips of the distributed mode's transport on loopback: no agent, only environments and the wire.

Two tables:

1. ``RemotePool.step`` over N CartPole env-worker processes (N = 1, 2, 4 by default): timesteps per second
   across all workers and the wall time of one pipelined ``step`` call. The goal it serves (issue "distributed"):
   the learner's training loop at >= 4.5x TensorForce's Runner remote='multiprocessing' (~180 timesteps/s for PPO
   CartPole on a 2-core machine), so the transport's own cost must stay far below 1.2 ms per timestep.
2. One connection echoing messages of Atari-like sizes: round trips per second and MB/s (both directions).

Run: ``uv run python -m bench.transport [--seconds S] [--workers 1,2,4]``. Binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from trainer.kernel.spec import Experiment
from trainer.pools.base import RUNNING
from trainer.pools.remote import RemotePool
from trainer.transport import Connection, Server, TransportError, connect

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token"
LAUNCHER = """
import sys
from trainer.kernel.spec import Experiment
from trainer.env_worker import serve
experiment = Experiment.model_validate_json(sys.argv[1])
serve(experiment, host="127.0.0.1", port=0, token=sys.argv[2], worker_index=int(sys.argv[3]))
"""


def start_workers(count: int) -> tuple[list[subprocess.Popen[str]], list[tuple[str, int]]]:
    experiment = Experiment(
        name="bench",
        environment={"level": "CartPole-v1"},
        agent={"agent": "ppo"},
        total_timesteps=1,
        run_mode="distributed",
        num_workers=count,
        seed=0,
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, experiment.model_dump_json(), TOKEN, str(index)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for index in range(count)
    ]
    addresses = []
    for process in processes:
        assert process.stdout is not None
        line = process.stdout.readline().strip()  # "env-worker listening on 127.0.0.1:PORT"
        addresses.append(("127.0.0.1", int(line.rsplit(":", 1)[1])))
    return processes, addresses


def pool_rate(count: int, seconds: float) -> tuple[float, float]:
    """(timesteps per second over all workers, microseconds per pool.step call)."""
    processes, addresses = start_workers(count)
    pool = RemotePool(addresses, token=TOKEN)
    try:
        indices = list(range(count))
        pool.reset(indices)
        rng = np.random.default_rng(0)
        calls = 0
        started = time.perf_counter()
        while (elapsed := time.perf_counter() - started) < seconds:
            steps = pool.step(indices, list(rng.integers(2, size=count)))
            calls += 1
            if ended := [i for i, step in zip(indices, steps, strict=True) if step.terminal != RUNNING]:
                pool.reset(ended)
        return calls * count / elapsed, elapsed / calls * 1e6
    finally:
        pool.close(stop_workers=True)
        for process in processes:
            process.wait(10)


def echo_rate(shape: tuple[int, ...], seconds: float) -> tuple[float, float]:
    """(round trips per second, MB/s both ways) for a uint8 array of ``shape`` over one connection."""
    server = Server("127.0.0.1", 0, token=TOKEN)
    stop = threading.Event()

    def serve() -> None:
        client: Connection | None = None
        while not stop.is_set():
            accepted, readable = server.poll(client, 0.05)
            if accepted:
                client = accepted[-1]
            elif readable and client is not None:
                try:
                    client.send(client.recv())
                except TransportError:
                    client = None

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    connection = connect("127.0.0.1", server.address[1], token=TOKEN)
    observation = np.random.default_rng(0).integers(0, 256, size=shape, dtype=np.uint8)
    message = ["step", observation]
    trips = 0
    started = time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        connection.send(message)
        connection.recv()
        trips += 1
    connection.close()
    stop.set()
    thread.join(5)
    server.close()
    return trips / elapsed, trips * 2 * observation.nbytes / elapsed / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="how long each row runs")
    parser.add_argument("--workers", default="1,2,4", help="comma-separated worker counts")
    args = parser.parse_args()

    print("RemotePool.step, CartPole-v1 env-workers on 127.0.0.1")
    print(f"{'workers':>8} {'timesteps/s':>12} {'us per step call':>17}")
    for count in (int(n) for n in args.workers.split(",")):
        rate, micros = pool_rate(count, args.seconds)
        print(f"{count:>8} {rate:>12,.0f} {micros:>17,.0f}")

    print("\nOne connection, uint8 array echoed (request and reply both carry it)")
    print(f"{'array':>16} {'bytes':>10} {'round trips/s':>14} {'MB/s':>8}")
    for shape in [(4,), (84, 84, 4), (210, 160, 3), (1024, 1024, 4)]:
        trips, throughput = echo_rate(shape, args.seconds)
        size = int(np.prod(shape))
        print(f"{'x'.join(map(str, shape)):>16} {size:>10,} {trips:>14,.0f} {throughput:>8,.0f}")


if __name__ == "__main__":
    main()
