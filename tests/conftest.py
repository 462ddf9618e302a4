"""Shared test configuration."""

from __future__ import annotations

import os

# The embedded model runs on the CPU; two threads is the whole machine in CI.
os.environ.setdefault("LANGMARL_TORCH_THREADS", "2")
