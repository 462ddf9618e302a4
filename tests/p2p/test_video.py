"""Frames of an evaluation video, read as untrusted input (the judge's and the look-back's)."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_frames_are_decoded_within_a_budget(tmp_path: Path):
    """Only the frames asked for are kept; a frame over the pixel budget is refused with a
    reason, not decoded into memory (a 1600 x 1600 GIF of 48 frames, issue 39)."""
    import imageio.v2 as imageio
    import numpy as np
    from PIL import Image

    from langmarl.p2p.agents.video import MAX_FRAME_PIXELS, video_frames

    big = tmp_path / "big.gif"
    # palette frames, two colours in turn (identical ones would be merged): written as they
    # are, where imageio would quantize 48 RGB frames first (0.4 instead of 3.9 CPU-s)
    frames = [Image.new("P", (1600, 1600), color=i % 2) for i in range(48)]
    frames[0].save(big, save_all=True, append_images=frames[1:], optimize=False)
    assert Image.open(big).n_frames == 48
    assert MAX_FRAME_PIXELS < 1600 * 1600
    with pytest.raises(ValueError, match="over 2,000,000 pixels"):
        video_frames(big, 2)
    small = tmp_path / "small.gif"
    imageio.mimwrite(small, [np.full((16, 16, 3), i, dtype=np.uint8) for i in range(40)])
    frames = video_frames(small, 4)
    assert len(frames) == 4 and all(f.startswith(b"\x89PNG") for f in frames)
