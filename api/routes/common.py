"""What the routers share: JSON answers, uploads and their names, KServe request tensors, temporary files."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy.typing as npt
from fastapi import UploadFile
from starlette.responses import Response

from api.problems import responses
from api.schemas import Tensor
from ovreduce.errors import InputError, LimitExceededError
from ovreduce.reports.common import dumps
from ovreduce.shapes import PartialShape
from ovreduce.tensors import from_kserve

__all__ = [
    "STORED_MODEL_PROBLEMS",
    "UPLOAD_PROBLEMS",
    "display_name",
    "given_tensors",
    "json_bytes",
    "json_response",
    "parse_shapes",
    "read_upload",
    "upload_names",
]
# The problems a route may answer, for its OpenAPI entry: work on an upload, work on a stored model.
UPLOAD_PROBLEMS = responses(400, 413, 422, 503, 504)
STORED_MODEL_PROBLEMS = responses(400, 404, 413, 422, 503, 504)


def json_bytes(doc: Any) -> bytes:
    """Compact JSON, as the CLI writes its documents: non-finite floats as "NaN"/"Infinity"/"-Infinity"."""
    return dumps(doc, indent=False)


def json_response(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json_bytes(doc), status_code=status, media_type="application/json", headers=headers)


async def read_upload(upload: UploadFile, limit: int, what: str, setting: str) -> bytes:
    """The whole file field, or :class:`LimitExceededError` (413) as soon as it passes ``limit`` bytes."""
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise LimitExceededError(f"{what} is larger than the limit of {limit} bytes ({setting})")
    return data


def display_name(filename: str | None, default: str) -> str:
    """The name an uploaded file is shown by: its base name, printable, at most 200 characters."""
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()[:200]
    return base or default


def upload_names(xml: UploadFile, bin_file: UploadFile | None) -> tuple[str, str]:
    """The names an uploaded IR's two files are shown by (the bin's defaults to the xml's, with ``.bin``)."""
    filename = display_name(xml.filename, "model.xml")
    return filename, display_name(bin_file.filename if bin_file else None, filename.rsplit(".", 1)[0] + ".bin")


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


def parse_shapes(items: dict[str, str]) -> dict[str, PartialShape]:
    """A request's ``shapes`` (name -> OpenVINO shape text); :class:`InputError` naming the bad entry."""
    out = {}
    for name, text in items.items():
        try:
            out[name] = PartialShape.parse(text)
        except ValueError as exc:
            raise InputError(f"shapes[{name!r}] = {text!r}: {exc}") from None
    return out
