"""Lazy, bounds-checked access to an IR's ``.bin``: memory-mapped on first use, never read whole."""

from __future__ import annotations

import mmap
import os
from pathlib import Path

from ovreduce.errors import WeightsError

__all__ = ["Weights"]


class Weights:
    """The weights of one IR: a file (memory-mapped lazily) or bytes already in memory (an upload)."""

    def __init__(self, source: Path | bytes, *, name: str | None = None) -> None:
        self._path: Path | None = None
        self._buffer: memoryview | None = None
        self._mmap: mmap.mmap | None = None
        if isinstance(source, Path):
            self._path = source
            self.name = name or str(source)
            try:
                self.size = source.stat().st_size
            except OSError as exc:
                raise WeightsError(f"cannot read weights file {source}: {exc.strerror or exc}") from None
        else:
            self._buffer = memoryview(source)
            self.name = name or "<weights>"
            self.size = len(self._buffer)

    @property
    def path(self) -> Path | None:
        """The file, when the weights live in one."""
        return self._path

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Weights:
        return cls(Path(path))

    def _data(self) -> memoryview:
        if self._buffer is None:
            assert self._path is not None
            try:
                with open(self._path, "rb") as fh:
                    if self.size == 0:
                        self._buffer = memoryview(b"")
                    else:
                        self._mmap = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                        self._buffer = memoryview(self._mmap)
            except OSError as exc:
                raise WeightsError(f"cannot read weights file {self._path}: {exc.strerror or exc}") from None
        return self._buffer

    def read(self, offset: int, size: int, *, where: str = "") -> bytes:
        """A copy of the ``size`` bytes at ``offset``; :class:`WeightsError` unless all lie inside the file.

        Only the bytes asked for are touched (the file is memory-mapped), and the copy keeps no
        reference to the mapping, so :meth:`close` is always safe.
        """
        self.check_range(offset, size, where=where)
        return bytes(self._data()[offset : offset + size])

    def view(self) -> memoryview:
        """All the bytes, without a copy (a view of the mapping: release it before :meth:`close`)."""
        return self._data()

    def check_range(self, offset: int, size: int, *, where: str = "") -> None:
        if offset < 0 or size < 0 or offset + size > self.size:
            prefix = f"{where}: " if where else ""
            raise WeightsError(
                f"{prefix}Const data [offset {offset}, size {size}] lies outside {self.name} "
                f"({self.size} bytes): expected offset + size <= {self.size}"
            )

    def close(self) -> None:
        if self._buffer is not None:
            self._buffer.release()
            self._buffer = None
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None

    def __enter__(self) -> Weights:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
