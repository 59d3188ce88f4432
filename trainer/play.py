"""Watch a trained agent: restore a checkpoint, play episodes, report their returns, record them (``experiment play``).

The checkpoint is read from a snapshot: its files are hard-linked (copied where linking is not possible) into a
private folder first, so a trainer still running beside may prune the original (it keeps its newest three) without
pulling files from under the restore, and nothing the trainer reads or lists changes. A checkpoint pruned before it
could be linked is passed over for the next newest.

Only what acting needs is built and restored: the agent is made with one parallel interaction and the least memory
it allows (TensorForce's ``act(independent=True)`` neither records nor learns), and only the policy, the state
preprocessing, exploration and the counters are read from the checkpoint, by TensorFlow's object-based matching.
So the replay memory a DQN checkpoint holds (1.1 GB for the flagship) is never read, a checkpoint of any run mode
(``num_workers`` parallel interactions) plays, and a checkpoint whose policy does not fit the experiment's agent is
an error rather than an agent that plays with untrained weights.

Episodes act with independent acts: sampled from the policy by default, as in training, or greedily with
``deterministic`` (:class:`trainer.acting.Evaluating`). Imports TensorFlow: only ``tfcli experiment play`` imports
this module, inside the command.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer.acting import Evaluating
from trainer.checkpoints import MARKER, Checkpoint, CheckpointStore
from trainer.kernel.errors import InvalidInput, TfcliError
from trainer.kernel.spec import Experiment
from trainer.kernel.spec.environment import CustomEnvironment, GymnasiumEnvironment
from trainer.pools.base import RUNNING
from trainer.pools.recipe import EnvironmentRecipe
from trainer.video import VideoWriter

log = logging.getLogger(__name__)

# The parts of TensorForce 0.6's model that ``act(independent=True)`` reads (attributes of ``agent.model``).
ACTING_PARTS = ("policy", "state_preprocessing", "exploration", "variable_noise", "timesteps", "episodes", "updates")
DEFAULT_FPS = 30.0


@dataclass(frozen=True)
class Episode:
    number: int
    episode_return: float
    length: int  # agent steps


@dataclass(frozen=True)
class Video:
    path: Path
    frames: int
    width: int
    height: int
    fps: float


@dataclass(frozen=True)
class Played:
    checkpoint: int  # the checkpoint's number (its folder under checkpoints/)
    trained_timesteps: int  # how far the run had trained when it wrote the checkpoint
    episodes: list[Episode]
    video: Video | None
    load_seconds: float  # from the call to the first act: environment, agent, restore

    @property
    def mean_return(self) -> float:
        return sum(e.episode_return for e in self.episodes) / len(self.episodes)


def checkpoints(results: Path) -> list[Checkpoint]:
    """The complete checkpoints of a results folder, newest first."""
    return CheckpointStore(results / "checkpoints").complete()


def _chosen(results: Path, number: int | None, *, experiment: str) -> list[Checkpoint]:
    found = checkpoints(results)
    if not found:
        raise TfcliError(
            f"experiment '{experiment}' has no complete checkpoint in {results / 'checkpoints'}",
            hint="train it first (`tfcli experiment start`); for a GKE run, `tfcli experiment download` copies its "
            "checkpoints here",
        )
    if number is None:
        return found
    chosen = [checkpoint for checkpoint in found if checkpoint.number == number]
    if not chosen:
        have = ", ".join(str(checkpoint.number) for checkpoint in found)
        raise InvalidInput(
            f"--checkpoint: experiment '{experiment}' has no complete checkpoint {number} (it has {have})"
        )
    return chosen


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError as error:
        if isinstance(error, FileNotFoundError):
            raise
        shutil.copy2(source, target)  # another file system (or one without hard links): a copy reads the same


def _private_folder(beside: Path) -> tempfile.TemporaryDirectory[str]:
    """A temporary folder beside the checkpoints (same file system: links work; the trainer lists and prunes only
    numbered folders), or the system's when that folder is read-only."""
    try:
        return tempfile.TemporaryDirectory(prefix=".play-", dir=beside)
    except OSError:
        return tempfile.TemporaryDirectory(prefix="tfcli-play-")


