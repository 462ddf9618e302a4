"""Run untrusted Python (LLM-written code, solutions, reward functions) in a subprocess.

``run_python(code, limits=SandboxLimits(...))`` returns a :class:`SandboxResult`; see
``langmarl/sandbox/runner.py`` for the layers of containment.
"""

from langmarl.sandbox.models import SandboxLimits, SandboxResult
from langmarl.sandbox.runner import run_python, run_python_async

__all__ = ["SandboxLimits", "SandboxResult", "run_python", "run_python_async"]
