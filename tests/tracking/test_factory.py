"""report_to: validation like TRL's, 'all'/'none', missing packages name the extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.tracking import ReportTo, factory, make_trackers, normalize_report_to


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, []),
        ("none", []),
        ([], []),
        ("tensorboard", ["tensorboard"]),
        (["mlflow", "tensorboard", "mlflow"], ["mlflow", "tensorboard"]),
        ("all", ["all"]),
    ],
)
def test_report_to_forms(value: object, expected: list[str]) -> None:
    assert normalize_report_to(value) == expected  # type: ignore[arg-type]


def test_unknown_names_suggest_the_closest() -> None:
    with pytest.raises(ConfigError, match="Did you mean 'tensorboard'"):
        normalize_report_to(["tensorbord"])
    with pytest.raises(ConfigError, match="'all' stands alone"):
        normalize_report_to(["all", "wandb"])


def test_report_to_as_a_config_field() -> None:
    class Settings(BaseModel):
        report_to: ReportTo = []

    assert Settings(report_to="mlflow").report_to == ["mlflow"]  # type: ignore[arg-type]
    assert Settings().report_to == []
    with pytest.raises(ValidationError, match="Did you mean 'wandb'"):
        Settings(report_to="wandbb")  # type: ignore[arg-type]


def test_none_builds_no_tracker(tmp_path: Path) -> None:
    group = make_trackers("none", tmp_path, "run", {"lr": 0.1})
    assert len(group) == 0
    group.log_record({"step": 0, "loss": 1.0})
    group.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["wandb", "trackio", "mlflow"])
def test_a_missing_package_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setitem(sys.modules, name, None)  # importing it now raises ImportError
    with pytest.raises(MissingDependencyError, match=rf"pip install 'langmarl\[{name}\]'"):
        make_trackers([name], tmp_path, "run")


def test_a_missing_tensorboard_writer_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    with pytest.raises(MissingDependencyError, match=r"langmarl\[tensorboard\]"):
        make_trackers("tensorboard", tmp_path, "run")


def test_all_means_the_installed_trackers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "installed_trackers", lambda: ["tensorboard"])
    group = make_trackers("all", tmp_path, "run")
    assert [t.name for t in group] == ["tensorboard"]
    group.close()


def test_trackers_built_before_a_failure_are_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = []

    class Fake:
        name = "tensorboard"

        def log(self, metrics: dict[str, float], step: int) -> None: ...

        def log_params(self, config: dict[str, object]) -> None: ...

        def close(self) -> None:
            closed.append(True)

    monkeypatch.setitem(factory.TRACKERS, "tensorboard", lambda *args: Fake())
    monkeypatch.setitem(sys.modules, "wandb", None)
    with pytest.raises(MissingDependencyError):
        make_trackers(["tensorboard", "wandb"], tmp_path, "run")
    assert closed == [True]


def test_installed_trackers_follow_the_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    present = {"torch", "tensorboard", "wandb"}
    monkeypatch.setattr(factory, "find_spec", lambda name: object() if name in present else None)
    assert factory.installed_trackers() == ["tensorboard", "wandb"]  # torch + tensorboard
    present.discard("tensorboard")  # torch alone cannot write event files
    assert factory.installed_trackers() == ["wandb"]
