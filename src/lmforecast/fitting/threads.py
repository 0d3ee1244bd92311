"""Limit BLAS threads around tiny fits.

Measured on the project's 2-core machines: L-BFGS-B on a 9-parameter problem spends ~2 ms per
iteration in OpenBLAS thread hand-off with two threads (0.56 s vs 0.02 s with one).

Entering the limit is itself not free: `threadpool_limits` scans the loaded libraries each time
(about 3 ms), which summed to 2.7 s of the report's OSL robustness sweep. So the controller is
built once, and a nested entry (a fit inside a sweep that already holds the limit) is free.

numpy and scipy ship separate OpenBLAS builds, and the controller only limits the libraries
loaded when it is built: it loads scipy's (through scipy.linalg) first, or every L-BFGS-B
iteration of a fit that imported scipy after the controller was built would run with two
threads (a default 240-run `supervised fit` took 3.2x the CPU time).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from threadpoolctl import ThreadpoolController

_state = threading.local()
_controller: ThreadpoolController | None = None


def _get_controller() -> ThreadpoolController:
    global _controller
    if _controller is None:
        import scipy.linalg  # noqa: F401  (loads scipy's BLAS so the controller sees it)

        _controller = ThreadpoolController()
    return _controller


@contextmanager
def single_blas_thread():
    depth = getattr(_state, "depth", 0)
    if depth:
        _state.depth = depth + 1
        try:
            yield
        finally:
            _state.depth -= 1
        return
    with _get_controller().limit(limits=1, user_api="blas"):
        _state.depth = 1
        try:
            yield
        finally:
            _state.depth = 0
