import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.feedback import make_external
from langmarl.testing import ScriptedLLM

PROMPT = "def add(a, b):\n    pass"
TESTS = {PROMPT: ["assert add(1, 2) == 3", "assert add(0, 0) == 0", "assert add(2, 2) == 5"]}


def test_plain_shows_each_agent_its_own_history_for_any_number_of_agents():
    transition = make_external("plain")
    history = [["a1", "a2"], ["b1", "b2"], ["c1", "c2"]]
    result = transition(PROMPT, ["a2", "b2", "c2"], 3, [[], [], []], history)
    assert len(result) == 3
    assert "[turn 1] b1" in result[1] and "[turn 2] b2" in result[1] and "a1" not in result[1]
    assert all(r.startswith(PROMPT) for r in result)


def test_level_feedback_reports_syntax_and_test_results():
    transition = make_external("level_feedback", tests=TESTS, sandbox_slice="all")
    helper = "def aux(a, b):\n    return a + b"
    main = "def add(a, b):\n    return aux(a, b)"
    result = transition(PROMPT, [helper, main], 2)
    assert "agent 1: syntax ok, defines aux" in result[0]
    assert "`assert add(1, 2) == 3`: passed" in result[0]
    assert "`assert add(2, 2) == 5`: FAILED AssertionError" in result[1]


def test_level_feedback_syntax_error_and_slice():
    transition = make_external("level_feedback", tests=TESTS, sandbox_slice=1)
    result = transition(PROMPT, ["def aux(:", "def add(a, b): return 0"], 2)
    assert "agent 1: SyntaxError line 1" in result[0]
    assert result[0].count("test `") == 1  # only the first test ran
    negative = make_external("level_feedback", tests=TESTS, sandbox_slice=-1)
    assert "add(2, 2) == 5" in negative(PROMPT, ["", "def add(a, b): return 0"], 2)[0]


def test_expert_edits_asks_the_llm_with_the_team_code():
    expert = ScriptedLLM(["- return a + b instead of 0"])
    transition = make_external("expert_edits", expert=expert)
    result = transition(PROMPT, ["def aux(): pass", "def add(a, b): return 0"], 2)
    assert all("return a + b instead of 0" in r for r in result)
    request = expert.backend.requests[0]
    assert "def add(a, b): return 0" in str(request)


def test_unknown_mode_and_missing_tests():
    with pytest.raises(ConfigError, match="Did you mean 'plain'"):
        make_external("plane")
    with pytest.raises(ConfigError, match="needs tests="):
        make_external("level_feedback")


def _run_file(tmp_path, external):
    import json

    path = tmp_path / "run.json"
    path.write_text(json.dumps({"task": {"name": "coding"}, "external": external}))
    return path


def test_a_run_file_sets_the_expert_model(tmp_path, monkeypatch):
    from langmarl.llm import client
    from langmarl.magrpo.run import load_run_config

    config = load_run_config(
        _run_file(tmp_path, {"mode": "expert_edits", "expert_model": "gpt-4o-mini"})
    )
    assert config.external.expert_model == "gpt-4o-mini"
    built = []
    monkeypatch.setattr(
        client, "LLMClient", lambda llm, role: built.append((llm, role)) or ScriptedLLM(["e"])
    )
    transition = make_external("expert_edits", model=config.external.expert_model)
    assert built[0][0].model_string == "gpt-4o-mini" and built[0][1] == "expert"
    assert "e" in transition(PROMPT, ["x", "y"], 2)[0]
    make_external("expert_edits")  # no model: the embedded one
    assert built[1][0].provider == "local"


def test_the_expert_model_is_validated_when_the_run_file_loads(tmp_path):
    from langmarl.magrpo.run import load_run_config

    with pytest.raises(ConfigError, match="Did you mean 'gpt-4o-mini'"):
        load_run_config(_run_file(tmp_path, {"mode": "expert_edits", "expert_model": "gpt-4o-mni"}))
    with pytest.raises(ConfigError, match="only used by mode 'expert_edits'"):
        load_run_config(_run_file(tmp_path, {"mode": "plain", "expert_model": "gpt-4o-mini"}))
    with pytest.raises(ConfigError, match="not both"):
        make_external("expert_edits", expert=ScriptedLLM(["e"]), model="local")
