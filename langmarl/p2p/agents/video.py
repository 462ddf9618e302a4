"""Frames of an evaluation video as PNG bytes: what the VLM judge scores and what the
reviser's look-back shows (:mod:`.judge`, :mod:`.lookback`).

The videos were written by the process that ran LLM-written reward code, so they are read
as untrusted input: the file's size, each frame's size and the number of frames are bounded,
and frames are decoded one at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import cast

import numpy as np

MAX_VIDEO_BYTES = 64 * 2**20
MAX_FRAME_PIXELS = 2_000_000
"""A frame larger than this (1920 x 1040) is refused: the session's videos are 480 x 480."""
MAX_FRAMES = 20_000


def video_frames(video: Path, count: int = 6) -> list[bytes]:
    """``count`` evenly spaced frames of ``video`` as PNG bytes, decoded one at a time and
    only the picked ones kept (the file was written by confined code: its size, frame size
    and length are bounded).

    Raises:
        ValueError: for a file over :data:`MAX_VIDEO_BYTES`, a frame over
            :data:`MAX_FRAME_PIXELS`, more than :data:`MAX_FRAMES` frames, or no frame.
    """
    import imageio.v2 as imageio

    size = video.stat().st_size
    if size > MAX_VIDEO_BYTES:
        raise ValueError(f"{video.name} is {size / 2**20:.0f} MiB, over the video limit")

    def frames() -> Iterator[np.ndarray]:
        with imageio.get_reader(video) as reader:
            for index, frame in enumerate(cast("Iterable[np.ndarray]", reader)):
                if index >= MAX_FRAMES:
                    raise ValueError(f"{video.name} has over {MAX_FRAMES} frames")
                if frame.shape[0] * frame.shape[1] > MAX_FRAME_PIXELS:
                    raise ValueError(f"{video.name} has {frame.shape[1]}x{frame.shape[0]} "
                                     f"frames, over {MAX_FRAME_PIXELS:,} pixels")  # fmt: skip
                yield frame

    total = sum(1 for _ in frames())  # a first pass counts, keeping nothing
    if total == 0:
        raise ValueError(f"{video.name} has no frames")
    picks = set(np.linspace(0, total - 1, num=min(count, total)).astype(int).tolist())
    return [imageio.imwrite("<bytes>", frame, format="png")
            for index, frame in enumerate(frames()) if index in picks]  # fmt: skip
