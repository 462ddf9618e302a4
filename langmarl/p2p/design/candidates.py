"""An iteration's candidates on disk (``LoopConfig.candidates``): where each trains, how
many train at once, which one the iteration keeps.

Layout with more than one candidate::

    iter_N/candidates/c_1/ … c_K/   each an iteration record: inputs, runs, judgment, outcome
    iter_N/                         the winner's files, copied once every candidate is judged

With one candidate, it is ``iter_N`` itself: the layout of a session without a search.
The history lists every candidate (:class:`~langmarl.p2p.session.contracts.CandidateResult`) and
marks each judged as it is, so a killed search resumes with the candidates it had not
judged and loses none it had.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TypeVar

from langmarl.p2p.design.proposals import Proposal
from langmarl.p2p.design.search import Tried
from langmarl.p2p.session.contracts import CandidateResult, LoopResult
from langmarl.p2p.session.records import IterationInputs, IterationRecord, SessionRecord

CANDIDATES_DIR = "candidates"
T = TypeVar("T")
R = TypeVar("R")


def record(it: IterationRecord, name: str, single: bool) -> IterationRecord:
    """Candidate ``name``'s record: ``it`` itself when it is the only one, else
    ``it/candidates/<name>`` (its ``iteration_id`` ``iter_N/<name>`` in events)."""
    if single:
        return it
    found = IterationRecord(it.path / CANDIDATES_DIR / name, it.redact)
    found.iteration_id = f"{it.iteration_id}/{name}"
    return found


def tried(session: SessionRecord, result: LoopResult) -> list[Tried]:
    """Every candidate of ``result`` that came from a proposal, with its numbers (what the
    search's next proposals read)."""
    found = []
    for step in result.iterations:
        it = session.iteration(step.iteration)
        listed = step.candidates
        if not listed and step.judged:  # a history written before the search: one candidate
            outcome = it.read_outcome()
            means = outcome.term_means if outcome is not None else {}
            listed = [CandidateResult(name="c_1", origin=step.reward_origin,
                                      score=step.intent_score, term_means=means)]  # fmt: skip
        for c in listed:
            spec = record(it, c.name, len(listed) == 1).read_reward_spec()
            if spec.proposal is not None:
                proposal = Proposal.model_validate(spec.proposal)
                found.append(Tried(proposal, c.term_means, c.score))
    return found


def write(it: IterationRecord, prompt: str, inputs: list[IterationInputs]) -> list[str]:
    """Write each candidate's inputs; their names, ``c_1`` … in order."""
    names = [f"c_{i}" for i in range(1, len(inputs) + 1)]
    for name, one in zip(names, inputs, strict=True):
        found = record(it, name, len(inputs) == 1)
        found.path.mkdir(parents=True, exist_ok=True)
        found.save_inputs(prompt, one)
    return names


def train_each(
    pending: list[T], train: Callable[[T], R], slots: int, interrupt: Callable[[], None] | None
) -> Iterator[tuple[T, R]]:
    """Run ``train`` on every item of ``pending`` and yield each with its result as it
    finishes, so the caller judges one while others train: in this thread one after the
    other when ``slots`` is 1, else ``slots`` at a time in worker threads. When the caller
    is interrupted (Ctrl-C, a job's cancel) or a ``train`` raises, the items not started are
    dropped and ``interrupt()`` (the trainer's) stops those running before this raises."""
    if slots <= 1:
        for item in pending:
            yield item, train(item)
        return
    pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="candidate")
    running: dict[Future[R], T] = {pool.submit(train, item): item for item in pending}
    try:
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                yield running.pop(future), future.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        if interrupt is not None:
            interrupt()
        raise
    finally:
        pool.shutdown(wait=True)


def slots(candidates: int, runs_each: int, cores: int, backend: str) -> int:
    """Candidates trained at once: all of them on a jobs backend (it queues their runs on
    its own cores), else as many as ``cores`` hold with ``runs_each`` runs each."""
    if backend != "process":
        return candidates
    return max(1, min(candidates, cores // max(runs_each, 1)))


def pick(candidates: list[CandidateResult]) -> CandidateResult | None:
    """The candidate the iteration keeps: the best score (the first on a tie), else the
    first judged one when none has a score; None when none was trained."""
    judged = [c for c in candidates if c.judged and c.error is None]
    scored = [c for c in judged if c.score is not None]
    if scored:
        return max(scored, key=lambda c: c.score or 0.0)
    return judged[0] if judged else None


def promote(it: IterationRecord, winner: IterationRecord) -> None:
    """Copy ``winner``'s files into ``it`` (replacing any there), so everything that reads
    an iteration (its reward, runs, judgment, outcome, videos) reads the winner."""
    for path in winner.path.iterdir():
        target = it.path / path.name
        if target.is_dir():
            shutil.rmtree(target)
        if path.is_dir():
            shutil.copytree(path, target)
        else:
            shutil.copy2(path, target)


def table(candidates: list[CandidateResult], winner: str | None) -> str:
    """The candidates as numbers for the next proposals and the reviser: one line each,
    with the score and the per-term means of its training."""
    lines = ["Candidates of this iteration (score; per-term means):"]
    for c in candidates:
        score = "no score" if c.score is None else f"{c.score:.2f}"
        terms = ", ".join(f"{k} {v:+.3g}" for k, v in sorted(c.term_means.items()))
        mark = " (kept)" if c.name == winner else ""
        what = c.proposal or c.origin
        lines.append(f"- {c.name}{mark} {what}: {c.error or score}; {terms or 'no terms'}")
    return "\n".join(lines)
