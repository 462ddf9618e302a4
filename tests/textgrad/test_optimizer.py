"""PolicyGradientOptimizer: gradients, aggregation, updates and their fallbacks."""

from langmarl.core.errors import LLMError
from langmarl.testing import ScriptedLLM, scripted_config
from langmarl.textgrad import PolicyGradientOptimizer
from langmarl.textgrad.prompts import FEEDBACK_HEADER


def _opt(replies: list, **kw: object) -> PolicyGradientOptimizer:
    return PolicyGradientOptimizer(scripted_config(), llm=ScriptedLLM(replies), **kw)  # type: ignore[arg-type]


def test_apply_gradient_replaces_the_feedback_section() -> None:
    once = PolicyGradientOptimizer.apply_gradient("Be helpful.", "Show work.")
    twice = PolicyGradientOptimizer.apply_gradient(once, "Check units.")
    assert twice == f"Be helpful.\n\n{FEEDBACK_HEADER}\nCheck units."
    assert twice.count(FEEDBACK_HEADER) == 1
    assert PolicyGradientOptimizer.apply_gradient(twice, "") == "Be helpful."


def test_static_aggregate_joins_with_markers() -> None:
    joined = PolicyGradientOptimizer.aggregate_gradients(["a", "", "b"])
    assert joined == "--- gradient 1 ---\na\n\n--- gradient 2 ---\nb"
    assert PolicyGradientOptimizer.aggregate_gradients(["only"]) == "only"


def test_generate_gradient_cuts_context() -> None:
    opt = _opt(["  Do X.  "])
    assert opt.generate_gradient("policy", "bad", "c" * 2000, agent_name="solver") == "Do X."
    prompt = opt.llm.backend.requests[0].messages[-1]["content"]
    assert "c" * 800 in prompt and "c" * 801 not in prompt and "solver" in prompt


async def test_llm_aggregation_and_its_fallback() -> None:
    assert await _opt(["merged rules"]).aaggregate(["a", "b"]) == "merged rules"
    single = _opt(["unused"])
    assert await single.aaggregate(["a"]) == "a" and single.llm.backend.requests == []
    failing = _opt([LLMError("scripted", "m", "down")])
    assert "--- gradient 2 ---" in await failing.aaggregate(["a", "b"])


async def test_rewrite_is_default_and_falls_back_to_append() -> None:
    update = await _opt(
        ["Here is the new prompt:\nYou solve math carefully, step by step."]
    ).aupdate_policy("Old.", "Be careful.", "solver")
    assert update.method == "rewrite"
    assert update.new_policy == "You solve math carefully, step by step."
    short = await _opt(["ok"]).aupdate_policy("Old.", "Be careful.", "solver")
    assert short.method == "append" and "too short" in (short.error or "")
    assert short.new_policy.endswith("Be careful.")
    failed = await _opt([LLMError("scripted", "m", "down")]).aupdate_policy("Old.", "g", "s")
    assert failed.method == "append" and "down" in (failed.error or "")
    kept = await _opt(["x"]).aupdate_policy("Old.", "  ", "s")
    assert kept.method == "kept" and kept.new_policy == "Old."


def test_rewrite_problems() -> None:
    from langmarl.textgrad.optimizer import rewrite_problem

    assert rewrite_problem("You are careful and check every step.", "stop") is None
    assert "cut off" in (rewrite_problem("You are careful and check every step.", "length") or "")
    assert "JSON" in (rewrite_problem('{"type": "system", "name": "x"}', "stop") or "")
    answer_not_prompt = "The final answer is 10. The team's performance was 10."
    assert "does not address" in (rewrite_problem(answer_not_prompt, "stop") or "")
    assert rewrite_problem("As the answerer, end with 'Answer: x'.", "stop", "answerer") is None
    assert rewrite_problem("Check your sums before answering.", "stop") is None
