"""The trackers: TensorBoard, MLflow, Weights & Biases and Trackio.

Each tracker imports its package when it is built, never before, so ``import langmarl`` stays
cheap; a missing package raises :class:`~langmarl.core.errors.MissingDependencyError` naming
the extra (``pip install 'langmarl[mlflow]'``). Every tracker writes locally by default:
TensorBoard event files and an MLflow file store inside the run directory, W&B in offline
mode (``wandb sync`` uploads later), Trackio to its local database.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langmarl.core.errors import ConfigError, MissingDependencyError
from langmarl.tracking.base import flatten_params


def _require(module: str, extra: str, purpose: str) -> Any:
    """Import ``module``, or raise the error that names the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(module.split(".")[0], extra, purpose) from None


class TensorBoardTracker:
    """Scalars into TensorBoard event files under ``log_dir``.

    The writer is tensorboardX's ``SummaryWriter`` (the ``tensorboard`` extra), or torch's
    ``torch.utils.tensorboard`` one when only torch and tensorboard are installed; both write
    the same event files. The config is logged as a JSON text summary named ``config``.
    """

    name = "tensorboard"

    def __init__(self, log_dir: str | Path) -> None:
        self.log_dir = Path(log_dir)
        # a unique suffix: a resumed run started in the same second must not overwrite the
        # event file of the attempt before (tensorboardX names files by time and host)
        suffix = f".{os.getpid()}.{uuid.uuid4().hex[:8]}"
        self._writer = _summary_writer()(log_dir=str(self.log_dir), filename_suffix=suffix)
        self._closed = False

    def log(self, metrics: dict[str, float], step: int) -> None:
        for key, value in metrics.items():
            self._writer.add_scalar(key, value, global_step=step)

    def log_params(self, config: dict[str, Any]) -> None:
        text = json.dumps(flatten_params(config), indent=2, default=str)
        self._writer.add_text("config", f"```\n{text}\n```", global_step=0)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._writer.flush()
            self._writer.close()


def _summary_writer() -> Any:
    try:
        return importlib.import_module("tensorboardX").SummaryWriter
    except ImportError:
        pass
    try:
        return importlib.import_module("torch.utils.tensorboard").SummaryWriter
    except ImportError:  # no torch, or torch without the tensorboard package
        raise MissingDependencyError(
            "tensorboardX", "tensorboard", "report_to='tensorboard'"
        ) from None


_MLFLOW_BATCH = 1000  # metrics per log_batch call (MLflow's limit)
_MLFLOW_PARAMS = 100  # params per log_batch call (MLflow's limit)
_MLFLOW_PARAM_CHARS = 6000  # longest param value MLflow stores
_MLFLOW_BAD_KEY = re.compile(r"[^\w\-. /:]")  # MLflow keys: alphanumerics, _ - . space / :


def mlflow_key(name: str) -> str:
    """``name`` with the characters MLflow refuses in keys replaced by ``_``."""
    return _MLFLOW_BAD_KEY.sub("_", name)


