"""The small-model zoo: really trained tiny language models and their measurement tables.

`build_zoo` trains a preset (``full`` or ``mini``) on CPU (torch is an optional extra);
`load_zoo` reads the bundled tables, which need no torch.
"""

from .tables import ZooTables, load_zoo

__all__ = ["ZooTables", "load_zoo", "build_zoo"]


def build_zoo(preset, out, *, progress: bool = True, jobs: int = 1) -> dict:
    """Train every run of a preset into ``out`` (see `lmforecast.zoo.build.build_zoo`)."""
    from .build import build_zoo as _build

    return _build(preset, out, progress=progress, jobs=jobs)
