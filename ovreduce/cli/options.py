"""Option values turned into the library's arguments; a wrong value is a :class:`UsageError` naming its flag."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ovreduce import shapes
from ovreduce.cli.errors import UsageError
from ovreduce.cli.paths import is_folder, is_there, not_there
from ovreduce.errors import InputError
from ovreduce.shapes import PartialShape

__all__ = [
    "existing_file",
    "extension_names",
    "load_extensions",
    "model_files",
    "parse_named_files",
    "parse_named_shapes",
]


def parse_named_shapes(items: Sequence[str], option: str) -> dict[str, PartialShape]:
    """``NAME=SHAPE`` options (``--reshape``, ``--shape``) as a dict; :class:`UsageError` naming the option."""
    try:
        return shapes.parse_named_shapes(items)
    except ValueError as exc:
        raise UsageError(f"{option} {exc}") from None


def _setting(name: str, low: int, high: int | None, expected: str) -> int | None:
    """An integer setting from the environment (None when unset); :class:`UsageError` saying ``expected`` for one
    that is not ASCII digits from ``low`` to ``high``, however many digits it has."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    value = int(text) if text.isascii() and text.isdigit() and len(text) <= 4000 else -1  # int() stops at 4,300
    if value < low or (high is not None and value > high):
        raise UsageError(f"{name}={text[:30]!r}: {expected}")
    return value


def max_elements() -> int:
    """The CLI's limit on one tensor's elements: ``OVREDUCE_MAX_ELEMENTS`` as for the service, else
    :data:`ovreduce.tensors.DEFAULT_MAX_ELEMENTS` (2^28, 1 GiB of f32)."""
    from ovreduce.tensors import DEFAULT_MAX_ELEMENTS

    limit = _setting("OVREDUCE_MAX_ELEMENTS", 1, None, "expected a positive integer")
    return DEFAULT_MAX_ELEMENTS if limit is None else limit


def bound_memory() -> None:
    """Hold this process to ``OVREDUCE_MAX_WORKER_BYTES`` of data, as each of the service's workers, else to the
    machine's physical memory or, where it is less, the memory limit of the process's control group (a container's):
    a tensor whose shape depends on input values, sized only as it is computed, then fails as a limit error (exit 2)
    before the system kills the process for its memory."""
    from ovreduce.memory import bound_memory as bound
    from ovreduce.memory import cgroup_memory, physical_memory

    global MEMORY_BOUND
    limit = _setting("OVREDUCE_MAX_WORKER_BYTES", 1 << 28, 1 << 62,  # the service's range
                     "expected a number of bytes from 2**28 to 2**62")  # fmt: skip
    if limit is not None:
        MEMORY_BOUND = f"OVREDUCE_MAX_WORKER_BYTES, {limit} bytes"
    else:
        limit, group = physical_memory(), cgroup_memory()
        if group is not None and (limit is None or group < limit):
            limit = group
            MEMORY_BOUND = f"the memory limit of the process's control group (its container's), {limit} bytes"
        else:
            MEMORY_BOUND = f"the machine's physical memory, {limit} bytes" if limit is not None else "the system's"
    if limit is not None:
        bound(limit)  # where the system cannot, the process runs unbounded, as before


MEMORY_BOUND = "the system's"
"""The bound :func:`bound_memory` holds the process to, in words, for the message of a process that reached it."""


def parse_named_files(items: Sequence[str]) -> dict[str, Any]:
    """``--input NAME=FILE`` pairs loaded as arrays (NumPy is imported only when there is one), each refused
    before it is read if its header declares more than :func:`max_elements`."""
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--input {item!r}: expected NAME=FILE, e.g. --input 0=data.npy or --input x=inputs.npz:x")
        if name in out:  # the second would replace the first without a word
            raise UsageError(f"--input {name!r} is given twice; give each input once")
        from ovreduce.tensors import load_tensor, tensor_file

        file = tensor_file(path)
        if not is_there(file):  # what names nothing is the command line's business, as any path on it
            raise UsageError(f"--input {name}={path}: {not_there(file)} (expected a .npy, .npz or ONNX TensorProto "
                             f".pb file)")  # fmt: skip
        if is_folder(Path(file)):  # so is a folder where a file is expected, as for MODEL and --bin
            raise UsageError(f"--input {name}={path}: it is a folder, expected a file (a .npy, .npz or ONNX "
                             f"TensorProto .pb file)")  # fmt: skip
        out[name] = load_tensor(path, max_elements())
    return out


def model_files(model: str, bin_path: str | None) -> tuple[str, str | None]:
    """``(model, bin_path)`` once both (the weights when given) name files; :class:`UsageError` otherwise."""
    existing_file(model)
    if bin_path is not None:
        existing_file(bin_path)
    return model, bin_path


def existing_file(path: str) -> str:
    """``path`` when it names something a file could be read from; :class:`UsageError` where it names nothing or a
    folder. A device, a FIFO or a socket is there: its reader refuses it with the error's code (``[ir.structure]``
    for a model, ``[ir.weights]`` for weights), as ``check`` reports it."""
    if not is_there(path):
        raise UsageError(f"{path}: {not_there(path)}")
    if is_folder(Path(path)):
        raise UsageError(f"{path}: it is a folder, expected a file")
    return path


def extension_names(items: Sequence[str]) -> list[str]:
    """``--extension`` values once each names a file or an installed Python module (found, not loaded: neither
    OpenVINO nor the module is imported); :class:`UsageError` for one that names nothing."""
    if not items:  # the usual command line: nothing to find, and ovreduce._openvino not even imported
        return []
    from ovreduce._openvino import find_extension

    for item in items:
        try:
            find_extension(item)
        except InputError as exc:
            raise UsageError(f"--extension {exc.message}") from None
    return list(items)


def load_extensions(items: Sequence[str]) -> None:
    """Add the ``--extension`` values to OpenVINO (importing it); an :class:`InputError` naming the option for
    one that OpenVINO refuses."""
    if not items:
        return
    from ovreduce._openvino import load_extensions as load

    try:
        load(items)
    except InputError as exc:
        raise InputError(f"--extension {exc.message}") from None
