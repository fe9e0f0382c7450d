"""What the routers share: JSON answers, uploads and their names, KServe request tensors, temporary files."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Coroutine, Iterable, Sequence
from typing import Any, TypeVar, get_args, get_origin

import anyio
import numpy.typing as npt
from fastapi import Request, UploadFile
from fastapi import params as params_
from fastapi.dependencies.utils import request_params_to_args
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import AfterValidator
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile as StarletteUpload
from starlette.responses import Response

from ovreduce.errors import InputError, LimitExceededError
from ovreduce.reports.common import dumps
from ovreduce.shapes import PartialShape, parse_named_shapes
from ovreduce.tensors import check_elements, flat_values, from_kserve

from ..config import Settings
from ..errors import MediaTypeError
from ..problems import holding, scrub_json
from ..schemas import V2_OPTIONS, AuditRequest, RunRequest, Tensor, near_miss
from ..store.disk import write_error

__all__ = [
    "STORED_MODEL_PROBLEMS",
    "UPLOAD_PROBLEMS",
    "ServiceRoute",
    "display_name",
    "document_bytes",
    "given_tensors",
    "json_response",
    "named_shapes",
    "parse_json",
    "parse_named",
    "parse_shapes",
    "read_ir_upload",
    "read_json",
    "read_upload",
    "with_flat_inputs",
]
_R = TypeVar("_R", AuditRequest, RunRequest)
# The problems a route may answer (their statuses, for its OpenAPI entry): work on an upload, on a stored model.
UPLOAD_PROBLEMS = (400, 413, 422, 503, 504)
STORED_MODEL_PROBLEMS = (400, 404, 410, 413, 422, 503, 504)


_FORM = ("multipart/form-data", "multipart/form-data (an upload): send it with that Content-Type")  # what a route
_JSON = (r"application/(?:.*\+)?json", "application/json: send it with that Content-Type")  # reads, and in words
_INLINE_JSON = 64 << 10  # larger JSON bodies are read off the event loop, and hold memory for what parsing makes
_JSON_EXPANSION = 50
"""The most memory parsing a JSON body takes per byte of it, as Python objects: ``[[[…]]]`` takes 48 times."""


def read_json(body: bytes) -> Any:
    """A request's JSON as Python reads it (``NaN``, ``Infinity`` included); :class:`InputError` for a number past the
    float range (read as inf: ``1e400``), an integer over 4,300 digits, or a key given twice (the last would win)."""
    try:
        return json.loads(body, parse_float=_finite, parse_int=_integer, object_pairs_hook=_unique_keys)
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) or "digits" not in str(exc):
            raise
        raise InputError(
            "the body holds an integer of more than 4300 digits, more than any tensor type holds"
        ) from None


async def parse_json(body: bytes) -> Any:
    """:func:`read_json`, a large body off the event loop."""
    return read_json(body) if len(body) <= _INLINE_JSON else await run_in_threadpool(read_json, body)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = {key: value for key, value in pairs}  # (a loop of Python's: the event loop runs between keys)
    if len(obj) < len(pairs):
        twice = next(key for key, n in Counter(key for key, _ in pairs).items() if n > 1)
        raise InputError(f"a JSON object of the body gives the key {twice[:40]!r} more than once; give each key once")
    return obj


def _integer(text: str) -> int:  # (Python's own call: the thread parsing lets the event loop run between numbers)
    return int(text)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise InputError(
            f"the number {text[:40]} is beyond the range of a 64-bit float; write Infinity if that is meant"
        )
    return value


class _JSONRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            self._json = await parse_json(body)
            if self._json is None:  # FastAPI would take it for no body at all, and run on the defaults
                raise InputError("the body is JSON null; send an object, or no body for the defaults")
        return self._json


async def _unless_gone(handler: Callable[[Request], Coroutine[Any, Any, Response]], request: Request) -> Response:
    """``handler``'s answer, unless the client leaves first (``http.disconnect``, watched once the body is in: a POST's
    is read before the handler, another method's left unread): then the handler is cancelled (its job not started, or
    stopped: :meth:`api.workers.IsolatedPool.run`) and 499 is counted, nginx's "client closed request"."""
    headers = request.headers
    if request.method != "POST" and ("transfer-encoding" in headers or headers.get("content-length", "0") != "0"):
        return await handler(request)
    with anyio.CancelScope() as scope:

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            scope.cancel()

        watching = asyncio.ensure_future(watch())
        try:
            return await handler(request)
        finally:
            watching.cancel()
    return Response(status_code=499)  # (sent to nobody)


