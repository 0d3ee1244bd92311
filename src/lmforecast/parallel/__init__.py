"""One switch for every parallel loop: local joblib workers (default) or a Dask cluster.

>>> from lmforecast.parallel import scheduler
>>> with scheduler("local:4"):              # doctest: +SKIP
...     law.fit(runs)                        # bootstrap refits run on 4 Dask worker processes

``lmforecast --scheduler SPEC <command>`` and ``LMFORECAST_SCHEDULER=SPEC`` do the same from the
command line. Dask is the optional extra ``lmforecast[dask]`` (imported only when used).
See docs/scaling-out.md.
"""

from .backend import (
    DaskSession,
    backend_for,
    map_tasks,
    parse_scheduler,
    scheduler,
    uses_dask,
)
from .spec import ENV_VAR, SchedulerSpec, check_reachable, env_scheduler

__all__ = [
    "scheduler",
    "map_tasks",
    "uses_dask",
    "backend_for",
    "parse_scheduler",
    "env_scheduler",
    "check_reachable",
    "DaskSession",
    "SchedulerSpec",
    "ENV_VAR",
]
