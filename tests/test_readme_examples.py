"""Every example of the README and the docs says how it runs, and the quick ones run as written
(issues 17 and 28).

Each fenced block of README.md and of every page under docs/ carries a marker
(``langmarl/testing/readme.py``); a block without one fails here. Each quick block runs in its
own temporary directory holding a copy of the repository's ``configs/`` and a ``.venv`` link to
the venv the tests run in, as a reader who jumps to that section would paste it into a shell
(bash blocks) or a Python file (python blocks) in a fresh clone, offline on the embedded model:
no block may rely on what another left behind, and so the blocks can run in parallel. A python
block runs as a file would in that directory, but in the test's own interpreter (the venv's):
its imports and the embedded model, which langmarl keeps once per process
(``shared_engine``), are loaded once per worker instead of once per block (~5 CPU-s each).
``langmarl`` is not on the ``PATH`` the blocks get: a shell block activates the venv itself (its
first line), as a reader's new shell needs. Each must exit 0 and leave the evidence ``CHECKS``
names: a quick block without a check fails too, so a new quick example must say what it shows.
A block that appears on several pages (the README's examples are also in the guides) runs once.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from langmarl.store.catalog import find_runs
from langmarl.store.run import RunDir
from langmarl.testing.readme import (
    ACTIVATE,
    Example,
    ReadmeExampleError,
    activates_venv,
    documented_examples,
    example_pages,
    needs_venv,
    parse_examples,
    unset_variables,
)

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
VENV = Path(sys.prefix)


def _examples() -> list[Example]:
    return documented_examples(REPO)


def _without_comments(code: str) -> str:
    """``code`` with its ``  # …`` line ends and comment lines dropped: two blocks that differ
    only in what their comments say run the same commands."""
    lines = (re.sub(r"(^|\s+)#(?![!{]).*$", "", line).rstrip() for line in code.splitlines())
    return "\n".join(line for line in lines if line)


def _unique_quick() -> list[Example]:
    """The quick examples, each distinct block once (its first page names it; blocks that
    differ only in their comments are one block)."""
    seen: dict[str, Example] = {}
    for example in _examples():
        if example.kind == "quick":
            seen.setdefault(_without_comments(example.code), example)
    return list(seen.values())


try:
    QUICK = _unique_quick()
except ReadmeExampleError:
    QUICK = []  # test_every_block_is_marked reports why
TIMEOUT_S = 600  # a safety net: 5x the slowest quick block (96 s quiet)


def _completed(run_dir: Path) -> None:
    """``run_dir`` holds a run whose ``run.json`` says ``completed``."""
    assert RunDir(run_dir).record().status == "completed", run_dir


def _llm(work: Path, out: str) -> None:
    assert re.search(r"^local: 1 calls, \d+ in \+ \d+ out", out, re.MULTILINE), out
    assert out.rstrip().endswith("\n3"), out


def _language_cli(work: Path, out: str) -> None:
    _completed(work / "runs/quick")
    assert "iteration 1: avg reward" in out
    assert list((work / "runs/quick/evals").glob("test_*.json")), "no eval written"
    # `langmarl runs`: the only language run so far, completed, on one line of its table
    assert re.search(r"^quick\s+language\s+completed\s+1/1 iter\.", out, re.MULTILINE), out[-2000:]
    header, *rows = (work / "quick.csv").read_text().splitlines()  # `langmarl runs export`
    assert header.startswith("step,") and len(rows) == 1, (header, rows)


def _language_python(work: Path, out: str) -> None:
    _completed(work / "runs/quick-py")
    assert re.search(r"^1 iteration, avg reward \d", out, re.MULTILINE), out


def _text_envs(work: Path, out: str) -> None:
    assert out.splitlines()[-2:] == ["1.0 True", "False"], out


def _pistonball_ramp(work: Path, out: str) -> None:
    assert (work / "out.gif").stat().st_size > 10_000


def _magrpo_cli(work: Path, out: str) -> None:
    run = work / "runs/writing-quick"
    _completed(run)
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 1
    assert "Nothing to resume: 'runs/writing-quick' holds a finished run" in out, out[-2000:]


def _magrpo_python(work: Path, out: str) -> None:
    metrics = (work / "runs/magrpo-quick/metrics.jsonl").read_text().splitlines()
    assert len(metrics) == 1 and json.loads(metrics[0])["step"] in (0, 1)


def _p2p_cli(work: Path, out: str) -> None:
    sessions = sorted((work / "runs").glob("session_*/iter_1/policy.safetensors"))
    assert sessions, "no trained policy in runs/session_*/iter_1"
    assert "session dir: runs/session_" in out and "mean env return:" in out, out[-2000:]
    line = r"^Intent score \(check\): [01]\.\d\d at iter_1 \(n=3 episodes; 95% CI "
    assert re.search(line, out, re.MULTILINE), out[-2000:]  # the check scored the policy


def _p2p_bench(work: Path, out: str) -> None:
    (bench,) = (work / "runs").glob("bench_*/bench.json")
    saved = json.loads(bench.read_text())
    assert saved["complete"] is True and len(saved["cases"]) == 1, saved
    assert saved["cases"][0]["case"]["env_id"] == "HalfCheetah-v5"
    assert "case 1:" in out and "category=locomotion" in out, out[-2000:]


def _parl_grpo(work: Path, out: str) -> None:
    _completed(work / "runs/parl_grpo_tiny")
    assert (work / "runs/parl_grpo_tiny/model").is_dir()
    assert out.count("PARL curve") == 2, out[-2000:]  # printed by `grpo`, then by `curves`


def _parl_python(work: Path, out: str) -> None:
    _completed(work / "runs/parl-quick")
    assert (work / "runs/parl-quick/parl_curves.json").is_file()


def _tracked(work: Path, out: str) -> None:
    _completed(work / "runs/tracked-quick")
    assert list((work / "runs/tracked-quick/tensorboard").rglob("events.out.tfevents.*"))


def _jobs(work: Path, out: str) -> None:
    records = [json.loads(p.read_text()) for p in (work / "runs/.jobs").glob("*.json")]
    assert [r["state"] for r in records] == ["completed"], records
    _completed(work / records[0]["run_dir"])  # absolute or relative to the workdir


def _p2p_executor(work: Path, out: str) -> None:
    run_dir = work / out.strip().splitlines()[-1]  # the executor prints the run directory
    assert (work / "runs") in run_dir.parents, out[-2000:]
    assert (run_dir / "summary.json").is_file(), sorted(p.name for p in run_dir.iterdir())


# A line of each quick block's code -> what the block must leave behind beyond exit code 0.
CHECKS: dict[str, Callable[[Path, str], None]] = {
    'LLMConfig.from_preset("local")': _llm,
    "--run-id quick --set num_iterations=1": _language_cli,
    'run_id="quick-py"': _language_python,
    "SingleStepEnv(StaticDataset": _text_envs,
    "--policy ramp": _pistonball_ramp,
    "run_id=writing-quick": _magrpo_cli,
    'output_dir="runs/magrpo-quick"': _magrpo_python,
    "smoke.yaml --iterations 1 --timesteps 512": _p2p_cli,
    "smoke.yaml --limit 1 --iterations 1": _p2p_bench,
    "configs/parl/grpo_tiny.json": _parl_grpo,
    'run_id="parl-quick"': _parl_python,
    "runs/tracked-quick": _tracked,
    "langmarl jobs submit magrpo": _jobs,
    "python -m langmarl.p2p.learner.executor": _p2p_executor,
}


def _check_for(example: Example) -> Callable[[Path, str], None]:
    found = [check for key, check in CHECKS.items() if key in example.code]
    assert len(found) == 1, (
        f"{example.name}: {len(found)} entries of CHECKS match this quick block; "
        "add one that says what the block must show"
    )
    return found[0]


def test_every_block_of_the_readme_and_the_docs_is_marked() -> None:
    examples = _examples()  # raises naming the page and line of the first unmarked block
    lines = [line for page in example_pages(REPO) for line in page.read_text().splitlines()]
    fences = len([line for line in lines if line.startswith("```")]) // 2
    assert len(examples) == fences > 50
    pages = {example.page for example in examples}
    assert {"README.md", "docs/language_space.md", "docs/weight_space.md"} <= pages, pages
    assert QUICK, "no quick example: the examples test would run nothing"


def test_the_test_command_is_described_once_and_its_count_is_current(
    request: pytest.FixtureRequest,
) -> None:
    """Issue 42, item 8: the README and the getting-started page gave different test counts
    and times. Both carry the same marker, and its count is within 10% of the tests this
    session collected (every xdist worker collects the whole suite)."""
    second = parse_examples(README.read_text(encoding="utf-8"))[1]
    guide = [e for e in _examples() if e.page == "docs/getting-started.md"]
    same = [e for e in guide if e.code == "python3 dev.py test\n"]
    assert len(same) == 1 and same[0].note == second.note, (second.note, same)
    stated = re.search(r"\(([\d,]+) tests;", second.note)
    assert stated and "AMD EPYC" in second.note, second.note  # the CPU it was measured on
    collected = len(request.session.items)
    if collected > 1000:  # the whole suite (not a file or a -k selection run alone)
        assert abs(int(stated[1].replace(",", "")) - collected) <= 0.1 * collected, collected


def test_blocks_differing_only_in_comments_run_once() -> None:
    """The README's language-space block is also in the guide with another comment."""
    readme = "langmarl runs export quick quick.csv   # or .jsonl\n# a note\nls\n"
    guide = "langmarl runs export quick quick.csv   # the run's metrics as CSV\nls\n"
    assert _without_comments(readme) == _without_comments(guide)
    assert _without_comments("echo $#\nls\n") != _without_comments("echo\nls\n")
    names = [example.name for example in QUICK]
    assert "README.md:L70-bash" in names and "docs/language_space.md:L56-bash" not in names