class MLflowTracker:
    """A run in an MLflow tracking store, through ``MlflowClient`` (no global active run).

    Args:
        run_dir: The run directory; the default store is ``file:<run_dir>/mlruns``.
        run_name: The MLflow run name.
        experiment: The MLflow experiment (created if missing).
        tracking_uri: Any MLflow tracking URI instead (``sqlite:///…``, ``http://…``).

    MLflow 3 refuses file stores unless ``MLFLOW_ALLOW_FILE_STORE=true``; for a ``file:`` URI
    that variable is set to ``true`` while the store is opened (MLflow keeps the opened store)
    unless the user set it. To browse the runs: ``MLFLOW_ALLOW_FILE_STORE=true mlflow ui
    --backend-store-uri file:<run_dir>/mlruns``.
    """

    name = "mlflow"

    def __init__(
        self,
        run_dir: str | Path,
        run_name: str,
        experiment: str = "langmarl",
        tracking_uri: str | None = None,
    ) -> None:
        _require("mlflow", "mlflow", "report_to='mlflow'")
        from mlflow.tracking import MlflowClient

        self.tracking_uri = tracking_uri or (Path(run_dir).resolve() / "mlruns").as_uri()
        with _file_store_allowed(self.tracking_uri):
            self.client = MlflowClient(tracking_uri=self.tracking_uri)
        found = self.client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found else self.client.create_experiment(experiment)
        self.run_id: str = self.client.create_run(experiment_id, run_name=run_name).info.run_id
        self._closed = False

    def log(self, metrics: dict[str, float], step: int) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        entries = [Metric(mlflow_key(k), v, now, step) for k, v in metrics.items()]
        for start in range(0, len(entries), _MLFLOW_BATCH):
            self.client.log_batch(self.run_id, metrics=entries[start : start + _MLFLOW_BATCH])

    def log_params(self, config: dict[str, Any]) -> None:
        from mlflow.entities import Param

        params = [
            Param(mlflow_key(k), str(v)[:_MLFLOW_PARAM_CHARS])
            for k, v in flatten_params(config).items()
        ]
        for start in range(0, len(params), _MLFLOW_PARAMS):
            self.client.log_batch(self.run_id, params=params[start : start + _MLFLOW_PARAMS])

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.client.set_terminated(self.run_id)


@contextmanager
def _file_store_allowed(uri: str) -> Iterator[None]:
    if not uri.startswith("file:") or "MLFLOW_ALLOW_FILE_STORE" in os.environ:
        yield
        return
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)


class WandbTracker:
    """A Weights & Biases run, offline by default (files under ``<run_dir>/wandb``; upload
    them later with ``wandb sync``).

    Args:
        run_dir: The run directory (W&B's ``dir``).
        run_name: The W&B run name.
        project: The W&B project.
        mode: ``"offline"`` (default), ``"online"`` (needs ``WANDB_API_KEY``) or
            ``"disabled"``.
    """

    name = "wandb"

    def __init__(
        self, run_dir: str | Path, run_name: str, project: str = "langmarl", mode: str = "offline"
    ) -> None:
        wandb = _require("wandb", "wandb", "report_to='wandb'")
        if mode not in {"offline", "online", "disabled"}:
            raise ConfigError(
                f"wandb mode {mode!r} is unknown: use 'offline', 'online' or 'disabled'"
            )
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        # reinit="create_new": a second tracker in the process starts its own run instead
        # of finishing the first (W&B's documented way to run several at once).
        self.run = wandb.init(
            project=project, name=run_name, dir=str(run_dir), mode=mode, reinit="create_new"
        )
        self._closed = False

    def log(self, metrics: dict[str, float], step: int) -> None:
        self.run.log(metrics, step=step)

    def log_params(self, config: dict[str, Any]) -> None:
        self.run.config.update(config, allow_val_change=True)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.run.finish()


class TrackioTracker:
    """A Trackio run in its local database (``TRACKIO_DIR``, by default
    ``~/.cache/huggingface/trackio``; ``trackio show`` opens the dashboard).

    Args:
        run_name: The Trackio run name.
        project: The Trackio project.

    The config is sent with the first logged metrics, so ``log_params`` must come before
    the first ``log`` (``make_trackers`` does that); later calls raise ``ConfigError``.
    """

    name = "trackio"

    def __init__(self, run_name: str, project: str = "langmarl") -> None:
        trackio = _require("trackio", "trackio", "report_to='trackio'")
        self.run = trackio.init(
            project=project, name=run_name, embed=False, auto_log_cpu=False, auto_log_gpu=False
        )
        self._logged = False
        self._closed = False

    def log(self, metrics: dict[str, float], step: int) -> None:
        self._logged = True
        self.run.log(metrics, step=step)

    def log_params(self, config: dict[str, Any]) -> None:
        if self._logged:
            raise ConfigError(
                "Trackio stores a run's config with its first metrics: call log_params "
                "before the first log"
            )
        self.run.config.update(flatten_params(config))

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.run.finish()
