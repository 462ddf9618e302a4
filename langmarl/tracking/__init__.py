"""Experiment trackers a run reports to (``report_to``): TensorBoard, MLflow, W&B, Trackio.

``make_trackers(report_to, run_dir, run_name, config)`` builds them; feed each metrics record
(a line of ``metrics.jsonl``) to ``group.log_record(record)``, or export a finished run with
``replay(metrics_jsonl_path, group)``. Tracker packages load only when a tracker is built.
"""

from typing import TYPE_CHECKING

from langmarl._lazy import lazy_getattr

_NAMES = {
    "MLflowTracker": "langmarl.tracking.backends",
    "MetricsFollower": "langmarl.tracking.export",
    "ReportTo": "langmarl.tracking.factory",
    "TRACKERS": "langmarl.tracking.factory",
    "TensorBoardTracker": "langmarl.tracking.backends",
    "Tracker": "langmarl.tracking.base",
    "TrackerGroup": "langmarl.tracking.base",
    "TrackioTracker": "langmarl.tracking.backends",
    "WandbTracker": "langmarl.tracking.backends",
    "flatten_metrics": "langmarl.tracking.base",
    "installed_trackers": "langmarl.tracking.factory",
    "make_trackers": "langmarl.tracking.factory",
    "normalize_report_to": "langmarl.tracking.factory",
    "replay": "langmarl.tracking.export",
    "reporting": "langmarl.tracking.export",
}
__all__ = sorted(_NAMES)
__getattr__ = lazy_getattr(__name__, _NAMES)

if TYPE_CHECKING:
    from langmarl.tracking.backends import (
        MLflowTracker,
        TensorBoardTracker,
        TrackioTracker,
        WandbTracker,
    )
    from langmarl.tracking.base import Tracker, TrackerGroup, flatten_metrics
    from langmarl.tracking.export import MetricsFollower, replay, reporting
    from langmarl.tracking.factory import (
        TRACKERS,
        ReportTo,
        installed_trackers,
        make_trackers,
        normalize_report_to,
    )
