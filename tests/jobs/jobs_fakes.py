"""A tiny language-space job against a real HTTP stub LLM: the cheapest real run."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

from langmarl.jobs import JobSpec
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.roles import role_responder

STUB_REPLY = role_responder(
    {
        "critic": '{"researcher": "quote the fact", "answerer": "one word"}',
        "rewrite": "You answer with one word after quoting the fact from the context.",
        "gradient": "Quote the fact, then answer in one word.",
        "aggregate": "Quote the fact, then answer in one word.",
        "actor": "Answer: Paris",
    }
)


EXPORTS = Path(tempfile.mkdtemp(prefix="langmarl-test-exports-"))
"""Where the jobs' language runs export their policies (``checkpoint_dir``): a job places
only its run, and the default ``./ckpt_policy`` would be the repository. One per test
process, removed when it ends (one shared path kept every run's exports)."""
atexit.register(shutil.rmtree, EXPORTS, ignore_errors=True)


def language_config(stub: OpenAIStub, iterations: int = 1) -> dict[str, Any]:
    """A language run of ``iterations`` iterations, two episodes each, on ``stub``."""
    return {
        "checkpoint_dir": str(EXPORTS),
        "env": "language",
        "num_iterations": iterations,
        "trajectories_per_iteration": 2,
        "validation_size": 1,
        "llm": stub.llm_config(),
        "seed": 0,
    }


def language_job(stub: OpenAIStub, iterations: int = 1, **fields: Any) -> JobSpec:
    return JobSpec(kind="language", config=language_config(stub, iterations), **fields)
