from pathlib import Path

from typer.testing import CliRunner

from langmarl.cli import build_app
from langmarl.p2p.reward.validation import check_static

CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "p2p"
runner = CliRunner()


def test_p2p_run_rejects_unknown_settings():
    result = runner.invoke(build_app(), ["p2p", "run", "run", "--set", "max_iteration=2"])
    assert result.exit_code != 0
    assert "Did you mean 'max_iterations'" in str(result.exception)


def test_p2p_bench_needs_an_existing_file(tmp_path: Path):
    result = runner.invoke(build_app(), ["p2p", "bench", str(tmp_path / "none.csv")])
    assert result.exit_code != 0 and "does not exist" in str(result.exception)


def test_shipped_configs_are_valid():
    from langmarl.cli.p2p_commands import loop_config
    from langmarl.p2p.bench.cases import read_cases
    from langmarl.p2p.learner.train_config import TrainConfig

    assert loop_config(None, None, None, {}, CONFIGS / "smoke.yaml").env_id == "InvertedPendulum-v5"
    config = loop_config(
        "Hopper-v5", 3, 10, {"train.n_epochs": 4}, CONFIGS / "halfcheetah_backwards.yaml"
    )
    assert (config.env_id, config.max_iterations, config.total_timesteps) == ("Hopper-v5", 3, 10)
    assert config.train == {"num_evals": 4, "eval_episodes": 5, "n_epochs": 4}
    assert TrainConfig.from_file(CONFIGS / "train_halfcheetah_tiny.json").total_timesteps == 4096
    cases = read_cases(CONFIGS / "cases.csv")  # tests/p2p/test_checks.py checks each case
    assert len(cases) == 8 and all(Path(c.check).is_file() for c in cases)
    assert check_static((CONFIGS / "references" / "halfcheetah_backwards.py").read_text()).ok


def _fake_loop(status: str):
    from langmarl.p2p.session.contracts import IterationResult, LoopResult

    calls = []

    def run_loop(intent, config, **kwargs):
        calls.append((intent, config, kwargs))
        step = IterationResult(
            iteration=1, iteration_id="iter_1", reward_origin="author", intent_score=0.8
        )
        return LoopResult(
            session_id="session_x", prompt=intent, env_id=config.env_id, status=status,
            best_iteration=1, best_score=0.8, iterations=[step],
        )  # fmt: skip

    return run_loop, calls


def test_p2p_run_passes_options_and_reports(monkeypatch, tmp_path: Path):
    fake, calls = _fake_loop("passed")
    monkeypatch.setattr("langmarl.p2p.session.loop.run_loop", fake)
    monkeypatch.setattr("langmarl.cli.p2p_commands._clients", lambda llm, vlm: (None, None))
    args = ["p2p", "run", "make the cheetah run backwards", "--env", "HalfCheetah-v5",
            "--iterations", "2", "--timesteps", "1000", "--runs-dir", str(tmp_path)]  # fmt: skip
    result = runner.invoke(build_app(), args)
    assert result.exit_code == 0, result.output
    intent, config, kwargs = calls[0]
    assert intent == "make the cheetah run backwards"
    assert (config.max_iterations, config.total_timesteps) == (2, 1000)
    assert config.runs_dir == str(tmp_path) and kwargs["vlm"] is None
    assert "passed" in result.output and "best: iter_1" in result.output


def test_p2p_run_exits_nonzero_on_invalid_code(monkeypatch, tmp_path: Path):
    fake, _ = _fake_loop("invalid_code")
    monkeypatch.setattr("langmarl.p2p.session.loop.run_loop", fake)
    monkeypatch.setattr("langmarl.cli.p2p_commands._clients", lambda llm, vlm: (None, None))
    result = runner.invoke(build_app(), ["p2p", "run", "x", "--runs-dir", str(tmp_path)])
    assert result.exit_code == 1 and "invalid_code" in result.output


