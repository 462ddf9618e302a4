"""The CPU line printed beside benchmark figures and at the start of ``dev.py test``."""

from __future__ import annotations

from langmarl.core.machine import cpu_info, describe, native_bf16

AVX2_EPYC = """processor\t: 0
model name\t: AMD EPYC 7B12
flags\t\t: fpu sse2 avx avx2 fma
processor\t: 1
model name\t: AMD EPYC 7B12
flags\t\t: fpu sse2 avx avx2 fma
"""
SAPPHIRE = "model name : Intel(R) Xeon(R)  Platinum 8481C\nflags : avx2 avx512f amx_tile\n"


def test_an_avx2_only_cpu_says_so() -> None:
    model, flags = cpu_info(AVX2_EPYC)
    assert model == "AMD EPYC 7B12" and "avx2" in flags
    line = describe(AVX2_EPYC)
    assert line.startswith("CPU: AMD EPYC 7B12, ") and "cores;" in line
    assert "AVX2 yes" in line and "AVX-512 no" in line and "AMX no" in line


def test_avx512_and_amx_are_named_and_spaces_squeezed() -> None:
    line = describe(SAPPHIRE)
    assert "Intel(R) Xeon(R) Platinum 8481C" in line
    assert "AVX-512 yes" in line and "AMX yes" in line and "AVX512-VNNI no" in line


def test_no_cpuinfo_reads_unknown() -> None:
    assert cpu_info("") == ("unknown", set())
    assert describe("").startswith("CPU: unknown, ")


def test_native_bf16_needs_avx512_bf16_or_amx() -> None:
    assert not native_bf16(AVX2_EPYC)
    assert native_bf16(SAPPHIRE.replace("amx_tile", "amx_bf16"))
    assert native_bf16("flags : avx2 avx512f avx512_bf16\n")
    assert not native_bf16("flags : avx2 avx512f amx_tile\n") and not native_bf16("")


def test_kernel_caps_are_named_when_set() -> None:
    """Under ``busy_machine.py --isa avx2`` every figure says its kernels were capped."""
    capped = describe(SAPPHIRE, {"ATEN_CPU_CAPABILITY": "avx2", "CT2_FORCE_CPU_ISA": "AVX2"})
    assert capped.endswith("; kernels capped: ATEN_CPU_CAPABILITY=avx2, CT2_FORCE_CPU_ISA=AVX2")
    assert "capped" not in describe(SAPPHIRE, {"PATH": "/bin"})
