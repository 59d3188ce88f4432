"""TensorBoard HParams: tiny real runs write the plugin's data, read back with TensorBoard's own code — the event
files event by event, and the HParams dashboard's backend (what ``tensorboard --logdir experiments/`` shows).

A sweep's trial reports the sweep's axes and its seed; a plain experiment its main settings; both the final return
(``tfcli experiment list -s``'s rule, over ``progress.jsonl``) and the timesteps to the target return. A resumed run
is still one session, with one start and one end.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from trainer_testkit import cartpole, cartpole_spec, read_progress, read_result

from tfcli.sweeps.aggregate import run_of
from tfcli.sweeps.create import SweepOptions, plan_sweep
from trainer.__main__ import main
from trainer.config import RunConfig
from trainer.hooks.hparams import hparam_values
from trainer.kernel.errors import InvalidInput
from trainer.kernel.spec import ConfigLibrary, load_experiment
from trainer.kernel.spec.library import BUNDLED_CONFIGS
from trainer.kernel.spec.sweep import trials_data
from trainer.run import run

START, END = "_hparams_/session_start_info", "_hparams_/session_end_info"


def hparams_events(folder: Path) -> list[tuple[str, Any]]:
    """Every hparams-plugin event in ``folder``'s event files, in order: (tag, parsed plugin data) — and the scalar
    metrics as (tag, value). Read event by event, so a second session start would show."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.plugins.hparams import metadata
    from tensorboard.util import tensor_util

    found: list[tuple[str, Any]] = []
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for event in EventFileLoader(str(path)).Load():
            for value in event.summary.value:
                if value.metadata.plugin_data.plugin_name == metadata.PLUGIN_NAME:
                    content = value.metadata.plugin_data.content
                    parse = {START: metadata.parse_session_start_info_plugin_data, END: None}[value.tag]
                    found.append(
                        (value.tag, parse(content) if parse else metadata.parse_session_end_info_plugin_data(content))
                    )
                else:
                    found.append((value.tag, float(tensor_util.make_ndarray(value.tensor))))
    return found


def hparams_of(start: Any) -> dict[str, Any]:
    """A session start's hyperparameters as plain values (numbers come back as floats)."""
    from google.protobuf import json_format

    return {name: json_format.MessageToDict(value) for name, value in start.hparams.items()}


def dashboard(logdir: Path) -> tuple[Any, list[Any]]:
    """What the HParams dashboard's backend serves for ``tensorboard --logdir LOGDIR``: the experiment (its hparam
    and metric columns) and the session groups (rows), as its get_experiment and session_groups routes do."""
    from tensorboard import context
    from tensorboard.backend.event_processing import data_provider, plugin_event_multiplexer
    from tensorboard.plugins import base_plugin
    from tensorboard.plugins.hparams import api_pb2, backend_context, get_experiment, list_session_groups

    multiplexer = plugin_event_multiplexer.EventMultiplexer()
    multiplexer.AddRunsFromDirectory(str(logdir))
    multiplexer.Reload()
    provider = data_provider.MultiplexerDataProvider(multiplexer, str(logdir))
    backend = backend_context.Context(
        base_plugin.TBContext(logdir=str(logdir), data_provider=provider, multiplexer=multiplexer)
    )
    request = context.RequestContext()
    experiment = get_experiment.Handler(request, backend, "").run()
    everything = api_pb2.ListSessionGroupsRequest(allowed_statuses=[0, 1, 2, 3], start_index=0, slice_size=100)
    groups = list_session_groups.Handler(request, backend, "", everything).run().session_groups
    return experiment, list(groups)


def final_return(progress: list[dict[str, Any]]) -> float:
    """By hand: the mean return of the episodes that ended in the last 10% of the run's timesteps."""
    last = progress[-1]["timesteps"]
    window = [line["return"] for line in progress if line["timesteps"] >= 0.9 * last]
    return sum(window) / len(window)