def test_p2p_bench_reports_groups(monkeypatch, tmp_path: Path):
    import json

    fake, calls = _fake_loop("passed")
    monkeypatch.setattr("langmarl.p2p.session.loop.run_loop", fake)
    monkeypatch.setattr("langmarl.cli.p2p_commands._clients", lambda llm, vlm: (None, None))
    cases = tmp_path / "cases.csv"
    cases.write_text(
        "env_id,instruction,category,difficulty\nHopper-v5,hop,locomotion,easy\nSwimmer-v5,swim,locomotion,hard\n"
    )
    result = runner.invoke(build_app(), ["p2p", "bench", str(cases), "--runs-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert [c[1].env_id for c in calls] == ["Hopper-v5", "Swimmer-v5"]
    (bench_json,) = tmp_path.glob("bench_*/bench.json")
    summary = json.loads(bench_json.read_text())["summary"]
    assert summary["category=locomotion"] == {"cases": 2, "success_rate": 1.0, "mean_score": 0.8}
    assert json.loads(bench_json.read_text())["complete"] is True
    assert "difficulty=hard" in result.output


def test_p2p_bench_limit_and_a_stop_keep_the_finished_cases(monkeypatch, tmp_path: Path):
    import json

    fake, calls = _fake_loop("passed")

    def stopped_on_the_second(intent, config, **kwargs):
        if calls:
            raise KeyboardInterrupt
        return fake(intent, config, **kwargs)

    monkeypatch.setattr("langmarl.cli.p2p_commands._clients", lambda llm, vlm: (None, None))
    cases = tmp_path / "cases.csv"
    rows = "".join(f"Hopper-v5,hop {i},locomotion,easy\n" for i in range(3))
    cases.write_text("env_id,instruction,category,difficulty\n" + rows)

    monkeypatch.setattr("langmarl.p2p.session.loop.run_loop", fake)
    args = ["p2p", "bench", str(cases), "--limit", "2", "--runs-dir", str(tmp_path / "a")]
    assert runner.invoke(build_app(), args).exit_code == 0
    assert [c[0] for c in calls] == ["hop 0", "hop 1"]

    calls.clear()
    monkeypatch.setattr("langmarl.p2p.session.loop.run_loop", stopped_on_the_second)
    args = ["p2p", "bench", str(cases), "--runs-dir", str(tmp_path / "b")]
    assert runner.invoke(build_app(), args).exit_code != 0
    (bench_json,) = (tmp_path / "b").glob("bench_*/bench.json")
    saved = json.loads(bench_json.read_text())
    assert saved["complete"] is False and [c["case"]["instruction"] for c in saved["cases"]] == [
        "hop 0"
    ]


def test_p2p_resume_finishes_a_killed_session_and_refuses_a_finished_one(monkeypatch, tmp_path):
    from langmarl.testing import ScriptedLLM

    from .conftest import FakeTrainer
    from .test_loop import replies, validator
    from .test_session_resume import KillingTrainer, _killed

    session = _killed(tmp_path, ScriptedLLM(replies("SCORE: 0.2")), KillingTrainer(kill_on=2))
    llm = ScriptedLLM(replies("SCORE: 0.2"))
    monkeypatch.setattr("langmarl.cli.p2p_commands._clients", lambda llm_, vlm: (llm, None))
    monkeypatch.setattr("langmarl.p2p.session.resume.default_validator", validator)
    monkeypatch.setattr("langmarl.p2p.session.resume.default_trainer", lambda config: FakeTrainer())
    done = runner.invoke(build_app(), ["p2p", "resume", str(session.path)])
    assert done.exit_code == 0, done.output
    assert "max_iterations" in done.output and "iter_3: reward=revision" in done.output
    again = runner.invoke(build_app(), ["p2p", "resume", str(session.path)])
    assert again.exit_code != 0
    assert "already ended (max_iterations)" in str(again.exception)


def test_p2p_run_uses_the_configs_llm(tmp_path: Path, monkeypatch):
    """A session config names its model (how a job or ``POST /api/sessions`` chooses it):
    here a hosted preset whose key variable is unset, so the first call fails naming that
    variable, before any session directory is made."""
    monkeypatch.delenv("LANGMARL_TEST_NO_SUCH_KEY", raising=False)
    config = tmp_path / "session.yaml"
    config.write_text(
        "env_id: InvertedPendulum-v5\nmax_iterations: 1\n"
        "llm: {preset: gpt-4o-mini, api_key_env_var: LANGMARL_TEST_NO_SUCH_KEY}\n"
    )
    runs = tmp_path / "runs"
    args = ["p2p", "run", "balance", str(config), "--runs-dir", str(runs)]
    result = runner.invoke(build_app(), args)
    assert result.exit_code != 0 and "LANGMARL_TEST_NO_SUCH_KEY" in str(result.exception)
    assert not runs.exists() or not any(runs.iterdir())
