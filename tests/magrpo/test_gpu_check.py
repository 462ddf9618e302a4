"""``benchmarks/gpu_check.py`` (issue 41, item 5) run here with ``--tiny`` on the CPU, so the
script a GPU machine runs cannot rot between the times one is lent."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _script(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # it imports machine_load beside it
    monkeypatch.setenv("LANGMARL_BENCH_MACHINE_PRINTED", "")  # print the CPU line here
    spec = importlib.util.spec_from_file_location("gpu_check", BENCHMARKS / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "gpu_check", module)  # its dataclass looks itself up
    spec.loader.exec_module(module)
    return module


def test_the_cases_follow_the_devices_present(monkeypatch) -> None:
    gpu_check = _script(monkeypatch)
    on_cpu, left_out = gpu_check.cases("cpu", 0)
    assert [(c.precision, c.devices) for c in on_cpu] == [
        ("fp32", ("cpu", "cpu")), ("bf16", ("cpu", "cpu"))]  # fmt: skip
    assert left_out and "two devices: left out" in left_out[0]
    one_gpu, _ = gpu_check.cases("cuda", 1)
    assert {c.devices for c in one_gpu} == {("cuda:0", "cuda:0")}
    two_gpus, left_out = gpu_check.cases("cuda", 2)
    assert [c.placement for c in two_gpus].count("two devices") == 2 and left_out == []


@pytest.mark.slow
def test_the_gpu_check_runs_tiny_on_the_cpu(monkeypatch, tmp_path, capsys) -> None:
    gpu_check = _script(monkeypatch)
    monkeypatch.chdir(tmp_path)
    gpu_check.main(["--tiny", "--device", "cpu"])
    out = capsys.readouterr().out
    assert "CPU: " in out and "AVX-512" in out  # the machine line of machine_load
    assert "GPU: none used" in out
    rows = [line for line in out.splitlines() if line.startswith("| fp32") or
            line.startswith("| bf16")]  # fmt: skip
    assert len(rows) == 2 and all("| cpu, cpu |" in row and "n/a (cpu)" in row for row in rows)
