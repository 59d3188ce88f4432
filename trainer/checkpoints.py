"""Checkpoints that are either complete or ignored: ``checkpoints/<n>/`` with the agent, ``state.json`` and a marker.

A checkpoint is written into a fresh folder (numbers only grow, a half-written folder is never reused): first
TensorForce's checkpoint (``agent.save(format="checkpoint")``), then ``state.json`` with the run's counters, then —
after every file is flushed to disk — the marker ``COMPLETE``, written atomically (temporary file +
``os.replace``) and listing every file with its size. Only a folder whose marker is present and whose files all
have the listed sizes counts. Renaming a finished folder into place would be simpler, but a folder rename is not
atomic on GCS FUSE (where results may live), while replacing one small file is.

Resuming takes the newest complete checkpoint that TensorForce can restore and falls back to older ones. The store
keeps the newest ``keep`` complete checkpoints; pruning deletes a marker before the rest of its folder, so an
interrupted prune never leaves a folder that looks complete.

TensorForce's per-episode buffers are left out of the agent's files (:data:`EPISODE_BUFFERS`): restoring throws
their content away anyway (``Model.restore`` ends with ``reset()``, which empties them, and the resumed run starts
fresh episodes), yet they hold ``parallel_interactions x max_episode_timesteps`` states. Measured on the flagship
(space-invaders-dqn: DQN, replay memory 10,000 of 84x84x4 float states, 4 parallel interactions): 3.19 GB and 13.3 s
per checkpoint with them, 1.16 GB without (the replay memory, which is kept). Time matters most on SIGTERM: a
spot VM gives a pod ~15 s. Checkpoints written with the buffers still load (the extra values are ignored).
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainer.kernel.errors import TfcliError, io_failure
from trainer.kernel.files import atomic_write_json, fsync_directory, fsync_file

log = logging.getLogger(__name__)

MARKER = "COMPLETE"
# Beside ``checkpoints/`` (in the output folder), written once the folder's first checkpoint is complete: the
# folder's history says a checkpoint existed, even after ``checkpoints/`` is deleted by hand or a new segment has
# withdrawn result.json (trainer/run.py ``refuse_to_start_over``). Not under checkpoints/, which it must outlive.
CHECKPOINTED = ".checkpointed"
STATE = "state.json"
AGENT = "agent"  # TensorForce writes agent-<k>.index / .data-*, a "checkpoint" index file and agent.json
# Attributes of TensorForce 0.6's TensorforceModel (core_initialize) holding the per-episode buffers
EPISODE_BUFFERS = (
    "states_buffer",
    "internals_buffer",
    "auxiliaries_buffer",
    "actions_buffer",
    "terminal_buffer",
    "reward_buffer",
)


@contextlib.contextmanager
def _without_episode_buffers(agent: Any) -> Iterator[None]:
    """Untrack the model's episode buffers while the agent saves (tf.Module tracks attributes: deleting one drops
    it from the checkpoint; setting it again tracks it again). The variables themselves, and the traced graphs that
    use them, are untouched."""
    model = getattr(agent, "model", None)
    attributes = vars(model) if model is not None else {}
    detached = {name: attributes[name] for name in EPISODE_BUFFERS if name in attributes}
    try:
        for name in detached:
            delattr(model, name)
        yield
    finally:
        for name, value in detached.items():
            setattr(model, name, value)


def _check_counters(state: dict[str, Any]) -> None:
    for key, kind in (("timesteps", int), ("episodes", int), ("wall_seconds", float), ("agent", str)):
        if not isinstance(state.get(key), kind) and not (kind is float and isinstance(state.get(key), int)):
            raise ValueError(f"{STATE} has no valid {key}")


@dataclass(frozen=True)
class Checkpoint:
    number: int
    folder: Path
    state: dict[str, Any]  # the run's counters (timesteps, episodes, updates, wall_seconds) and the agent prefix

    def restore(self, agent: Any) -> None:
        """Load the agent's variables (and TensorForce's own counters) from this checkpoint."""
        agent.restore(directory=str(self.folder), filename=self.state["agent"], format="checkpoint")


class CheckpointStore:
    def __init__(self, directory: Path, *, keep: int = 3) -> None:
        self.directory = directory
        self.keep = max(keep, 1)

    def _folders(self) -> list[tuple[int, Path]]:
        if not self.directory.is_dir():
            return []
        return sorted((int(p.name), p) for p in self.directory.iterdir() if p.is_dir() and p.name.isdigit())

    def _read(self, number: int, folder: Path) -> Checkpoint | None:
        """The checkpoint in ``folder`` if it is complete, else None."""
        marker = folder / MARKER
        if not marker.is_file():
            return None
        try:
            files = json.loads(marker.read_text())["files"]
            for name, size in files.items():
                if (folder / name).stat().st_size != size:
                    raise ValueError(f"{name} has {(folder / name).stat().st_size} bytes, the marker says {size}")
            state = json.loads((folder / STATE).read_text())
            _check_counters(state)
        except (OSError, ValueError, KeyError, TypeError) as error:
            log.warning("checkpoint %s is marked complete but is damaged (%s); skipping it", folder, error)
            return None
        return Checkpoint(number, folder, state)

    @property
    def checkpointed_file(self) -> Path:
        return self.directory.parent / CHECKPOINTED

    def _note_checkpointed(self, number: int) -> None:
        """Write :data:`CHECKPOINTED` (atomically) when this folder's first checkpoint is complete."""
        if not self.checkpointed_file.is_file():
            atomic_write_json(self.checkpointed_file, {"first_checkpoint": number})

    def ever_checkpointed(self) -> bool:
        """Whether a checkpoint was ever completed here, by :data:`CHECKPOINTED` (checkpoints/ may be gone)."""
        return self.checkpointed_file.is_file()

    def marked(self) -> bool:
        """Whether any checkpoint was ever marked complete here (loadable or not: :meth:`resume` says which fail)."""
        return any((folder / MARKER).is_file() for _, folder in self._folders())

    def complete(self) -> list[Checkpoint]:
        """Complete checkpoints, newest first."""
        found = (self._read(number, folder) for number, folder in reversed(self._folders()))
        return [checkpoint for checkpoint in found if checkpoint is not None]

    def save(self, agent: Any, counters: dict[str, Any]) -> Checkpoint:
        """Write checkpoint ``n + 1`` and mark it complete last; then prune old and unfinished ones.

        A save that fails (a full disk) removes its unfinished folder — nothing trusts a folder without its marker,
        and the space it took is what the run needs to write ``result.json`` — and is a one-line ``TfcliError``:
        which checkpoint, where, the space left. The checkpoints before it are untouched.
        """
        started = time.monotonic()
        folders = self._folders()
        number = folders[-1][0] + 1 if folders else 1
        folder = self.directory / str(number)
        try:
            folder.mkdir(parents=True)
            with _without_episode_buffers(agent):
                prefix = Path(agent.save(directory=str(folder), filename=AGENT, format="checkpoint")).name
            state = {**counters, "agent": prefix, "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
            atomic_write_json(folder / STATE, state)
            files = {}
            for path in sorted(folder.iterdir()):
                if path.is_file() and not path.name.startswith("."):
                    fsync_file(path)
                    files[path.name] = path.stat().st_size
            fsync_directory(folder)
            atomic_write_json(folder / MARKER, {"checkpoint": number, "files": files})  # last: now it counts
            self._note_checkpointed(number)
        except Exception as error:
            if not (folder / MARKER).is_file():
                shutil.rmtree(folder, ignore_errors=True)
            cause = error.__cause__ if isinstance(error, TfcliError) and error.__cause__ is not None else error
            failure = io_failure(cause, f"saving checkpoint {number}", folder)  # the space left after the clean-up
            if failure is None:
                raise
            raise failure from error
        log.info(
            "checkpoint %d saved at %s timesteps, %s episodes (%.2f s)",
            number,
            f"{counters['timesteps']:,}",
            f"{counters['episodes']:,}",
            time.monotonic() - started,
        )
        self._prune()
        return Checkpoint(number, folder, state)

    def _prune(self) -> None:
        kept = {checkpoint.number for checkpoint in self.complete()[: self.keep]}
        for number, folder in self._folders():
            if number not in kept:
                (folder / MARKER).unlink(missing_ok=True)
                shutil.rmtree(folder, ignore_errors=True)

    def resume(self, make_agent: Callable[[], Any]) -> tuple[Any, Checkpoint | None]:
        """A new agent, restored from the newest complete checkpoint that loads (None: there is none).

        A checkpoint that fails to restore may have left the agent half-assigned, so each attempt gets a fresh agent.
        If complete checkpoints exist but none loads (the experiment's agent, network or num_workers changed, or
        their files are damaged), the run fails rather than silently starting over on top of the old results.
        """
        complete = self.complete()
        found = {checkpoint.folder for checkpoint in complete}
        failures = [  # marked complete once, damaged since: as much a checkpoint as one that does not load
            f"{folder}: damaged (marked {MARKER}, but its files or {STATE} are not as written)"
            for _, folder in reversed(self._folders())
            if (folder / MARKER).is_file() and folder not in found
        ]
        for checkpoint in complete:
            agent = make_agent()
            try:
                checkpoint.restore(agent)
            except Exception as error:
                log.warning("checkpoint %s does not load (%s); trying an older one", checkpoint.folder, error)
                failures.append(f"{checkpoint.folder}: {type(error).__name__}: {error}")
                agent.close()
                continue
            log.info(
                "resuming from checkpoint %d: %s timesteps, %s episodes done",
                checkpoint.number,
                f"{checkpoint.state['timesteps']:,}",
                f"{checkpoint.state['episodes']:,}",
            )
            return agent, checkpoint
        if failures:
            raise TfcliError(
                "none of the checkpoints in the output folder loads:\n" + "\n".join(failures),
                hint="did the experiment's agent, network or num_workers change, or were its files damaged? "
                "Use a new output folder (or move checkpoints/ away) to start over",
            )
        return make_agent(), None
