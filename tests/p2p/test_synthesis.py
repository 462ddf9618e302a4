"""Judges run concurrently, and their verdicts become one judgment by the strategy the session
config names (mean, veto, an LLM that reconciles them), recorded in every iteration."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from langmarl.llm.types import ChatRequest
from langmarl.p2p.agents import judge
from langmarl.p2p.agents.synthesis import synthesize
from langmarl.p2p.reward.env_specs import get_env_spec
from langmarl.p2p.session.contracts import JudgeScore
from langmarl.testing import ScriptedLLM

from .test_loop import _run, replies

SCORES = [JudgeScore(judge="code", score=0.9, reason="fast"),
          JudgeScore(judge="summary", score=0.5, reason="wobbly")]  # fmt: skip


class InFlight:
    """Counts calls in flight; each call waits a little so that overlapping ones meet."""

    def __init__(self) -> None:
        self.now = self.most = 0
        self.lock = threading.Lock()

    def judge(self, name: str, score: float) -> Any:
        def call(*args: Any, **kwargs: Any) -> JudgeScore:
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
            time.sleep(0.3)
            with self.lock:
                self.now -= 1
            return JudgeScore(judge=name, score=score, reason=name)

        return call


@pytest.mark.parametrize(("workers", "overlap"), [(3, 3), (2, 2), (1, 1)])
def test_the_judges_of_an_iteration_run_concurrently_bounded(
    workers: int, overlap: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flight = InFlight()
    monkeypatch.setattr(judge, "run_code_judge", flight.judge("code", 0.8))
    monkeypatch.setattr(judge, "summary_judge", flight.judge("summary", 0.6))
    monkeypatch.setattr(judge, "vlm_judge", flight.judge("vlm", 0.4))
    video = tmp_path / "median.mp4"
    video.write_bytes(b"not read: the vlm judge is a stub")
    vlm = SimpleNamespace(config=SimpleNamespace(is_multimodal=True, name="stub-vlm"))
    scores = judge.judge_run(
        ScriptedLLM(["unused"]), "balance", "- up", get_env_spec("InvertedPendulum-v5"), {},
        judge_code="def judge_fn(t, s): return 1.0", use_summary=True, vlm=vlm,  # type: ignore[arg-type]
        video=video, workers=workers,
    )  # fmt: skip
    assert flight.most == overlap  # calls in flight at once, counted (not wall time)
    assert [s.judge for s in scores] == ["code", "summary", "vlm"]


def test_mean_veto_and_llm_synthesis() -> None:
    mean = synthesize(SCORES, [], threshold=0.7)
    assert (mean.intent_score, mean.passed, mean.synthesis) == (0.7, True, "mean")
    veto = synthesize(SCORES, [], threshold=0.7, strategy="veto")
    assert (veto.intent_score, veto.passed) == (0.5, False) and "vetoed" in veto.failure_tags
    assert "[veto] summary scored 0.50" in veto.diagnosis
    llm = ScriptedLLM(["SCORE: 0.8\nREASON: the code judge measured it"])
    reconciled = synthesize(SCORES, [], 0.7, "llm", llm=llm, intent="run", criteria="- fast")
    assert (reconciled.intent_score, reconciled.passed) == (0.8, True)
    assert "[reconciled] the code judge measured it" in reconciled.diagnosis
    broken = synthesize(SCORES, [], 0.7, "llm", llm=ScriptedLLM(["I cannot say"]))
    assert broken.intent_score == 0.7 and "synthesis_fallback" in broken.failure_tags
    nothing = synthesize([JudgeScore(judge="code", reason="crashed")], [], 0.7, "veto")
    assert (nothing.intent_score, nothing.passed) == (0.0, False)


def test_the_loop_uses_and_records_the_configured_synthesis(tmp_path: Path) -> None:
    base = replies("SCORE: 0.9")

    def reply(request: ChatRequest) -> str:
        system = str(request.messages[0]["content"])
        return (
            "SCORE: 0.35\nREASON: reconciled low" if "Several judges" in system else base(request)
        )

    result, _, session = _run(tmp_path, ScriptedLLM(reply), synthesis="llm", max_iterations=1)
    judgment = session.iteration_records()[0].read_judgment()
    assert judgment is not None and judgment.synthesis == "llm"
    assert judgment.intent_score == pytest.approx(0.35) and not judgment.passed
    assert result.status == "max_iterations"
