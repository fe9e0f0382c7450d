"""The models a command line names: files as given, folders searched, globs expanded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ovreduce.cli.errors import UsageError

__all__ = ["expand_paths"]

_GLOB_CHARS = set("*?[")


def expand_paths(items: Sequence[str]) -> list[Path]:
    """Files as given, folders searched recursively for ``*.xml``, globs expanded (sorted).

    Raises:
        UsageError: a path names nothing, a folder holds no ``.xml`` file, or a pattern matches no file
            (the command line's rule: what is not there is a usage error; what is there but cannot be read
            is the report's business).
    """
    out: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.xml") if p.is_file())
            if not found:
                raise UsageError(f"{item}: the folder holds no .xml files")
            out += found
        elif _GLOB_CHARS & set(item) and not path.exists():
            import glob

            matches = sorted(Path(p) for p in glob.glob(item, recursive=True) if Path(p).is_file())
            if not matches:
                raise UsageError(f"{item}: the pattern matches no files")
            out += matches
        elif not path.exists():
            raise UsageError(f"{item}: no such file")
        else:
            out.append(path)
    return out
