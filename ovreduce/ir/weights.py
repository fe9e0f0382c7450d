"""Bounds-checked access to an IR's ``.bin``: Const ranges are read with ``pread`` as they are needed; the
whole file only when a runtime needs all of it and cannot open the file itself (OpenVINO opens it by
:meth:`Weights.reader_path` and maps it, as its own ``read_model`` of a path does).

ovreduce does not memory-map the file: a ``.bin`` truncated while it is mapped turns the next access of a page past
its new end into SIGBUS, which kills the process. A read of a shrunken file is a short read instead, and
that is an error with a message.
"""

from __future__ import annotations

import os
from pathlib import Path

from ovreduce.errors import WeightsError
from ovreduce.files import FileError, open_regular

__all__ = ["Weights"]


class Weights:
    """The weights of one IR: a file (read with pread through a descriptor held open) or bytes in memory."""

    def __init__(self, source: Path | bytes, *, name: str | None = None) -> None:
        self._path: Path | None = None
        self._buffer: memoryview | None = None
        self._fd: int | None = None
        self._suspended = False  # the file let go of by suspend(), until resume()
        if isinstance(source, Path):
            self._path = source
            self.name = name or str(source)
            try:
                # Held open until close(): a file removed meanwhile (the service's store evicting it from
                # another process) stays readable, and nothing is mapped.
                self._fd, self.size = open_regular(source, "an IR weights (.bin) file")
            except FileError as exc:
                raise WeightsError(f"cannot read weights file {source}: {exc.reason}") from None
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

    def _pread(self, offset: int, size: int) -> bytes:
        if self._fd is None:
            raise WeightsError(f"weights file {self._path} was closed")
        data = bytearray()
        try:
            while len(data) < size:
                chunk = os.pread(self._fd, min(size - len(data), 1 << 24), offset + len(data))
                if not chunk:
                    break
                data += chunk
        except OSError as exc:
            raise WeightsError(f"cannot read weights file {self._path}: {exc.strerror or exc}") from None
        if len(data) < size:
            raise WeightsError(
                f"weights file {self._path} is shorter than when it was opened ({self.size} bytes): it changed "
                f"while ovreduce was reading it"
            )
        return bytes(data)

    def read(self, offset: int, size: int, *, where: str = "") -> bytes:
        """A copy of the ``size`` bytes at ``offset``; :class:`WeightsError` unless all lie inside the file.

        Only the bytes asked for are read (a file is never read whole for this).
        """
        self.check_range(offset, size, where=where)
        if self._buffer is not None:
            return bytes(self._buffer[offset : offset + size])
        return self._pread(offset, size)

    def reader_path(self) -> str | None:
        """A path by which another reader (OpenVINO) opens this very file, when the weights live in one (None for bytes
        in memory): the descriptor ovreduce holds where the system names it (``/proc/self/fd/N``: a file removed or
        replaced by name since it was opened is still the one read), else the file's path.

        Raises:
            WeightsError: the file was closed, or is no longer the size it had when it was opened.
        """
        if self._path is None:
            return None
        if self._fd is None:
            raise WeightsError(f"weights file {self._path} was closed")
        try:
            size = os.fstat(self._fd).st_size
        except OSError as exc:
            raise WeightsError(f"cannot read weights file {self._path}: {exc.strerror or exc}") from None
        if size != self.size:
            raise WeightsError(
                f"weights file {self._path} is {size} bytes, not the {self.size} bytes it had when it was opened: it "
                f"changed while ovreduce was reading it"
            )
        by_descriptor = f"/proc/self/fd/{self._fd}"
        return by_descriptor if os.path.exists(by_descriptor) else str(self._path)

    def view(self) -> memoryview:
        """All the bytes (the file is read once, then kept; :meth:`close` frees them)."""
        if self._buffer is None:
            self._buffer = memoryview(self._pread(0, self.size))
        return self._buffer

    def check_range(self, offset: int, size: int, *, where: str = "") -> None:
        if offset < 0 or size < 0 or offset + size > self.size:
            prefix = f"{where}: " if where else ""
            raise WeightsError(
                f"{prefix}Const data [offset {offset}, size {size}] lies outside {self.name} "
                f"({self.size} bytes): expected offset + size <= {self.size}"
            )

    def suspend(self) -> None:
        """Let go of the file and of its bytes read whole (:meth:`view`) until :meth:`resume`: a process that keeps
        the model between uses (the service's workers) holds neither open meanwhile, so a file removed is given back
        to the disk and the bytes to memory. Weights in memory are kept."""
        if self._path is None:
            return
        self._buffer = None  # (freed once nothing else holds it: an OpenVINO model built on it may still)
        fd, self._fd = self._fd, None
        if fd is not None:
            self._suspended = True
            os.close(fd)

    def resume(self) -> None:
        """Hold the file again after :meth:`suspend` (nothing otherwise).

        Raises:
            WeightsError: the file is gone, or is not the size it had.
        """
        if self._path is None or self._fd is not None or not self._suspended:
            return
        try:
            fd, size = open_regular(self._path, "an IR weights (.bin) file")
        except FileError as exc:
            raise WeightsError(f"cannot read weights file {self._path}: {exc.reason}") from None
        if size != self.size:
            os.close(fd)
            raise WeightsError(f"weights file {self._path} is {size} bytes, no longer the {self.size} it was")
        self._fd, self._suspended = fd, False

    def close(self) -> None:
        self._suspended = False
        if self._buffer is not None and self._path is not None:
            self._buffer.release()
            self._buffer = None
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        fd, self._fd = getattr(self, "_fd", None), None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> Weights:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
