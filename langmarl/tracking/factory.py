"""``report_to``: which trackers a run reports to, validated, and the factory that builds them.

``report_to`` reads as in TRL/transformers: ``"none"`` (the default: no tracker), one name
(``"tensorboard"``), a list (``["tensorboard", "mlflow"]``) or ``"all"`` — every tracker
whose package is installed (as transformers does; none installed is then no tracker, not an
error). A named tracker whose package is missing is an error naming the extra to install.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import BeforeValidator

from langmarl.core.errors import ConfigError
from langmarl.core.validation import did_you_mean
from langmarl.tracking.base import Tracker, TrackerGroup

TrackerName = Literal["tensorboard", "mlflow", "wandb", "trackio"]
TRACKER_NAMES: tuple[str, ...] = get_args(TrackerName)
_SPECIAL = ("all", "none")


def _tensorboard(run_dir: Path, run_name: str, project: str) -> Tracker:
    from langmarl.tracking.backends import TensorBoardTracker

    return TensorBoardTracker(run_dir / "tensorboard")


def _mlflow(run_dir: Path, run_name: str, project: str) -> Tracker:
    from langmarl.tracking.backends import MLflowTracker

    return MLflowTracker(run_dir, run_name, experiment=project)


def _wandb(run_dir: Path, run_name: str, project: str) -> Tracker:
    from langmarl.tracking.backends import WandbTracker

    return WandbTracker(run_dir, run_name, project=project)


def _trackio(run_dir: Path, run_name: str, project: str) -> Tracker:
    from langmarl.tracking.backends import TrackioTracker

    return TrackioTracker(run_name, project=project)


TrackerFactory = Callable[[Path, str, str], Tracker]
TRACKERS: dict[str, TrackerFactory] = {
    "tensorboard": _tensorboard,
    "mlflow": _mlflow,
    "wandb": _wandb,
    "trackio": _trackio,
}
"""Name → factory ``(run_dir, run_name, project) -> Tracker``; where each writes:
tensorboard ``<run_dir>/tensorboard``, mlflow ``file:<run_dir>/mlruns``, wandb
``<run_dir>/wandb`` (offline), trackio its local database."""

_PACKAGES: dict[str, tuple[tuple[str, ...], ...]] = {
    # Alternatives, each a set of packages that together suffice.
    "tensorboard": (("tensorboardX",), ("torch", "tensorboard")),
    "mlflow": (("mlflow",),),
    "wandb": (("wandb",),),
    "trackio": (("trackio",),),
}


def normalize_report_to(value: str | Sequence[str] | None) -> list[str]:
    """``report_to`` as a list of names: ``[]`` for ``"none"``/``None``/``[]``, ``["all"]``
    for ``"all"``, else the tracker names in order, without repeats.

    Raises:
        ConfigError: for an unknown name (with the closest one), or "all"/"none" mixed
            with other names.
    """
    if value is None:
        return []
    names = [value] if isinstance(value, str) else list(value)
    for name in names:
        if not isinstance(name, str) or name not in (*TRACKER_NAMES, *_SPECIAL):
            hint = did_you_mean(str(name), (*TRACKER_NAMES, *_SPECIAL))
            raise ConfigError(
                f"report_to: unknown tracker {name!r}.{hint} Use 'none', 'all' or any of "
                f"{list(TRACKER_NAMES)}"
            )
    special = [n for n in names if n in _SPECIAL]
    if special and len(names) > 1:
        raise ConfigError(
            f"report_to: {special[0]!r} stands alone, got {names}: give {special[0]!r} by "
            "itself or a list of tracker names"
        )
    return [] if names == ["none"] else list(dict.fromkeys(names))


ReportTo = Annotated[list[str], BeforeValidator(normalize_report_to)]
"""A config field type for ``report_to``: ``report_to: ReportTo = []`` accepts every form
:func:`normalize_report_to` does and stores the normalized list."""


def installed_trackers() -> list[str]:
    """The trackers whose packages are installed (what ``"all"`` means)."""
    return [
        name
        for name in TRACKER_NAMES
        if any(all(find_spec(package) for package in packages) for packages in _PACKAGES[name])
    ]


def make_trackers(
    report_to: str | Sequence[str] | None,
    run_dir: str | Path,
    run_name: str,
    config: dict[str, Any] | None = None,
    project: str = "langmarl",
) -> TrackerGroup:
    """Build the trackers ``report_to`` names, each with the run's config logged.

    Args:
        report_to: ``"none"``, ``"all"``, a tracker name or a list of them.
        run_dir: The run directory (local trackers write inside it).
        run_name: The run's name in the trackers.
        config: The run's configuration, logged as parameters (nested dicts allowed).
        project: The W&B/Trackio project and the MLflow experiment.

    Returns:
        A :class:`TrackerGroup` (empty for ``"none"``): call ``log_record(line)`` with each
        metrics record, and ``close()`` at the end.

    Raises:
        ConfigError: for an invalid ``report_to``.
        MissingDependencyError: naming the extra, for a named tracker whose package is
            missing. Trackers built before the failing one are closed.
    """
    names = normalize_report_to(report_to)
    if names == ["all"]:
        names = installed_trackers()
    group = TrackerGroup()
    try:
        for name in names:
            tracker = TRACKERS[name](Path(run_dir), run_name, project)
            group.trackers.append(tracker)
            if config:
                tracker.log_params(config)
    except BaseException:
        group.close()
        raise
    return group
