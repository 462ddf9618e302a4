"""MAGRPO and Prompt2Policy input files that are not UTF-8 or not JSON give one clear error
naming the file (and the line), and blank lines are skipped."""

import json
from pathlib import Path

import pytest

from langmarl.core.errors import ConfigError
from langmarl.magrpo.tasks import poster_task, writing_task
from langmarl.p2p.learner.train_config import TrainConfig


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "w.jsonl"
    rows = [json.dumps({"prompt": f"topic {i}"}) for i in range(4)]
    path.write_text("\n".join([rows[0], "", *rows[1:], "  "]) + "\n")
    task = writing_task(str(path), num_eval=1)
    assert len(task.train_dataset) + len(task.eval_dataset) == 4


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b'{"prompt": "a"}\n{"prompt": \n', "line 2: not JSON"),
        (b'{"prompt": "a"}\n[1, 2]\n', "line 2: a JSON object is needed"),
        (b'{"prompt": "caf\xe9"}\n', "not UTF-8"),
    ],
)
def test_a_bad_jsonl_dataset_is_named(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "w.jsonl"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=says) as caught:
        writing_task(str(path))
    assert str(path) in str(caught.value)


def test_a_non_utf8_topic_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "topics.txt"
    path.write_bytes(b"coffee\ncr\xe8me\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        poster_task(str(path))


@pytest.mark.parametrize(
    ("content", "says"), [(b'{"seed": ', "line 1"), (b'{"seed": "\xff"}', "not UTF-8")]
)
def test_a_bad_train_config_file_is_named(tmp_path: Path, content: bytes, says: str) -> None:
    path = tmp_path / "train.json"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=says) as caught:
        TrainConfig.from_file(path)
    assert str(path) in str(caught.value)
