"""The external-transition contract: CoMLRL's five arguments, one Branch record inside."""

from langmarl.magrpo.rollout import Branch, transition_from


def test_transition_from_passes_the_branch_as_one_record() -> None:
    seen: list[Branch] = []

    def next_prompts(branch: Branch) -> list[str]:
        seen.append(branch)
        return [f"{branch.prompt}|{h[-1]}" for h in branch.response_history]

    transition = transition_from(next_prompts)
    assert transition("p", ["a", "b"], 2, [["p0"], ["p1"]], [["x", "a"], ["b"]]) == [
        "p|a",
        "p|b",
    ]
    assert seen[0].prompt_history == (("p0",), ("p1",)) and seen[0].num_agents == 2
    assert transition("p", ["a", "b"], 2) == ["p|a", "p|b"]  # no histories: this turn's alone
    assert seen[1].response_history == (("a",), ("b",)) and seen[1].prompt_history == ((), ())