def test_the_readme_opens_with_the_two_commands() -> None:
    """The two commands come first, with their markers (issue 28)."""
    first, second = parse_examples(README.read_text(encoding="utf-8"))[:2]
    assert (first.code, first.kind) == ("python3 dev.py quickstart\n", "slow")
    assert (second.code, second.kind) == ("python3 dev.py test\n", "slow")
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250, "the README stays short"


def test_every_quick_block_has_exactly_one_check_and_every_check_a_block() -> None:
    for example in QUICK:
        _check_for(example)
    unused = [key for key in CHECKS if not any(key in example.code for example in QUICK)]
    assert unused == [], f"CHECKS entries matching no quick block: {unused}"


def test_no_example_leans_on_an_environment_variable_it_does_not_name() -> None:
    """A variable an example reads is set in the block, or the block is a ``needs`` block
    that names it; shell blocks that run langmarl activate the venv themselves."""
    wrong = []
    for example in _examples():
        if example.kind == "fragment":
            continue
        unset = unset_variables(example, REPO)
        if example.kind in ("quick", "slow") and unset:
            wrong.append(f"{example.name} reads {sorted(unset)}: set it in the block or mark "
                         "it `<!-- example: needs NAME -->`")  # fmt: skip
        if example.kind == "needs" and [v for v in unset if v not in example.note]:
            wrong.append(f"{example.name} reads {sorted(unset)}: name it in the marker")
        if needs_venv(example) and not activates_venv(example):
            wrong.append(f"{example.name} runs langmarl: start the block with `{ACTIVATE}`")
    assert wrong == []


