"""What CPU this is: its model and the vector instruction sets that decide torch's, MKL's,
fbgemm's and CTranslate2's kernels — and so how fast the tests and benchmarks run and the last
bits of every logit (issue 37: an AVX2-only AMD EPYC ran the test command 1.8× slower than an
AVX-512 one, and a quantized engine's greedy answers changed there).

Printed beside every benchmark figure (``benchmarks/machine_load.py``) and at the start of
``python3 dev.py test``: ``python -m langmarl.core.machine``. Standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path

FEATURES = {
    "AVX2": ("avx2",),
    "AVX-512": ("avx512f",),
    "AVX512-VNNI": ("avx512_vnni",),
    "AVX512-BF16": ("avx512_bf16",),
    "AMX": ("amx_tile", "amx_bf16", "amx_int8"),
}
"""A feature is reported present when any of its ``/proc/cpuinfo`` flags is."""


def cpu_info(text: str | None = None) -> tuple[str, set[str]]:
    """The first processor's model name and flags from ``/proc/cpuinfo`` (or ``text``);
    ``("unknown", set())`` where there is none (not Linux)."""
    if text is None:
        try:
            text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
    model, flags = "unknown", set[str]()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model == "unknown":
            model = " ".join(value.split())
        elif key == "flags" and not flags:
            flags = set(value.split())
    return model, flags


NATIVE_BF16 = ("avx512_bf16", "amx_bf16")
"""Flags of a CPU that multiplies bf16 in hardware. Without them torch's bf16 matmul is
emulated: forcing AVX2 kernels on an AVX512-BF16 EPYC (``ATEN_CPU_CAPABILITY=avx2
ONEDNN_MAX_CPU_ISA=AVX2``, one thread, a 1536×576 layer) made it 2.8× slower than fp32 for 8
rows and 4.2× for 256, where natively it was 2.7× and 4.5× faster (benchmarks/RESULTS.md,
issue 37)."""


def native_bf16(text: str | None = None) -> bool:
    """Whether the CPU has a :data:`NATIVE_BF16` flag (``/proc/cpuinfo``, or ``text``)."""
    return bool(cpu_info(text)[1] & set(NATIVE_BF16))


KERNEL_CAPS = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "CT2_FORCE_CPU_ISA": "AVX2",
}
"""The variables that cap torch's, oneDNN's, MKL's and CTranslate2's kernels at AVX2 (the
values that emulate an AVX2-only CPU's kernels on a newer one: ``benchmarks/busy_machine.py
--isa avx2``). The microarchitecture stays this CPU's, so timings under the cap are a lower
bound for an older AVX2-only CPU, while the kernel choices — and so the last bits of every
logit — are the AVX2 ones."""


def describe(text: str | None = None, environ: dict[str, str] | None = None) -> str:
    """One line: ``CPU: AMD EPYC, 2 cores; AVX2 yes, AVX-512 no, …``, and the kernel caps
    (:data:`KERNEL_CAPS`) set in ``environ`` (this process's environment by default)."""
    model, flags = cpu_info(text)
    present = [
        f"{name} {'yes' if flags & set(names) else 'no'}" for name, names in FEATURES.items()
    ]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    line = f"CPU: {model}, {cores} cores; {', '.join(present)}"
    env = os.environ if environ is None else environ
    caps = [f"{name}={env[name]}" for name in KERNEL_CAPS if env.get(name)]
    return f"{line}; kernels capped: {', '.join(caps)}" if caps else line


if __name__ == "__main__":
    print(describe(), flush=True)
