"""Stop a run that cannot make progress instead of letting it "complete" on nothing.

A run whose LLM calls all fail (endpoint down, bad key, wrong model) would otherwise go on:
every episode scores 0, the critic has nothing to judge, checkpoints pile up and the run ends
``completed``. :func:`check_failures` ends it with :class:`RunFailedError` instead, before the
iteration is checkpointed, so training again with the same run id resumes that iteration.
"""

from __future__ import annotations

from collections.abc import Sequence

from langmarl.core.errors import RunFailedError


def check_failures(
    iteration: int, what: str, errors: Sequence[str | None], max_rate: float
) -> None:
    """Raise if too many of an iteration's ``what`` (episodes, evaluations, …) failed.

    Args:
        iteration: The iteration, for the message.
        what: What was counted, plural (``"episodes"``).
        errors: One entry per item: its error, or ``None``/``""`` if it succeeded.
        max_rate: The largest failed share allowed (``max_failure_rate``); all of them
            failing is never allowed.

    Raises:
        RunFailedError: naming the counts, the first error and what to do.
    """
    failed = [e for e in errors if e]
    if not failed:
        return
    if len(failed) < len(errors) and len(failed) / len(errors) <= max_rate:
        return
    raise RunFailedError(
        f"iteration {iteration + 1}: {len(failed)} of {len(errors)} {what} failed "
        f"(max_failure_rate {max_rate:g}); first error: {failed[0]}. Fix the cause (endpoint, "
        "API key, model name), then train again with the same run id: this iteration is "
        "resumed and the finished ones are kept"
    )
