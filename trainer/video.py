"""Writing the frames an environment renders to an MP4 or GIF file, one frame at a time.

MP4 goes through the ffmpeg binary that the ``imageio-ffmpeg`` wheel carries (H.264, yuv420p: plays in browsers
and every common player; no system ffmpeg needed); GIF through Pillow. Frames are streamed to the encoder, so a long
recording does not collect in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainer.kernel.errors import InvalidInput
from trainer.kernel.files import check_writable

FORMATS = (".mp4", ".gif")


def check_video_path(path: Path) -> Path:
    """A file ending in ``.mp4`` or ``.gif`` that can be written (:func:`trainer.kernel.files.check_writable`), else
    :class:`InvalidInput` naming the flag."""
    if path.suffix.lower() not in FORMATS:
        raise InvalidInput(f"--video: {path}: write an .mp4 or a .gif file")
    return check_writable(path, "--video")


class VideoWriter:
    """Frames (height x width x 3 uint8 arrays, all of one size) to ``path`` at ``fps`` frames per second."""

    def __init__(self, path: Path, fps: float) -> None:
        import imageio.v2 as imageio

        self.path = path
        self.fps = fps
        self.frames = 0
        self.shape: tuple[int, ...] | None = None
        if path.suffix.lower() == ".gif":
            # Pillow takes a frame's duration in milliseconds; loop=0 repeats forever
            self._writer: Any = imageio.get_writer(path, mode="I", duration=1000.0 / fps, loop=0)
        else:
            # macro_block_size=2: keep the rendered size (H.264 in yuv420p needs even sides, nothing more)
            self._writer = imageio.get_writer(
                path, format="FFMPEG", mode="I", fps=fps, codec="libx264", pixelformat="yuv420p", macro_block_size=2
            )

    def add(self, frame: Any) -> None:
        if self.shape is None:
            self.shape = tuple(frame.shape)
        self._writer.append_data(frame)
        self.frames += 1

    def close(self) -> None:
        self._writer.close()
