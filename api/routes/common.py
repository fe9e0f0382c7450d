"""One router per resource, and the few helpers they share (problem responses, JSON bodies, uploads)."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy.typing as npt
from fastapi import UploadFile
from starlette.responses import Response

from api.schemas import Problem, Tensor
from ovreduce.errors import InputError, LimitExceededError
from ovreduce.tensors import from_kserve

__all__ = ["json_response", "problems", "read_upload"]

_DESCRIPTIONS = {
    400: "The request is malformed (problem+json, code request.invalid, input or usage)",
    404: "Unknown model, layer or route (problem+json, code not_found)",
    413: "Too large: body, upload, XML, layer count or tensor elements (problem+json, code limit*)",
    422: "The upload is not a readable OpenVINO IR (problem+json, code ir.*)",
    503: "Not available: OpenVINO device, busy workers or the store (problem+json)",
    504: "The run took longer than the time limit (problem+json, code limit.time)",
}


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for problem+json answers (media type fixed up in :mod:`api.main`)."""
    out: dict[int | str, dict[str, Any]] = {
        status: {"model": Problem, "description": _DESCRIPTIONS.get(status, "Error (problem+json)")}
        for status in statuses
    }
    out["default"] = {"model": Problem, "description": "Any other error, e.g. 500 internal (problem+json)"}
    return out


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def json_bytes(doc: Any) -> bytes:
    """Compact JSON; non-finite floats become "NaN"/"Infinity"/"-Infinity" strings, as KServe writes them."""
    try:
        return json.dumps(doc, allow_nan=False, separators=(",", ":")).encode()
    except ValueError:
        return json.dumps(_finite(doc), allow_nan=False, separators=(",", ":")).encode()


def scrubbed_json(doc: Any, path: Path, name: str) -> bytes:
    """:func:`json_bytes` of ``doc`` with a server-side file's path (and its folder) replaced by the name the
    client knows it by: OpenVINO's messages quote the file they read, and that location is the server's own."""
    text = json_bytes(doc).decode()
    return text.replace(str(path), name).replace(str(path.parent), ".").encode()


@contextmanager
def temporary_file(data: bytes, filename: str, prefix: str) -> Iterator[Path]:
    """``data`` written to ``filename`` in a new temporary folder, removed with everything in it afterwards."""
    folder = tempfile.mkdtemp(prefix=prefix)
    try:
        path = Path(folder) / filename
        path.write_bytes(data)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def json_response(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json_bytes(doc), status_code=status, media_type="application/json", headers=headers)


async def read_upload(upload: UploadFile, limit: int, what: str, setting: str) -> bytes:
    """The whole file field, or :class:`LimitExceededError` (413) as soon as it passes ``limit`` bytes."""
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise LimitExceededError(f"{what} is larger than the limit of {limit} bytes ({setting})")
    return data


_MAX_NESTING = 64


def flat_data(data: list[Any], what: str, limit: int) -> list[Any]:
    """Nested row-major lists flattened without recursion (at most 64 levels, ``limit`` values)."""
    out: list[Any] = []
    stack: list[Iterator[Any]] = [iter(data)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, list):
                if len(stack) >= _MAX_NESTING:
                    raise InputError(f"{what}: data is nested more than {_MAX_NESTING} levels deep")
                stack.append(iter(item))
                break
            out.append(item)
            if len(out) > limit:
                raise LimitExceededError(f"{what} has more than {limit} values (OVREDUCE_MAX_ELEMENTS)")
        else:
            stack.pop()
    return out


def given_tensors(tensors: list[Tensor], limit: int) -> dict[str, npt.NDArray[Any]]:
    """KServe tensors as arrays by name; :class:`InputError` for a name given twice, limits enforced."""
    out: dict[str, npt.NDArray[Any]] = {}
    for tensor in tensors:
        what = f"input {tensor.name!r}"
        if tensor.name in out:
            raise InputError(f"{what} is given twice")
        count = math.prod(tensor.shape)
        if count > limit:
            raise LimitExceededError(f"{what} has shape {tensor.shape}: {count} elements, more than the limit of "
                                     f"{limit} (OVREDUCE_MAX_ELEMENTS)")  # fmt: skip
        flat = flat_data(tensor.data, what, limit)
        doc = {"name": tensor.name, "shape": tensor.shape, "datatype": tensor.datatype, "data": flat}
        out[tensor.name] = from_kserve(doc, what)
    return out
