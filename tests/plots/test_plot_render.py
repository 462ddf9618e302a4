"""`plot_run` writes a real PNG; matplotlib loads only when drawing."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from plot_fakes import grpo_run, language_run, p2p_session, weight_run

from langmarl.core.errors import MissingDependencyError
from langmarl.plots import plot_run

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk (after checking the signature)."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_default_output_is_curves_png_in_the_run(tmp_path: Path) -> None:
    run = language_run(tmp_path, [[0.0, 1.0], [1.0, 1.0]])
    path = plot_run(run)
    assert path == run / "curves.png"
    assert png_size(path) == (640, 400)  # one panel: 6.4 x 4.0 inches at 100 dpi
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize("make", [grpo_run, p2p_session])
def test_several_panels_go_in_two_columns(tmp_path: Path, make) -> None:
    if make is grpo_run:
        make(tmp_path, [[{"total_reward": 0.1, "critical_steps": 1}], [{"total_reward": 0.3}]])
    else:
        make(tmp_path, [0.2, 0.4])
    width, height = png_size(plot_run(tmp_path, tmp_path / "out" / "plot.png"))
    assert (width, height) == ((1280, 740) if make is grpo_run else (640, 740))


def test_notes_are_drawn_under_the_panels(tmp_path: Path) -> None:
    width, height = png_size(plot_run(weight_run(tmp_path, [0.5])))
    assert width == 640 and height > 400  # the "only one step" note adds a line


def test_missing_matplotlib_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import → ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install 'langmarl\[plot\]'"):
        plot_run(weight_run(tmp_path, [0.5, 0.6]))


def test_reading_runs_does_not_import_matplotlib() -> None:
    code = (
        "import sys, langmarl.plots as p, langmarl.cli; p.run_series; langmarl.cli.build_app(); "
        "print('matplotlib' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