def test_an_unset_variable_or_a_missing_activation_is_found() -> None:
    def block(code: str, language: str = "bash") -> Example:
        return Example(1, language, code, "quick", "")

    assert unset_variables(block('curl -H "$TOKEN" x\n'), REPO) == {"TOKEN"}
    assert unset_variables(block('export TOKEN=abc\ncurl -H "$TOKEN" x\n'), REPO) == set()
    assert unset_variables(block("import os\nos.environ['HOME']\n", "python"), REPO) == {"HOME"}
    hosted = block("langmarl train configs/language_task/math_central_credit.json\n")
    assert unset_variables(hosted, REPO) == {"OPENAI_API_KEY"}  # the config's gpt-4o-mini
    assert unset_variables(block("langmarl chat hi --llm local\n"), REPO) == set()
    assert needs_venv(block("langmarl runs\n")) and not activates_venv(block("langmarl runs\n"))
    assert activates_venv(block(f"{ACTIVATE}\nlangmarl runs\n"))
    assert not needs_venv(block("python3 dev.py test\n"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("intro\n```bash\nls\n```\n", "README.md: line 2: the code block has no marker"),
        ("<!-- example: fast -->\n```bash\nls\n```\n", "unknown example kind 'fast'"),
        ("<!-- example: slow -->\n```bash\nls\n```\n", "states its measured duration"),
        ("<!-- example: slow, a while -->\n```\nx\n```\n", "states its measured duration"),
        ("<!-- example: needs -->\n```bash\nls\n```\n", "say what the example needs"),
        (
            "<!-- example: quick -->\n```bash\nls\n",
            "README.md: line 2: this ``` fence is never closed",
        ),
    ],
)
def test_a_bad_marker_names_the_line_and_the_fix(text: str, message: str) -> None:
    with pytest.raises(ReadmeExampleError, match=re.escape(message)):
        parse_examples(text)


