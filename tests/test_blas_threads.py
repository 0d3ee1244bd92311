"""Tiny fits run with one BLAS thread, whichever BLAS library the fit loads.

numpy and scipy ship separate OpenBLAS builds; L-BFGS-B runs on scipy's. A limit built while only
numpy's was loaded left scipy's at every core, and the default 240-run `supervised fit` took
about 3x the CPU time (OpenBLAS thread hand-off in every iteration).
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

CHECK = textwrap.dedent(
    """
    import json
    from lmforecast.fitting.threads import single_blas_thread
    with single_blas_thread():  # entered before scipy is imported, as in `supervised fit`
        import scipy.optimize  # noqa: F401
        from threadpoolctl import threadpool_info
        print(json.dumps([[i["filepath"], i["num_threads"]] for i in threadpool_info()
                          if i["user_api"] == "blas"]))
    """
)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: every BLAS runs one thread")
def test_the_limit_covers_scipys_blas_loaded_after_it():
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, check=True, env=env
    ).stdout
    libs = dict(json.loads(out))
    assert len(libs) >= 1 and all(n == 1 for n in libs.values()), libs
