"""Run untrusted Python (LLM-written code, solutions, reward functions) in a subprocess.

``run_python(code, limits=SandboxLimits(...))`` returns a :class:`SandboxResult`. Every
sandboxed process (these runs and the p2p executor's training processes) starts through the
one confinement in ``langmarl/sandbox/confine.py``; ``docs/text_envs.md`` lists its layers
and what they guarantee.
"""

from langmarl.sandbox.models import SandboxLimits, SandboxResult
from langmarl.sandbox.runner import run_python, run_python_async

__all__ = ["SandboxLimits", "SandboxResult", "run_python", "run_python_async"]