def timesteps_to_target(progress: list[dict[str, Any]], target: float) -> int | None:
    """By hand: the timesteps at the first episode whose mean over it and up to 19 before reaches ``target``."""
    for index, line in enumerate(progress):
        window = [earlier["return"] for earlier in progress[max(0, index - 19) : index + 1]]
        if sum(window) / len(window) >= target:
            return int(line["timesteps"])
    return None


@pytest.mark.slow  # a real training (README "Development")
def test_a_plain_experiment_reports_its_main_settings_and_final_return(tmp_path: Path) -> None:
    output = tmp_path / "plain" / "results"
    experiment = cartpole(total_timesteps=300, target_return=20)
    assert run(RunConfig(experiment=experiment, output=output, agent_summaries=False)).status == "completed"

    progress = read_progress(output)
    events = hparams_events(output / "summaries" / "hparams")
    assert [tag for tag, _ in events] == [START, "final_return", "timesteps_to_target", END]
    (_, start), (_, final), (_, to_target), (_, end) = events
    assert hparams_of(start) == {
        "agent.agent": "ppo",
        "agent.learning_rate": 0.001,
        "agent.batch_size": 2.0,
        "environment.level": "CartPole-v1",
        "run_mode": "single",
        "num_environments": 1.0,
        "total_timesteps": 300.0,
        "seed": 3.0,
    }
    assert start.group_name == "trainer-test"  # the session group is the experiment's name
    assert final == pytest.approx(final_return(progress))
    reached = timesteps_to_target(progress, 20)
    assert reached is not None and to_target == reached
    from tensorboard.plugins.hparams import api_pb2

    assert end.status == api_pb2.STATUS_SUCCESS

    # The dashboard: the settings as columns, just the two metrics (not the trainer's or agent's scalars), one row.
    shown, groups = dashboard(tmp_path)
    assert {info.name for info in shown.hparam_infos} == set(hparams_of(start))
    assert [(m.name.group, m.name.tag) for m in shown.metric_infos] == [
        ("", "final_return"),
        ("", "timesteps_to_target"),
    ]
    assert [session.name for group in groups for session in group.sessions] == ["plain/results/summaries/hparams"]
    assert {m.name.tag: m.value for m in groups[0].metric_values}["final_return"] == pytest.approx(final)


@pytest.mark.slow  # real trainings (README "Development")
def test_each_sweep_trial_reports_the_sweeps_axes_and_seed(tmp_path: Path) -> None:
    base = cartpole_spec(name="base", total_timesteps=200, target_return=1000)  # a target no run reaches
    sweep_file = tmp_path / "lr.yaml"
    sweep_file.write_text(
        yaml.safe_dump({"name": "lr", "base": base, "axes": {"agent.learning_rate": [0.001, 0.003]}, "seeds": 2})
    )
    planned = plan_sweep(str(sweep_file), SweepOptions(), ConfigLibrary((BUNDLED_CONFIGS,)))
    pod_specs = trials_data(planned.specs)  # what the GKE ConfigMap holds; locally experiment.yaml says the same
    logdir = tmp_path / "experiments"
    for index in (0, 3):  # learning rate 0.001 seed 1, learning rate 0.003 seed 2
        spec = tmp_path / f"trial-{index}.yaml"
        spec.write_text(pod_specs[f"trial-{index}.yaml"])
        output = logdir / f"lr-{index}" / "results"
        assert main(["run", "--spec", str(spec), "--output", str(output)]) == 0

    shown, groups = dashboard(logdir)
    assert {info.name for info in shown.hparam_infos} == {"agent.learning_rate", "seed"}  # the axes and the seed
    rows = {group.name: group for group in groups}
    assert set(rows) == {"lr-0", "lr-3"}
    for index, learning_rate, seed in ((0, 0.001, 1), (3, 0.003, 2)):
        output = logdir / f"lr-{index}" / "results"
        events = dict(hparams_events(output / "summaries" / "hparams"))
        assert hparams_of(events[START]) == {"agent.learning_rate": learning_rate, "seed": float(seed)}
        # The final return is the one `experiment list -s` computes from this trial's progress.jsonl.
        numbers = run_of(planned.trials[index], read_progress(output), "completed", read_result(output))
        assert numbers.final is not None and events["final_return"] == pytest.approx(numbers.final)
        assert "timesteps_to_target" not in events  # not reached: no value rather than a made-up one
        row = rows[f"lr-{index}"]
        assert {name: value.number_value for name, value in row.hparams.items()} == {
            "agent.learning_rate": learning_rate,
            "seed": seed,
        }
        assert [(m.name.tag, pytest.approx(m.value)) for m in row.metric_values] == [("final_return", numbers.final)]


