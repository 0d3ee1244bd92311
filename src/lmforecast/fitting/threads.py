"""Limit BLAS threads around tiny fits.

Measured on the project's 2-core machines: L-BFGS-B on a 9-parameter problem spends ~2 ms per
iteration in OpenBLAS thread hand-off with two threads (0.56 s vs 0.02 s with one).
"""

from __future__ import annotations

from contextlib import contextmanager

from threadpoolctl import threadpool_limits


@contextmanager
def single_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield
