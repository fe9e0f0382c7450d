"""The models a command line names: files as given, folders searched, globs expanded."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from ovreduce.cli.errors import UsageError

__all__ = ["expand_paths", "is_folder", "is_there", "not_there"]

_GLOB_CHARS = set("*?[")


def expand_paths(items: Sequence[str]) -> list[Path]:
    """Files as given, folders searched recursively for ``*.xml`` (:func:`_search`), globs expanded (sorted, names
    beginning with a dot included) and their matches taken as a folder's entries are: a folder searched, and of the
    rest the names ending in ``.xml``, in any case (a
    model's ``.bin`` is not a model; a dangling link, a FIFO, a loop of links so named is a model that cannot be
    read, as in a folder). A file named more than once (``models/`` and ``models/a.xml``, ``a.xml`` and ``./a.xml``)
    is checked once, where it first comes.

    Raises:
        UsageError: a path names nothing, a folder holds no ``.xml`` file, or a pattern matches no ``.xml`` file
            (the command line's rule: what is not there is a usage error; what is there but cannot be read is the
            report's business).
    """
    out: list[Path] = []
    for item in items:
        path = Path(item)
        if is_folder(path):
            found = _search(path)
            if not found:
                raise UsageError(f"{item}: the folder holds no .xml files")
            out += found
        elif _GLOB_CHARS & set(item) and not os.path.lexists(item):
            import glob

            matches: list[Path] = []
            # (the names beginning with a dot too, which a shell's glob leaves out: as in a folder's search)
            for match in sorted(glob.glob(item, recursive=True, include_hidden=True)):
                if os.path.isdir(match):
                    matches += _search(Path(match))
                elif _is_xml(match):
                    matches.append(Path(match))
            if not matches:
                raise UsageError(f"{item}: the pattern matches no .xml files (nor a folder holding one); expected "
                                 f"a pattern for IR .xml files or folders")  # fmt: skip
            out += matches
        elif not is_there(item):  # as given: ``m.xml/`` names no file, where Path("m.xml/") is m.xml
            raise UsageError(f"{item}: {not_there(item)}")
        else:
            out.append(path)
    return _once(out)


def is_there(path: str | Path) -> bool:
    """Whether ``path`` names something, as far as this user may look: where a folder on its way may not be searched
    (Permission denied), it may be there, and its reader says that it cannot be read, as for a file of its own mode
    (a usage error is for what names nothing). A string is looked up as it is spelled: ``m.xml/`` and ``m.xml/.``
    name nothing (the system says "Not a directory"), where a :class:`~pathlib.Path` of them drops the ending."""
    try:
        os.stat(path)
    except PermissionError:
        return True
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):  # (as Path.exists says False)
            return False
        raise
    return True


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder; not where a folder on its way may not be searched (see :func:`is_there`)."""
    try:
        return path.is_dir()
    except PermissionError:
        return False


def _once(paths: list[Path]) -> list[Path]:
    """``paths`` with each file once, where it first comes: the same name in the same folder, however spelled
    (``a.xml``, ``./a.xml``, a folder through a link to it). Two names of one file stay two models (each has its own
    ``.bin`` beside it)."""
    seen: set[str] = set()
    out: list[Path] = []
    for path in paths:
        key = os.path.join(os.path.realpath(path.parent), path.name)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def not_there(path: str) -> str:
    """Why ``path``, which names nothing, names nothing, in words: ``no such file``, or ``a loop of symbolic links``
    (a link that leads back to itself, which names no file either)."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a loop of symbolic links, which names no file"
        if exc.errno == errno.ENOTDIR:  # m.xml/ or m.xml/.: a file spelled as a folder
            return "no such file: a file is named there as a folder (Not a directory)"
    return "no such file"


def _search(folder: Path) -> list[Path]:
    """Every ``*.xml`` below ``folder``, sorted: through links to folders (each folder once, so that a link to an
    ancestor ends), and whatever is not a readable file (a dangling link) or cannot be searched (a folder it may not
    list) too, which the report then calls unreadable, saying why."""
    found: list[Path] = []
    seen: set[tuple[int, int]] = set()

    def unsearchable(exc: OSError) -> None:  # a folder that cannot be listed: the report says why
        found.append(Path(exc.filename))

    for root, folders, files in os.walk(folder, onerror=unsearchable, followlinks=True):
        status = os.stat(root)
        if (status.st_dev, status.st_ino) in seen:
            folders.clear()
            continue
        seen.add((status.st_dev, status.st_ino))
        found += [Path(root, name) for name in files if _is_xml(name)]
    return sorted(found)


def _is_xml(name: str) -> bool:
    """Whether ``name`` is an IR's by its suffix: ``.xml`` in any case, as OpenVINO reads ``M.XML``."""
    return name.lower().endswith(".xml")
