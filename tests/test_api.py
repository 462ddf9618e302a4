"""`langmarl.train(config_path, **overrides)` end to end over a real HTTP test server."""

import json
from pathlib import Path

import langmarl
from langmarl.testing.openai_stub import OpenAIStub
from langmarl.testing.roles import role_responder

_reply = role_responder(
    {
        "critic": '{"researcher": "quote the fact", "answerer": "answer in one word"}',
        "rewrite": "You answer with one word after quoting the fact from the context.",
        "gradient": "Quote the fact, then answer in one word.",
        "aggregate": "Quote the fact, then answer in one word.",
        "actor": "Answer: Paris",
    }
)


def test_train_runs_resumes_and_applies_overrides(tmp_path: Path) -> None:
    with OpenAIStub(responder=_reply) as stub:
        config = tmp_path / "c.json"
        config.write_text(
            json.dumps(
                {
                    "env": "language",
                    "exp_name": "api",
                    "num_iterations": 5,
                    "trajectories_per_iteration": 2,
                    "llm": stub.llm_config(),
                    "seed": 0,
                    "runs_dir": str(tmp_path / "runs"),
                    "checkpoint_dir": str(tmp_path / "ck"),
                }
            )
        )
        metrics = langmarl.train(config, num_iterations=1, **{"llm.max_tokens": 32})
        assert [m["iteration"] for m in metrics] == [0]
        assert metrics[0]["num_episodes"] == 2
        assert set(metrics[0]["usage_by_role"]) >= {"actor", "critic", "optimizer"}
        assert all(b.get("max_tokens") == 32 for b in stub.bodies)
        requests = len(stub.bodies)
        validation = 2 * metrics[0]["validation_episodes"]  # 2 actor calls per episode
        metrics = langmarl.train(config, num_iterations=2)  # resumes: one more iteration
        assert [m["iteration"] for m in metrics] == [0, 1]
        # the same calls, minus validation: iteration 1 proposes the policies it already has
        assert len(stub.bodies) - requests == requests - validation
        other = langmarl.train(config, num_iterations=1, run_id="other")
        assert len(other) == 1
    runs = {p.name for p in (tmp_path / "runs").iterdir()}
    assert runs == {"api", "other"}
    policies = (tmp_path / "runs" / "api" / "policies" / "iter_0002" / "answerer.txt").read_text()
    assert "one word" in policies
