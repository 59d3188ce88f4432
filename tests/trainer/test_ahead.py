"""A sweep trial started ahead of its turn (``trainer/ahead.py``): it builds its agent and traces TensorForce's
graphs without running them, waits while its queue holds it, then trains exactly what it trains alone; a pause while
it waits pauses it before its first step, and so does a queue that died."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from trainer_testkit import TINY_PPO, finish, read_progress, read_result, trainer_process

from trainer.ahead import HOLD_VARIABLE, get_ready, holding, wait_for_turn
from trainer.signals import StopRequest

READY = "ready; waiting for a slot in the sweep's queue"


def episodes(output: Path) -> list[tuple[Any, ...]]:
    return [(row["episode"], row["timesteps"], row["return"], row["length"]) for row in read_progress(output)]


def test_only_a_whole_pid_of_a_living_process_holds(tmp_path: Path) -> None:
    hold = tmp_path / "held"
    assert not holding(hold)  # no file
    for text in ("", "not a pid\n", "12ab"):
        hold.write_text(text)
        assert not holding(hold), text
    hold.write_text(f"{os.getpid()}\n")
    assert holding(hold)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    hold.write_text(gone.stdout)
    assert not holding(hold)  # its queue died: nothing holds the trial (it pauses: wait_for_turn)


def test_the_wait_ends_on_release_on_the_queues_death_and_on_a_stop(tmp_path: Path) -> None:
    hold = tmp_path / "held"
    queue = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        hold.write_text(f"{queue.pid}\n")
        stop = StopRequest()
        stop.request("SIGTERM")
        began = time.monotonic()
        wait_for_turn(hold, stop)  # a pause while held: the run then pauses before its first step
        assert time.monotonic() - began < 5
        released = StopRequest()
        subprocess.Popen([sys.executable, "-c", f"import time, os; time.sleep(0.5); os.kill({queue.pid}, 9)"])
        began = time.monotonic()
        wait_for_turn(hold, released)  # returns once the queue is gone (killed, not reaped here: a zombie), not before
        assert 0.3 < time.monotonic() - began < 30
        assert hold.exists() and released.requested  # and pauses: trained, it would make one more than --parallel
        assert released.reason == "its sweep's queue is gone"
        free = StopRequest()
        hold.unlink()
        wait_for_turn(hold, free)  # released: trains
        assert not free.requested
    finally:
        queue.kill()
        queue.wait()


@pytest.mark.slow  # builds a TensorForce agent (README "Development")
def test_getting_ready_traces_the_loops_functions_without_running_them() -> None:
    from trainer.agents import build_agent
    from trainer.environments import make_environment
    from trainer.kernel.spec.agent import AgentSpec, NetworkSpec
    from trainer.kernel.spec.environment import GymnasiumEnvironment

    spec = {key: value for key, value in TINY_PPO.items() if key != "network"}
    env = make_environment(GymnasiumEnvironment(level="CartPole-v1"))
    agent = build_agent(
        AgentSpec.model_validate(spec),
        environment=env,
        network=NetworkSpec.model_validate(TINY_PPO["network"]),
        max_episode_timesteps=None,
        seed=1,
    )
    try:
        traced = [*agent.model._act_graphs.values(), *agent.model._observe_graphs.values()]  # tensorforce's
        assert traced and all(function.experimental_get_tracing_count() == 0 for function in traced)
        get_ready(agent, deterministic=False)
        assert all(function.experimental_get_tracing_count() == 1 for function in traced)
        assert agent.timesteps == 0 and agent.updates == 0  # traced, not run
        states = env.reset()
        for _ in range(3):
            agent.act(states=[states], parallel=[0])
            agent.observe(terminal=[0], reward=[1.0], parallel=[0])
        assert all(function.experimental_get_tracing_count() == 1 for function in traced)  # the calls used them
    finally:
        agent.close()
        env.close()


@pytest.mark.slow  # two tiny training runs (README "Development")
def test_a_held_trial_waits_for_its_turn_then_trains_what_it_trains_alone(
    spec_file: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = spec_file(total_timesteps=300)
    hold = tmp_path / "hold"
    hold.write_text(f"{os.getpid()}\n")  # this test stands for the queue
    monkeypatch.setenv(HOLD_VARIABLE, str(hold))
    log = tmp_path / "held.log"
    with open(log, "w") as errors:
        held = trainer_process("run", "--spec", str(spec), "--output", str(tmp_path / "held"), stderr=errors)
        deadline = time.monotonic() + 180
        while READY not in log.read_text():
            assert held.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        time.sleep(1.0)
        assert held.poll() is None
        assert not (tmp_path / "held" / "progress.jsonl").exists()  # not one step before its turn
        hold.unlink()
        code, _ = finish(held, timeout=180)
    assert code == 0, log.read_text()
    monkeypatch.delenv(HOLD_VARIABLE)
    code, stderr = finish(trainer_process("run", "--spec", str(spec), "--output", str(tmp_path / "alone")), 180)
    assert code == 0, stderr
    assert READY not in stderr
    assert episodes(tmp_path / "held") == episodes(tmp_path / "alone")
    assert len(episodes(tmp_path / "alone")) >= 5


@pytest.mark.slow  # builds a TensorForce agent (README "Development")
def test_a_trial_paused_while_held_pauses_before_its_first_step(
    spec_file: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hold = tmp_path / "hold"
    hold.write_text(f"{os.getpid()}\n")
    monkeypatch.setenv(HOLD_VARIABLE, str(hold))
    log = tmp_path / "held.log"
    output = tmp_path / "out"
    with open(log, "w") as errors:
        held = trainer_process(
            "run", "--spec", str(spec_file(total_timesteps=300)), "--output", str(output), stderr=errors
        )
        deadline = time.monotonic() + 180
        while READY not in log.read_text():
            assert held.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        held.send_signal(signal.SIGTERM)
        code, _ = finish(held, timeout=120)
    assert code == 143, log.read_text()
    result = read_result(output)
    assert result["status"] == "paused" and result["timesteps"] == 0
    assert hold.exists()  # the queue's file: the trial never removes it
