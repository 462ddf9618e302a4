"""Jobs: training commands run as local processes or on a Ray cluster.

A :class:`JobSpec` names the command (kind), its config, overrides, seed and resources;
a :class:`Backend` runs it (:class:`LocalBackend`: processes pinned to free cores;
:class:`RayBackend`: Ray tasks on a cluster) and every job's run lands in
``<runs_dir>/<job_id>``, its record in ``<runs_dir>/.jobs/<job_id>.json``. Importing this
package does not import Ray.
"""

from langmarl.jobs.backend import Backend, open_backend
from langmarl.jobs.local import LocalBackend
from langmarl.jobs.records import FINAL_STATES, JobRecord, JobState, JobStore
from langmarl.jobs.spec import JobSpec, Resources, parse_spec, validate_spec

__all__ = [
    "FINAL_STATES",
    "Backend",
    "JobRecord",
    "JobSpec",
    "JobState",
    "JobStore",
    "LocalBackend",
    "Resources",
    "open_backend",
    "parse_spec",
    "validate_spec",
]