@contextlib.contextmanager
def snapshot(results: Path, number: int | None, *, experiment: str) -> Iterator[Checkpoint]:
    """The newest complete checkpoint (or checkpoint ``number``), its files linked into a private folder."""
    for checkpoint in _chosen(results, number, experiment=experiment):
        with _private_folder(checkpoint.folder.parent) as private:
            copy = Path(private) / str(checkpoint.number)
            copy.mkdir()
            try:
                for path in checkpoint.folder.iterdir():
                    if path.is_file():
                        _link_or_copy(path, copy / path.name)
            except FileNotFoundError:
                log.info("checkpoint %d was pruned while it was being read; taking the next one", checkpoint.number)
                continue
            linked = CheckpointStore(Path(private)).complete()  # sizes checked against its marker again
            if not linked or not (copy / MARKER).is_file():
                continue
            yield linked[0]
            return
    raise TfcliError(
        f"experiment '{experiment}': its checkpoints were replaced while they were being read",
        hint="run the command again",
    )


class PlayEnvironment:
    """One environment of the experiment, stepped in agent steps (``repeat_actions``), rendering when asked."""

    def __init__(self, experiment: Experiment, *, seed: int | None, render: bool) -> None:
        recipe = EnvironmentRecipe.of(experiment)
        spec = experiment.environment
        if render:
            if not isinstance(spec, GymnasiumEnvironment | CustomEnvironment):
                raise InvalidInput(
                    f"--video: TensorForce's own environment '{spec.environment}' cannot render; "
                    "only gymnasium levels and environments can be recorded"
                )
            spec = spec.model_copy(update={"kwargs": {**spec.kwargs, "render_mode": "rgb_array"}})
            # classic-control levels draw with pygame, whose SDL would look for a display and a sound device
            os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
            os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
        self._recipe = dataclasses.replace(recipe, spec=spec, seed=seed)
        self._environment = self._recipe.make(0)

    def states(self) -> dict[str, Any]:
        return dict(self._environment.states())

    def actions(self) -> dict[str, Any]:
        return dict(self._environment.actions())

    def max_episode_timesteps(self) -> int | None:
        return self._recipe.agent_limit(self._environment)

    def reset(self) -> Any:
        return self._environment.reset()

    def step(self, action: Any) -> tuple[Any, int, float]:
        step = self._recipe.step(self._environment, action)
        return step.states, step.terminal, step.reward

    def render(self) -> Any:
        return self._environment.render()

    def frames_per_second(self) -> float:
        """Real speed: the level's own steps per second over the agent step's ``repeat_actions``."""
        rate = self._environment.steps_per_second()
        return (rate or DEFAULT_FPS) / self._recipe.repeat_actions

    def close(self) -> None:
        self._environment.close()


def acting_agent(experiment: Experiment, environment: PlayEnvironment, seed: int | None) -> Any:
    from trainer.agents import build_agent  # imports TensorFlow
    from trainer.preflight import compatibility_problems, quiet_tensorforce

    problems = compatibility_problems(
        experiment, environment.states(), environment.actions(), environment.max_episode_timesteps()
    )
    if problems:
        raise InvalidInput(problems)

    def build(acting_only: bool) -> Any:
        with quiet_tensorforce():
            return build_agent(
                experiment.agent,
                environment=environment,
                network=experiment.network,
                max_episode_timesteps=None,
                parallel_interactions=1,
                seed=seed,
                acting_only=acting_only,
            )

    try:
        return build(acting_only=True)
    except InvalidInput as error:  # an argument that wants longer episodes or more memory: build it as it trained
        log.info("the agent does not build with the least memory (%s); building it in full", error)
        return build(acting_only=False)


@contextlib.contextmanager
def _without_parents(model: Any) -> Iterator[None]:
    """Untrack every TensorForce module's ``parent`` for a while. A module refers to the module that made it, so
    from the policy TensorFlow's object graph reaches the whole model (memory included); without those edges the
    policy's graph is the policy."""
    modules = [module for module in model.submodules if "parent" in vars(module)]
    parents = [module.parent for module in modules]
    try:
        for module in modules:
            delattr(module, "parent")
        yield
    finally:
        for module, parent in zip(modules, parents, strict=True):
            module.parent = parent


