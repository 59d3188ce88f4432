"""``tfcli experiment play``: a tiny real run's agent plays episodes, prints their returns and records them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_kit import invoke

pytestmark = pytest.mark.usefixtures("release_memory")

EPISODE = re.compile(r"episode (\d+): return (\S+) \((\d+) steps\)")


def _frames(path: Path) -> list[tuple[int, ...]]:
    import imageio.v3 as iio

    return [tuple(frame.shape) for frame in iio.imiter(path)]


def test_plays_a_trained_checkpoint_and_records_every_step(lab: Path) -> None:
    code, _, stderr = invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp", "-t", "400", "-w", "2")
    assert code == 0, stderr
    code, stdout, stderr = invoke("experiment", "start", "-e", "cp", "--wait")
    assert code == 0, stdout + stderr

    code, stdout, stderr = invoke("experiment", "play", "-e", "cp", "--episodes", "2", "--video", "cp.mp4")
    assert code == 0, stdout + stderr
    episodes = [(int(n), float(r), int(steps)) for n, r, steps in EPISODE.findall(stdout)]
    assert [n for n, _, _ in episodes] == [1, 2]
    assert all(r == steps for _, r, steps in episodes)  # CartPole pays 1 per step
    mean = sum(r for _, r, _ in episodes) / 2
    assert "checkpoint 1 (400 timesteps trained" in stdout and f"mean return {mean:g} over 2 episode(s)" in stdout
    # one frame at each episode's start and one after every step, as rendered (600 x 400), at CartPole's 50 fps
    frames = _frames(lab / "cp.mp4")
    assert len(frames) == sum(steps for _, _, steps in episodes) + 2
    assert set(frames) == {(400, 600, 3)}
    assert f"cp.mp4 ({len(frames):,} frames, 600x400, 50 fps)" in stdout

    code, stdout, stderr = invoke(
        "experiment", "play", "-e", "cp", "--checkpoint", "1", "--deterministic", "--seed", "7", "--video", "cp.gif"
    )
    assert code == 0, stdout + stderr
    ((_, _, steps),) = [(int(n), float(r), int(s)) for n, r, s in EPISODE.findall(stdout)]
    assert f"cp.gif ({steps + 1:,} frames, 600x400, 50 fps)" in stdout
    # a GIF merges identical consecutive frames into one that lasts longer: the playing time is what must add up
    from PIL import Image, ImageSequence

    with Image.open(lab / "cp.gif") as gif:
        assert gif.size == (600, 400)
        assert sum(frame.info["duration"] for frame in ImageSequence.Iterator(gif)) == (steps + 1) * 20  # ms


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--checkpoint", "newest"], 2, "--checkpoint: 'newest' is neither `latest` nor a checkpoint number"),
        (["--video", "run.avi"], 2, "--video: run.avi: write an .mp4 or a .gif file"),
        (["--video", "no/such/folder/run.mp4"], 2, "the folder no/such/folder does not exist"),
        ([], 1, "experiment 'cp' has no complete checkpoint"),
    ],
)
def test_bad_input_and_no_checkpoint_say_so(lab: Path, args: list[str], code: int, message: str) -> None:
    assert invoke("experiment", "new", "-f", "cartpole-ppo", "-n", "cp")[0] == 0
    exit_code, stdout, stderr = invoke("experiment", "play", "-e", "cp", *args)
    assert exit_code == code, stdout + stderr
    assert message in stderr and "Traceback" not in stdout + stderr
    assert not list(lab.glob("*.avi")) and not list(lab.glob("*.mp4"))
