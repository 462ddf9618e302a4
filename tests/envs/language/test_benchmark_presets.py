"""The benchmark presets: Hugging Face datasets by name, a local copy through
``--set benchmark_path=``, and an error that says how to get the data when neither is there.

The local copies are tiny files the test writes in each benchmark's own row format (GSM8K
``test.jsonl``, HumanEval ``HumanEval.jsonl``, HotpotQA dev distractor): a test never reads
outside the repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langmarl.config.envs import LanguageTaskConfig
from langmarl.config.loading import load_config
from langmarl.core.errors import ConfigError
from langmarl.envs.language.datasets import HUB_DATASETS, HUB_PREFIX, convert_row, load_tasks
from langmarl.envs.language.env import LanguageEnv

REPO = Path(__file__).parents[3]
PRESETS = sorted((REPO / "configs" / "language_task").glob("*.json"))
LOCAL_COPY = {"hf:openai/gsm8k": "gsm8k", "hf:openai/openai_humaneval": "humaneval",
              "hf:hotpotqa/hotpot_qa": "hotpotqa"}  # fmt: skip


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No hub, and an empty datasets cache."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    # the libraries read the variables once, at import: when another test imported them
    # first, only their module constants say offline (else every load retries for ~23 s)
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)


def test_every_preset_names_a_known_hub_dataset_not_a_local_path() -> None:
    assert len(PRESETS) == 6
    for preset in PRESETS:
        path = json.loads(preset.read_text(encoding="utf-8"))["benchmark_path"]
        assert path.startswith(HUB_PREFIX) and path.removeprefix(HUB_PREFIX) in HUB_DATASETS
        assert path in LOCAL_COPY, preset.name


@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.stem)
def test_a_preset_loads_a_local_copy_given_with_set(preset: Path, benchmark_copies: Path) -> None:
    hub = json.loads(preset.read_text(encoding="utf-8"))["benchmark_path"]
    local = benchmark_copies / LOCAL_COPY[hub]
    config = load_config(preset, {"benchmark_path": str(local), "data_limit": 20})
    assert isinstance(config, LanguageTaskConfig)
    tasks = [task for split in LanguageEnv(config).splits.values() for task in split]
    assert len(tasks) == 20 and {t["task_type"] for t in tasks} == {config.task_type}
    needed = {"math": "ground_truth", "qa": "context", "coding": "test"}[config.task_type]
    assert all(t[needed] for t in tasks)


@pytest.mark.parametrize("dataset_id", sorted(HUB_DATASETS))
def test_offline_without_cache_says_how_to_get_the_data(dataset_id: str, offline: None) -> None:
    with pytest.raises(ConfigError) as caught:
        load_tasks("math", f"{HUB_PREFIX}{dataset_id}", data_limit=5)
    message = str(caught.value)
    assert f"Benchmark {dataset_id!r} could not be loaded from the Hugging Face Hub" in message
    assert "--set benchmark_path=PATH" in message
    assert f"https://huggingface.co/datasets/{dataset_id}" in message
    assert HUB_DATASETS[dataset_id].file_format in message


def test_an_offline_preset_fails_at_env_creation_with_that_message(offline: None) -> None:
    config = load_config(REPO / "configs" / "language_task" / "math_central_credit.json")
    assert isinstance(config, LanguageTaskConfig)
    with pytest.raises(ConfigError, match=r"'openai/gsm8k'.*--set benchmark_path=PATH"):
        LanguageEnv(config)


def test_the_hf_route_loads_and_converts_through_datasets(offline: None, tmp_path: Path) -> None:
    """``hf:`` goes through ``datasets.load_dataset`` (which also resolves local dataset
    directories): a local Parquet dataset stands in for the hub, which tests cannot reach."""
    import datasets

    rows = [{"question": f"What is {i} + 1?", "answer": f"{i} + 1 = {i + 1}\\n#### {i + 1}"}
            for i in range(3)]  # fmt: skip
    source = tmp_path / "gsm8k_like"
    datasets.Dataset.from_list(rows).to_parquet(str(source / "test.parquet"))
    tasks = load_tasks("math", f"{HUB_PREFIX}{source}", data_limit=None)
    assert [t["ground_truth"] for t in tasks] == ["1", "2", "3"]


def test_hub_rows_convert_like_the_local_files() -> None:
    """HotpotQA on the hub stores its context as columns, the JSONL files as pairs."""
    columns = {"title": ["T", "U"], "sentences": [["s1.", " s2."], ["u."]]}
    hub_row = {"id": "x", "question": "q", "answer": "a", "context": columns}
    task = convert_row(hub_row, 0)
    assert task is not None and task["context"] == "T: s1. s2.\nU: u."
    mbpp = convert_row({"task_id": 2, "prompt": "Add.", "test_list": ["assert f(1) == 2"],
                        "test_imports": []}, 0)  # fmt: skip
    assert mbpp is not None and mbpp["task_type"] == "coding" and "assert f(1)" in mbpp["test"]
