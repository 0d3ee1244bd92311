"""The small-model zoo: really trained tiny language models and their measurement tables.

`build_zoo` trains a preset (``full`` or ``mini``) on CPU (torch is an optional extra);
`load_zoo` reads the bundled tables, which need no torch.
"""

from .build import build_zoo
from .tables import ZooTables, load_zoo

__all__ = ["ZooTables", "load_zoo", "build_zoo"]
