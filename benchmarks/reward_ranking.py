"""How the embedded model chooses a movement objective for an intent (issue 38): ranking the
options by their mean token log-probability (``LLMClient.option_logprobs``), for 12 movement
intents, with several phrasings, with and without demonstrations, on the w16 and fp32
engines. The structured author uses the ``tail`` phrasing without demonstrations.

    python benchmarks/reward_ranking.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine_load import print_machine

from langmarl.llm import LLMClient, LLMConfig

INTENTS = [  # (intent, the right option: 0 forward, 1 backwards, 2 still)
    ("make the cheetah run backwards", 1), ("make the cheetah run forward", 0),
    ("make the cheetah stand still", 2), ("make the hopper hop forward", 0),
    ("make the swimmer swim forward fast", 0), ("make the swimmer swim backwards", 1),
    ("keep the pole balanced", 2), ("make the walker walk forward", 0),
    ("keep the humanoid from moving", 2), ("make the ant walk away from where it started", 0),
    ("move the cheetah in reverse", 1), ("do not move at all", 2),
]  # fmt: skip
PHRASINGS = {  # name: (prefix, the three options)
    "whole": ("Intent: {i}\n", [f"So the robot should{end}" for end in
              (" move forward.", " move backwards.", " stay still and not move.")]),
    "tail": ("Intent: {i}\nSo the robot should",
             [" move forward.", " move backwards.", " stay still and not move."]),
    "tail, short": ("Intent: {i}\nSo the robot should",
                    [" move forward.", " move backward.", " stay still."]),
    "direction": ("Intent: {i}\nDirection:", [" forward", " backward", " none, stay still"]),
}  # fmt: skip


def right(llm: LLMClient, prefix: str, options: list[str], demos: int = 0) -> int:
    """How many of :data:`INTENTS` the ranking gets right; with ``demos``, each prefix starts
    with that many other intents (the most word-alike) and their right answers."""

    def words(text: str) -> set[str]:
        return set(text.lower().split())

    count = 0
    for index, (intent, wanted) in enumerate(INTENTS):
        others = [pair for j, pair in enumerate(INTENTS) if j != index]
        others.sort(
            key=lambda p: -len(words(p[0]) & words(intent)) / len(words(p[0]) | words(intent))
        )
        shown = "".join(
            f"{prefix.format(i=t)}{options[k]}\n\n" for t, k in reversed(others[:demos])
        )
        scores = llm.option_logprobs(shown + prefix.format(i=intent), options)
        count += max(range(len(options)), key=lambda k: scores[k]) == wanted
    return count


def main() -> None:
    print_machine()
    for engine in ("w16", "transformers"):
        llm = LLMClient(
            LLMConfig.from_preset("local").with_overrides(extra_params={"engine": engine})
        )
        for name, (prefix, options) in PHRASINGS.items():
            print(f"{engine}: {name}: {right(llm, prefix, options)} of {len(INTENTS)}", flush=True)
    llm = LLMClient(LLMConfig.from_preset("local"))
    prefix, options = PHRASINGS["tail"]
    for demos in (1, 2, 3, 6):
        print(f"w16: tail, {demos} demonstrations: {right(llm, prefix, options, demos)} of 12")


if __name__ == "__main__":
    main()
