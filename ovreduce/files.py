"""Reading files a user names, safely: regular files only, and never more bytes than a limit.

``/dev/zero`` as an IR would be read until memory runs out (its size is 0, so a size check passes), a FIFO
would block the open forever, a directory fails late with a confusing message. Every file ovreduce reads
on a user's behalf (IR XML and weights, tensor files, ONNX models) is opened here: without blocking, checked
to be a regular file, and read with a bound that holds even when the size the file system reports is wrong.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ovreduce.errors import LimitExceededError, OvReduceError

__all__ = ["FileError", "check_regular", "open_regular", "read_bounded"]

_CHUNK = 1 << 20


class FileError(OvReduceError):
    """A path that is not a readable regular file (missing, a directory, a device, a FIFO, a socket).

    ``reason`` is the message without the path: "No such file or directory", "a FIFO, expected ...".
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cannot read {path}: {reason}")
        self.path = path
        self.reason = reason


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _open(path: Path, what: str) -> int:
    """A descriptor of ``path`` opened for reading without blocking (a FIFO with no writer opens at once)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags)
    except OSError as exc:
        raise FileError(path, f"{exc.strerror or exc}") from None


def check_regular(path: str | os.PathLike[str], what: str) -> int:
    """The size of ``path`` if it is a regular file; :class:`FileError` saying what it is otherwise."""
    path = Path(path)
    fd = _open(path, what)
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode):
        raise FileError(path, f"it is {_kind(st.st_mode)}, expected {what}")
    return st.st_size


def open_regular(path: str | os.PathLike[str], what: str) -> tuple[int, int]:
    """A read-only descriptor of regular file ``path`` and its size; the caller closes it.

    Raises:
        FileError: missing, unreadable, or not a regular file.
    """
    path = Path(path)
    fd = _open(path, what)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileError(path, f"it is {_kind(st.st_mode)}, expected {what}")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def read_bounded(path: str | os.PathLike[str], limit: int, what: str, noun: str = "the file") -> bytes:
    """All of regular file ``path``, refused with :class:`LimitExceededError` as soon as it is found to hold
    more than ``limit`` bytes (by its size, or by counting while reading: a file growing under us, or a
    file system that reports a wrong size, cannot make the read unbounded).

    Raises:
        FileError: missing, unreadable, or not a regular file.
        LimitExceededError: more than ``limit`` bytes.
    """
    path = Path(path)
    fd = _open(path, what)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileError(path, f"it is {_kind(st.st_mode)}, expected {what}")
        if st.st_size > limit:
            raise LimitExceededError(f"{path}: {noun} is {st.st_size} bytes, more than the limit of {limit} bytes")
        chunks: list[bytes] = []
        total = 0
        want = st.st_size + 1 if st.st_size else _CHUNK  # the whole file in one read when its size is right
        while True:
            try:
                chunk = os.read(fd, min(want, limit + 1 - total))
                want = _CHUNK
            except OSError as exc:
                raise FileError(path, f"{exc.strerror or exc}") from None
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise LimitExceededError(f"{path}: {noun} holds more than the limit of {limit} bytes")
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)
