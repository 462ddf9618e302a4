from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.p2p.bench.cases import BenchCase, CaseOutcome, read_cases, summarize


def test_read_cases(tmp_path: Path):
    path = tmp_path / "cases.csv"
    path.write_text(
        "env_id,instruction,category,difficulty\nHalfCheetah-v5,run backwards,locomotion,easy\n"
    )
    assert read_cases(path) == [
        BenchCase(
            env_id="HalfCheetah-v5",
            instruction="run backwards",
            category="locomotion",
            difficulty="easy",
        )
    ]
    path.write_text("env,instruction\nx,y\n")
    with pytest.raises(ConfigError, match="env_id"):
        read_cases(path)
    path.write_text("env_id,instruction\n")
    with pytest.raises(ConfigError, match="no cases"):
        read_cases(path)


def test_summarize_groups():
    def outcome(category: str, status: str, score: float | None) -> CaseOutcome:
        case = BenchCase(env_id="e", instruction="i", category=category, difficulty="easy")
        return CaseOutcome(case=case, session_id="s", status=status, best_score=score)

    summary = summarize(
        [
            outcome("a", "passed", 0.9),
            outcome("a", "max_iterations", 0.3),
            outcome("b", "error", None),
        ]
    )
    assert summary["all"] == {
        "cases": 3,
        "success_rate": pytest.approx(1 / 3),
        "mean_score": pytest.approx(0.4),
    }
    assert summary["category=a"]["success_rate"] == 0.5
    assert summary["difficulty=easy"]["cases"] == 3
