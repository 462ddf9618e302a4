"""Text environments as MAGRPO rewards and between-turn transitions (the bridge sits on the
trainer's side: environments know nothing of the trainers that use them).

The MAGRPO trainer scores joint samples with ``reward_func(samples) -> rewards`` and builds
the next turn's prompts with an external transition
(:class:`~langmarl.core.transitions.ExternalTransition`, written here as a function of one
:class:`~langmarl.core.transitions.Branch`). These factories build both from text
environments, reading only the sample fields ``example``, ``completions`` and
``response_history`` of a :class:`~langmarl.magrpo.rollout.JointSample`:

- :func:`verifier_reward` / :func:`verifier_feedback`: a single-step task checked by any
  :class:`~langmarl.verifiers.BaseVerifier` (math, Python execution, exact match);
- :func:`tictactoe_reward` / :func:`tictactoe_transition`: multi-turn TicTacToe, where each
  turn's completion is one move. The optimal opponent is deterministic, so a branch's game
  is replayed exactly from that agent's moves so far.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langmarl.core.aio import run_sync
from langmarl.core.transitions import Branch, ExternalTransition, transition_from
from langmarl.envs.text.models import Action
from langmarl.envs.text.tictactoe import TicTacToeEnv
from langmarl.verifiers.base import BaseVerifier
from langmarl.verifiers.models import VerificationOutcome, VerificationResult

if TYPE_CHECKING:  # rollout loads torch: the contract only, so building a reward stays cheap
    from langmarl.magrpo.rollout import JointRewardFunction

ReferenceLookup = Mapping[str, str] | Callable[[str], str | None]


async def _verify_all(
    verifier: BaseVerifier, solutions: list[str], references: list[str | None]
) -> list[VerificationResult]:
    await verifier.setup()
    return await verifier.verify_batch(solutions, references)


def verifier_reward(
    verifier: BaseVerifier, *, answer_key: str = "final_answer", agent: int = -1
) -> JointRewardFunction:
    """A MAGRPO reward: 1.0 when ``agent``'s completion verifies against the example's answer.

    Args:
        verifier: Checks one completion against ``sample.example[answer_key]``.
        answer_key: Example field holding the reference answer.
        agent: Whose completion is the team's answer (default: the last agent's).
    """

    def reward(samples: Sequence[Any]) -> list[float]:
        solutions = [str(sample.completions[agent]) for sample in samples]
        references = [sample.example.get(answer_key) for sample in samples]
        results = run_sync(_verify_all(verifier, solutions, references))
        return [1.0 if r.status == VerificationOutcome.SUCCESS else 0.0 for r in results]

    return reward


def verifier_feedback(
    verifier: BaseVerifier, references: ReferenceLookup, *, agent: int = -1
) -> ExternalTransition:
    """A MAGRPO transition telling every agent whether the team's answer verified.

    Args:
        verifier: Checks ``agent``'s completion.
        references: The reference answer of each task prompt (mapping or function).
        agent: Whose completion is the team's answer.
    """
    lookup = references if callable(references) else references.get

    def next_prompts(branch: Branch) -> list[str]:
        answer = branch.completions[agent]
        (result,) = run_sync(_verify_all(verifier, [answer], [lookup(branch.prompt)]))
        verdict = "correct" if result.status == VerificationOutcome.SUCCESS else "not correct"
        reason = f" ({result.error_message})" if result.error_message else ""
        return [
            f"{branch.prompt}\n\nYour team's answer was:\n{answer}\n\nA checker found it {verdict}"
            f"{reason}. Give your improved answer."
            for _ in range(branch.num_agents)
        ]

    return transition_from(next_prompts)


async def _replay(moves: Sequence[str], play_style: str) -> tuple[TicTacToeEnv, float, bool]:
    env = TicTacToeEnv(play_style=play_style)  # type: ignore[arg-type]
    await env.reset()
    reward, done = 0.0, False
    for move in moves:
        if done:
            break
        _, reward, done, _ = await env.step(Action(llm_response=move))
    return env, float(reward), done


def tictactoe_reward(*, agent: int = 0, play_style: str = "optimal") -> JointRewardFunction:
    """A MAGRPO reward: the TicTacToe reward after replaying ``agent``'s moves on the branch.

    1 win, 0.5 draw, 0 loss or illegal last move, else the position's value for X. The
    opponent must be deterministic (``"optimal"``) for replays to be exact.
    """

    def reward(samples: Sequence[Any]) -> list[float]:
        values = []
        for sample in samples:
            moves = [*sample.response_history[agent], sample.completions[agent]]
            _, value, _ = run_sync(_replay(moves, play_style))
            values.append(value)
        return values

    return reward


def tictactoe_transition(*, agent: int = 0, play_style: str = "optimal") -> ExternalTransition:
    """A MAGRPO transition: the next prompt is the board after this branch's moves."""

    def next_prompts(branch: Branch) -> list[str]:
        moves = branch.response_history[agent]  # includes this turn's completion
        env, _, done = run_sync(_replay(moves, play_style))
        observation = env._get_terminal_observation() if done else env._get_next_observation()
        return [observation.question for _ in range(branch.num_agents)]

    return transition_from(next_prompts)