class ServiceRoute(APIRoute):
    """Every route of the service: its body holds its share of the body memory (:meth:`_held`) once it is in until it
    is answered, its JSON body is read by :func:`read_json` (a large one off the event loop), and before the handler
    runs the request is refused for a compressed body (it would be read as plain), a path or query value the handler
    would refuse, a POST's model the store does not hold (404; all before the body is asked for), a query parameter
    or form field given twice that the route reads once (the last would win silently; lists such as ``reshape``
    repeat), or one the route does not read (a misspelt option would be ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # KServe's routes take any: the protocol defines none, and its clients and proxies add their own
        self.queries = frozenset(p.alias for p in self.dependant.query_params) if self.path.startswith("/v1/") else None
        self.scalar_queries = frozenset(p.alias for p in self.dependant.query_params if not _is_list(p.field_info))
        self.takes_form = isinstance(getattr(self.body_field, "field_info", None), params_.Form)  # an upload route
        self.fields = frozenset(p.alias for p in self.dependant.body_params) if self.takes_form else frozenset()

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            request = _JSONRequest(request.scope, request.receive)
            await self._check(request)  # a form read and parsed (a few parts at most), the query checked
            # a body a POST sends, read whole (within the body limit); another method's is left unread, as it was
            body = await request.body() if request.method == "POST" and not self.takes_form else b""
            # what the body takes in this process once it is in (a client slow to send it holds none), until the
            # answer: the job's limit counts the wait
            held, memory = await self._held(request, body), request.app.state.services.uploads
            hold = memory.hold(held, f"{request.method} {self.path_format}") if held else contextlib.nullcontext()
            async with hold as since:
                request.state.since = since
                return await _unless_gone(handler, request)

        return checked

    async def _held(self, request: Request, body: bytes) -> int:
        """The memory a request's body takes here (``OVREDUCE_UPLOAD_MEMORY_BYTES``): an upload's files, read whole
        to go to a worker; a body past 64 KiB, what parsing makes of its JSON, whatever its Content-Type says, and
        twice the rest (the raw tensors after a KServe inference request's JSON head); a small one, nothing."""
        if self.takes_form:
            form = await request.form()  # (as parsed)
            return sum(value.size or 0 for _, value in form.multi_items() if isinstance(value, StarletteUpload))
        if len(body) <= _INLINE_JSON:
            return 0
        head = (
            request.headers.get("inference-header-content-length", "").strip() if self.path.endswith("/infer") else ""
        )
        json_part = min(int(head), len(body)) if head.isascii() and head.isdigit() and len(head) < 20 else len(body)
        return _JSON_EXPANSION * json_part + 2 * (len(body) - json_part)

    async def _check(self, request: Request) -> None:  # what the head decides, before the body is asked for
        encoding = _coding(request.headers.getlist("content-encoding"))
        if encoding is not None:
            raise MediaTypeError(f"Content-Encoding {encoding!r} is not read by ovreduce; send the body uncompressed")
        sent = "transfer-encoding" in request.headers or request.headers.get("content-length", "0") != "0"
        media = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        pattern, wanted = _FORM if self.takes_form else _JSON  # (FastAPI reads JSON so labelled only)
        if sent and self.body_field and not re.fullmatch(pattern, media, re.DOTALL):
            raise MediaTypeError(f"the body is sent as {repr(media[:60]) if media else 'no Content-Type'}; "
                                 f"{request.method} {self.path_format} reads {wanted}")  # fmt: skip
        # KServe's routes take a client's own query parameters, not ovreduce's options (they would be dropped)
        own = [key for key in request.query_params if key in V2_OPTIONS or near_miss(key, V2_OPTIONS)]
        if own and self.queries is None:
            raise InputError(f"{request.method} {self.path_format} reads no query parameter {own[0][:40]!r}; "
                             f"ovreduce's options go in the request's JSON")  # fmt: skip
        if request.scope["query_string"] and (self.queries or self.scalar_queries):
            counts = Counter(key for key, _ in request.query_params.multi_items())
            twice = sorted(key for key, n in counts.items() if n > 1 and key in self.scalar_queries)
            if twice:
                raise InputError(f"the query gives {', '.join(map(repr, twice))} more than once; give each once")
            if self.queries is not None:
                self._known("query parameter", counts, self.queries, request)
        # the path's and the query's values as the handler will be given them, and the model a POST names as stored
        path, errors = request_params_to_args(self.dependant.path_params, request.path_params)
        errors += request_params_to_args(self.dependant.query_params, request.query_params)[1]
        if errors:
            raise RequestValidationError(errors)
        if request.method == "POST" and "model_id" in path:  # (its stored summary: no model is parsed here)
            await run_in_threadpool(request.app.state.services.catalog.reduction_paths, path["model_id"])
        if self.takes_form:
            try:
                # parsed once: the handler is given this form (Starlette keeps it). A part under 1 MiB stays in memory:
                # a form of more parts than the route takes a field once more is refused as soon as it has them
                most = len(self.fields) + 1
                form = await request.form(max_files=most, max_fields=most)
            except OSError as exc:  # a file part past 1 MiB waits on disk
                raise write_error(exc, "the upload cannot be received", "the server's temporary folder") from None
            twice = sorted(key for key, n in Counter(key for key, _ in form.multi_items()).items() if n > 1)
            multipart = request.headers.get("content-type", "").lower().startswith("multipart/form-data")
            unknown = multipart and not form.keys() <= self.fields  # (another media type: the validation says so)
            coded = [(key, said) for key, value in form.multi_items() if isinstance(value, StarletteUpload)
                     and (said := _coding([*value.headers.getlist("content-encoding"),
                                           *value.headers.getlist("content-transfer-encoding")],
                                          plain=("", "identity", "binary", "8bit", "7bit"))) is not None]  # fmt: skip
            if twice or coded or unknown:
                await form.close()
            if twice:
                raise InputError(f"the form gives {', '.join(map(repr, twice))} more than once; send each field once")
            if unknown:
                self._known("form field", form.keys(), self.fields, request)
            if coded:
                raise InputError(f"the form field {coded[0][0]!r} is sent encoded ({coded[0][1]!r}), which ovreduce "
                                 f"does not read; send the file as it is")  # fmt: skip

    def _known(self, what: str, given: Iterable[str], read: Collection[str], request: Request) -> None:
        unknown = sorted(set(given) - set(read))
        if unknown:
            shown = ", ".join(repr(name[:40]) for name in unknown[:5]) + (" ..." if len(unknown) > 5 else "")
            raise InputError(f"{request.method} {self.path_format} reads no {what} {shown}; it reads "
                             f"{', '.join(sorted(read))}")  # fmt: skip


def _coding(values: Iterable[str], plain: Collection[str] = ("", "identity")) -> str | None:
    """The codings the headers' values list (at most 40 characters), or None when each is one of ``plain``."""
    said = ",".join(values).strip().lower()
    return None if all(coding.strip(" \t") in plain for coding in said.split(",")) else said[:40]


def document_bytes(doc: Any, sources: Sequence[bytes | str] = ()) -> bytes:
    """An answer's JSON, made in the worker, with server paths in OpenVINO's messages replaced (not ``sources``')."""
    body = dumps(doc, indent=False)  # (non-finite floats as the CLI writes them: "NaN", "Infinity"...)
    return scrub_json(body, sources) or body


def json_response(doc: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(doc, indent=False), status_code=status, media_type="application/json", headers=headers)


async def read_upload(upload: UploadFile, limit: int, what: str, setting: str) -> bytes:
    """The whole file field, or :class:`LimitExceededError` (413) as soon as it passes ``limit`` bytes."""
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise LimitExceededError(f"{what} is larger than the limit of {limit} bytes ({setting})")
    return data


def _is_list(field: Any) -> bool:
    annotation = field.annotation
    return list in (get_origin(annotation), *(get_origin(a) for a in get_args(annotation)))


def display_name(filename: str | None, default: str) -> str:
    """The name an uploaded file is shown by: its base name, printable, at most 200 characters."""
    base = (filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()[:200]
    return base or default


async def read_ir_upload(
    settings: Settings, xml: UploadFile, bin_file: UploadFile | None
) -> tuple[bytes, bytes | None, str, str]:
    """An uploaded IR's xml and bin, each within its limit, and their names (the bin's defaults to the xml's)."""
    xml_bytes = await read_upload(xml, settings.max_xml_bytes, "the xml", "OVREDUCE_MAX_XML_BYTES")
    bin_bytes = None
    if bin_file is not None:
        bin_bytes = await read_upload(bin_file, settings.max_upload_bytes, "the bin", "OVREDUCE_MAX_UPLOAD_BYTES")
    filename = display_name(xml.filename, "model.xml")
    bin_name = display_name(bin_file.filename if bin_file else None, filename.rsplit(".", 1)[0] + ".bin")
    return xml_bytes, bin_bytes, filename, bin_name


def with_flat_inputs(req: _R, limit: int) -> _R:
    """The request with its tensors checked and flat, before anything (a worker's pipe) walks the nested lists."""
    out = []
    with holding(*(tensor.name for tensor in req.inputs)):  # its refusals quote the client's names as sent
        for tensor in req.inputs:
            what = f"input {tensor.name!r}"
            check_elements(tensor.shape, limit, what)
            out.append(tensor.model_copy(update={"data": flat_values(tensor.data, tensor.shape, what, limit)}))
    return req.model_copy(update={"inputs": out})


def given_tensors(tensors: list[Tensor]) -> dict[str, npt.NDArray[Any]]:
    """KServe tensors, checked and made flat as the request arrived (:func:`with_flat_inputs`), as arrays by name."""
    out: dict[str, npt.NDArray[Any]] = {}
    for tensor in tensors:
        what = f"input {tensor.name!r}"
        if tensor.name in out:
            raise InputError(f"{what} is given twice")
        out[tensor.name] = from_kserve(dict(tensor), what)
    return out


def parse_named(items: str | list[str] | None, what: str) -> dict[str, PartialShape]:
    """Shapes given in query parameter ``what`` as ``NAME=SHAPE``; :class:`InputError` naming it when one is wrong."""
    try:
        return parse_named_shapes([items] if isinstance(items, str) and items else items or [])
    except ValueError as exc:
        raise InputError(f"{what} {exc}") from None


def named_shapes(what: str) -> AfterValidator:
    """Checks query parameter ``what`` (:func:`parse_named`), kept as given, as the query is validated: before any body
    is read."""
    return AfterValidator(lambda items: (parse_named(items, what), items)[1])


def parse_shapes(items: dict[str, str]) -> dict[str, PartialShape]:
    """A request's ``shapes`` (name -> OpenVINO shape text); :class:`InputError` naming the bad entry."""
    out = {}
    for name, text in items.items():
        try:
            out[name] = PartialShape.parse(text)
        except ValueError as exc:
            raise InputError(f"shapes[{name!r}] = {text!r}: {exc}") from None
    return out