@pytest.mark.slow  # a real training (README "Development")
def test_a_paused_and_resumed_run_is_one_session_with_metrics_over_all_its_episodes(tmp_path: Path) -> None:
    from tensorboard.plugins.hparams import api_pb2

    folder = tmp_path / "summaries" / "hparams"
    # Paused by SIGTERM once 3 episodes are done: metrics so far, no end (status unknown: it may go on).
    progress_file = tmp_path / "progress.jsonl"

    def pause_after_3_episodes() -> None:
        while not progress_file.is_file() or len(progress_file.read_text().splitlines()) < 3:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGTERM)  # the run's own handler turns it into a pause

    threading.Thread(target=pause_after_3_episodes, daemon=True).start()
    paused = cartpole(total_timesteps=1_000_000, saver_frequency="1000000t")
    result = run(RunConfig(experiment=paused, output=tmp_path, agent_summaries=False))
    assert result.status == "paused" and result.episodes >= 3
    events = hparams_events(folder)
    assert [tag for tag, _ in events] == [START, "final_return"]
    assert dict(events)["final_return"] == pytest.approx(final_return(read_progress(tmp_path)))

    # Resumed with a budget 200 timesteps past the pause: one session still, with the settings it now trains with.
    resumed = cartpole(total_timesteps=result.timesteps + 200)
    assert run(RunConfig(experiment=resumed, output=tmp_path, agent_summaries=False)).status == "completed"
    events = hparams_events(folder)
    assert [tag for tag, _ in events] == [START, "final_return", END]
    progress = read_progress(tmp_path)
    assert progress[2]["timesteps"] <= result.timesteps < progress[-1]["timesteps"]  # both segments' episodes
    assert hparams_of(dict(events)[START])["total_timesteps"] == result.timesteps + 200
    assert dict(events)["final_return"] == pytest.approx(final_return(progress))
    assert dict(events)[END].status == api_pb2.STATUS_SUCCESS
    _, groups = dashboard(tmp_path)
    assert len(groups) == 1 and groups[0].sessions[0].status == api_pb2.STATUS_SUCCESS


def test_listed_hparams_must_be_keys_the_spec_sets(tmp_path: Path) -> None:
    spec = tmp_path / "exp.yaml"
    data = cartpole_spec(total_timesteps=100, hparams=["agent.learning_rate", "agent.discount", "num_environments"])
    spec.write_text(yaml.safe_dump(data))
    with pytest.raises(InvalidInput) as caught:
        load_experiment(str(spec))
    assert caught.value.problems == [
        f"{spec}: hparams[1]: 'agent.discount' is not set in this spec: list dotted keys it sets "
        "(e.g. agent.learning_rate, run_mode) or num_environments"
    ]


def test_listed_values_that_are_not_numbers_or_text_are_shown_as_json() -> None:
    experiment = cartpole(
        total_timesteps=100, max_timesteps_per_episode=None, hparams=["agent.network", "max_timesteps_per_episode"]
    )
    assert hparam_values(experiment) == {
        "agent.network": '[{"activation":"tanh","size":16,"type":"dense"}]',
        "max_timesteps_per_episode": "null",  # a sweep may try null on an axis
        "seed": 3,
    }
