"""What the embedded model answers on *this* machine: the reference a test of another path
(the client, ``langmarl serve``) compares with, instead of an answer fixed
on the machine the test was written on.

Greedy answers depend on the CPU's kernels (AVX2, AVX-512, AMX change the last bits of every
logit): on an AVX2-only AMD EPYC the fp32 engine answered 21 of the 25 check-set questions
right, 25 elsewhere (issue 37). A path that adds nothing to the model must give the engine's
own greedy tokens wherever it runs.
"""

from __future__ import annotations

from langmarl.llm.local.engine import shared_engine
from langmarl.llm.local.generation import GenJob, GenOutput


def greedy_reply(question: str, max_tokens: int) -> GenOutput:
    """The embedded model's greedy answer to one user message (no system prompt), from this
    process's shared engine (the default engine, as the client and ``serve`` use)."""
    local = shared_engine().start()
    ids = local.encode_chat([{"role": "user", "content": question}], max_tokens)
    return local.submit(GenJob(ids, max_tokens, temperature=0.0)).result()