def restore_acting_parts(agent: Any, checkpoint: Checkpoint) -> None:
    """Read the policy (and what acting reads besides, :data:`ACTING_PARTS`) of ``checkpoint`` into ``agent``;
    every variable of those parts must be in the checkpoint."""
    import tensorflow as tf

    model = agent.model
    parts = {name: getattr(model, name) for name in ACTING_PARTS if getattr(model, name, None) is not None}
    root = tf.train.Checkpoint(**{model.name: tf.train.Checkpoint(**parts)})  # the shape of TensorForce's save
    try:
        with _without_parents(model):
            status = root.read(str(checkpoint.folder / checkpoint.state["agent"]))
            status.assert_existing_objects_matched().expect_partial()
    except (AssertionError, ValueError, tf.errors.OpError) as error:
        raise TfcliError(
            f"checkpoint {checkpoint.number} does not fit the experiment's agent: {str(error).splitlines()[0]}",
            hint="was the experiment's agent, network or environment changed after it was trained?",
        ) from error


def play(
    experiment: Experiment,
    results: Path,
    *,
    episodes: int,
    checkpoint: int | None = None,
    video: Path | None = None,
    deterministic: bool = False,
    seed: int | None = None,
    on_episode: Callable[[Episode], None] | None = None,
) -> Played:
    """Play ``episodes`` episodes with the agent of ``checkpoint`` (None: the newest) of the run in ``results``."""
    started = time.monotonic()
    seed = experiment.seed if seed is None else seed
    environment: PlayEnvironment | None = None
    agent: Any = None
    writer: VideoWriter | None = None
    partial = None if video is None else _partial(video)
    try:
        with snapshot(results, checkpoint, experiment=experiment.name) as chosen:
            environment = PlayEnvironment(experiment, seed=seed, render=video is not None)
            agent = acting_agent(experiment, environment, seed)
            restore_acting_parts(agent, chosen)
        load_seconds = time.monotonic() - started
        log.info("restored checkpoint %d in %.1f s", chosen.number, load_seconds)
        if partial is not None:
            writer = VideoWriter(partial, environment.frames_per_second())
        acting = Evaluating(agent, deterministic=deterministic)
        played = []
        for number in range(1, episodes + 1):
            played.append(_episode(number, environment, acting, writer))
            if on_episode is not None:
                on_episode(played[-1])
        recorded = None
        if writer is not None and partial is not None and video is not None:
            writer.close()
            height, width = (writer.shape or (0, 0))[:2]
            recorded = Video(video, writer.frames, width, height, writer.fps)
            writer = None
            os.replace(partial, video)  # the whole recording or none: a failed play leaves no half-written video
        return Played(
            checkpoint=chosen.number,
            trained_timesteps=int(chosen.state["timesteps"]),
            episodes=played,
            video=recorded,
            load_seconds=load_seconds,
        )
    finally:
        if writer is not None:
            writer.close()
        if partial is not None:
            partial.unlink(missing_ok=True)
        if agent is not None:
            agent.close()
        if environment is not None:
            environment.close()


def _partial(video: Path) -> Path:
    return video.with_name(f".{video.stem}.partial{video.suffix}")


def _play_reporting(experiment: Experiment, results: Path, options: dict[str, Any], *, report: Any) -> Played:
    return play(experiment, results, **options, on_episode=report)


def play_isolated(
    experiment: Experiment,
    results: Path,
    *,
    on_episode: Callable[[Episode], None] | None = None,
    **options: Any,
) -> Played:
    """:func:`play` in a child process (:mod:`trainer.environments.isolated`): an environment that ends the process
    (``os._exit``, ``sys.exit``) or hangs is one line naming its file, never a silent exit; a video it left half
    written is removed."""
    from trainer.environments.isolated import run_isolated
    from trainer.preflight import environment_label

    try:
        played: Played = run_isolated(
            _play_reporting,
            (experiment, results, options),
            environment=environment_label(experiment),
            timeout=experiment.step_timeout,
            on_report=on_episode,
        )
    except BaseException:
        video = options.get("video")
        if video is not None:
            _partial(video).unlink(missing_ok=True)
        raise
    return played


def _episode(number: int, environment: PlayEnvironment, acting: Evaluating, writer: VideoWriter | None) -> Episode:
    states = environment.reset()
    acting.start_episode(0)
    if writer is not None:
        writer.add(environment.render())
    total, length, terminal = 0.0, 0, RUNNING
    while terminal == RUNNING:
        (action,) = acting.act([0], [states])
        states, terminal, reward = environment.step(action)
        total += reward
        length += 1
        if writer is not None:
            writer.add(environment.render())
    return Episode(number, total, length)
