"""The saved-result envelope, at the bottom of the package (it imports only `errors`).

- `files`: atomic writes (a temporary sibling renamed into place, the user's umask honoured);
- `envelope`: JSON text of a saved result (`dump_json`, `load_json`, `to_jsonable`);
- `checker`: `Checker`, field-by-field validation of a loaded result with messages naming the
  file, the field and the value, and the ``kind`` / ``format_version`` envelope check.

Each method owns the schema of its own saved result beside its result class
(`fitting.schema`, `distill.schema`, `flp.schema`, `salience.schema`, `osl.schema`,
`supervised.schema`); they are all written with `Checker`.
"""

from .checker import FORMAT_VERSION, Checker, check_array, source_label
from .envelope import dump_json, load_json, to_jsonable
from .files import atomic_write_bytes, atomic_write_folder, atomic_write_text

__all__ = [
    "FORMAT_VERSION",
    "Checker",
    "atomic_write_bytes",
    "atomic_write_folder",
    "atomic_write_text",
    "check_array",
    "dump_json",
    "load_json",
    "source_label",
    "to_jsonable",
]