def test_markers_are_read_with_their_notes() -> None:
    text = (
        "<!-- example: slow, ~2.5 min -->\n```bash\nsleep 150\n```\n\n"
        "<!-- example: needs OPENAI_API_KEY -->\n```python\nimport os\n```\n"
        "<!-- example: fragment -->\n```\nout\n```\n"
    )
    assert [(e.line, e.language, e.kind, e.note, e.code) for e in parse_examples(text)] == [
        (2, "bash", "slow", "~2.5 min", "sleep 150\n"),
        (7, "python", "needs", "OPENAI_API_KEY", "import os\n"),
        (11, "", "fragment", "", "out\n"),
    ]


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A reader's fresh clone, as far as an example can tell: configs/ and the venv.

    Made beside the repository, not under /tmp: the sandbox that confines Prompt2Policy's PPO
    processes lays an empty tmpfs over /tmp, so a session under /tmp cannot reach its files.
    """
    work = Path(tempfile.mkdtemp(prefix=".readme-examples-", dir=REPO))
    shutil.copytree(REPO / "configs", work / "configs")
    (work / ".venv").symlink_to(VENV, target_is_directory=True)
    yield work
    shutil.rmtree(work, ignore_errors=True)


def _reader_path() -> str:
    """``PATH`` without the venv: a block that runs langmarl has to activate it itself."""
    venv_bin = str(VENV / "bin")
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv_bin)


def _run_shell(example: Example, workdir: Path) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of a shell block run by ``bash -e`` in ``workdir``."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PATH=_reader_path())
    env.pop("VIRTUAL_ENV", None)
    env.pop("OPENAI_API_KEY", None)  # quick examples run offline, on the embedded model
    done = subprocess.run(
        ["bash", "-e", "-c", example.code],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    return done.returncode, done.stdout, done.stderr


def _run_python(
    example: Example, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of a python block run as ``__main__`` in this interpreter
    with ``workdir`` as the current directory (as ``python block.py`` there would)."""
    monkeypatch.chdir(workdir)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # offline, on the embedded model
    out, err, code = io.StringIO(), io.StringIO(), 0
    # the safety net a subprocess's timeout was: a hung block ends this worker, tracebacks shown
    faulthandler.dump_traceback_later(TIMEOUT_S, exit=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(compile(example.code, example.name, "exec"), {"__name__": "__main__"})
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        except Exception:
            traceback.print_exc()
            code = 1
        finally:
            faulthandler.cancel_dump_traceback_later()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("example", QUICK, ids=[example.name for example in QUICK])
def test_quick_example_runs_as_written(
    example: Example, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check = _check_for(example)
    if example.language == "bash":
        code, stdout, stderr = _run_shell(example, workdir)
    else:
        code, stdout, stderr = _run_python(example, workdir, monkeypatch)
    output = stdout + stderr
    assert code == 0, f"{example.name} failed:\n{output[-3000:]}"
    check(workdir, stdout)
    # every run the block made is where `langmarl dashboard` (no flags) and `langmarl runs` look
    outside = [r.path for r in find_runs(workdir) if workdir / "runs" not in r.path.parents]
    assert not outside, f"{example.name} wrote runs outside runs/: {outside}"
