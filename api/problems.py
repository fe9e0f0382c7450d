"""Every error the service answers, as RFC 9457 ``application/problem+json`` (under ``/v2`` KServe's ``{"error"}``).

Library errors map to statuses by their most specific class (:data:`STATUS_BY_ERROR`; Triton's under ``/v2``);
request validation is 400 ``request.invalid`` (422 means "not a readable IR"). docs/api.md lists the codes.
No answer names a path of the server: registered private paths (:func:`add_private_path`) are replaced by their
base names; names from the user's file are kept. :func:`responses` and :func:`openapi` shape the OpenAPI document.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from http.client import responses as phrases
from pathlib import Path
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from python_multipart.multipart import DEFAULT_MAX_HEADER_COUNT, DEFAULT_MAX_HEADER_SIZE
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from ovreduce.errors import (
    BackendError,
    IRError,
    LimitExceededError,
    NotFoundError,
    OvReduceError,
    ShapeInferenceError,
)
from ovreduce.reports.common import NON_FINITE, dumps

from .config import Settings
from .errors import (
    BusyError,
    MediaTypeError,
    RequestTooLargeError,
    RunTimeoutError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    WorkerDiedError,
)
from .schemas import Problem

__all__ = [
    "PROBLEM_MEDIA_TYPE",
    "STATUS_BY_ERROR",
    "V2_STATUS_BY_ERROR",
    "add_private_path",
    "answer_bytes",
    "answered",
    "error_response",
    "escaped",
    "held",
    "holding",
    "install",
    "no_route",
    "openapi",
    "private_names",
    "responses",
    "scrub",
    "scrub_json",
    "status_for",
]

PROBLEM_MEDIA_TYPE = "application/problem+json"
V = TypeVar("V")

STATUS_BY_ERROR: Mapping[type[OvReduceError], int] = {
    IRError: 422,
    ShapeInferenceError: 422,
    LimitExceededError: 413,
    RunTimeoutError: 504,
    NotFoundError: 404,
    MediaTypeError: 415,
    BackendError: 503,
    BusyError: 503,
    StoreError: 503,
    StoreCorruptError: 410,
    OvReduceError: 400,
}
V2_STATUS_BY_ERROR: Mapping[type[OvReduceError], int] = {  # KServe v2's, as Triton answers them
    RequestTooLargeError: 413,
    MediaTypeError: 415,
    NotFoundError: 404,
    StoreCorruptError: 404,
    BusyError: 503,
    RunTimeoutError: 503,
    BackendError: 503,
    StoreError: 503,
    OvReduceError: 400,  # InputError, LimitExceededError (Triton: invalid argument), IRError, anything else of ours
}
_RETRY_AFTER: Mapping[type[OvReduceError], str | None] = {  # the transient conditions
    BusyError: "5",
    WorkerDiedError: "5",
    StoreCorruptError: None,
    StoreFullError: "60",
    StoreError: "30",
}


def _most_specific(table: Mapping[type[OvReduceError], V], exc: OvReduceError) -> V | None:
    return next((table[cls] for cls in type(exc).__mro__ if cls in table), None)


def status_for(exc: OvReduceError) -> int:
    """The HTTP status of a library (or service) error: the entry of its most specific class."""
    return _most_specific(STATUS_BY_ERROR, exc) or 400  # (OvReduceError is in the table)


def _under_v2(path: str) -> bool:
    return path == "/v2" or path.startswith("/v2/")


# -- private paths ----------------------------------------------------------------------------------------
# Replaced whole (under the lock) when a path is added, so that readers need no lock.
_private_lock = threading.Lock()
_private: frozenset[str] = frozenset()
_private_re = re.compile("(?!)")  # matches nothing
# A registered prefix where a path segment ends (/tmpfoo is not /tmp), then the rest up to a blank, quote, ) ] , ; :
_TAIL = r"(?![^/\s'\"),;:\]])[^\s'\"),;:\]]*"


def add_private_path(path: str | os.PathLike[str]) -> None:
    """Never show ``path`` (nor anything under it) in an answer; its real path is registered too."""
    global _private, _private_re
    names = {os.fspath(path)}
    with contextlib.suppress(OSError, ValueError):  # a path that cannot even be resolved
        names |= {os.path.realpath(path), os.path.abspath(path)}
    with _private_lock:
        # "/" or a bare name would match everything: only absolute paths of two characters or more.
        known = _private | {n.rstrip("/") for n in names if len(n.rstrip("/")) >= 2 and os.path.isabs(n)}
        if known != _private:
            ordered = sorted(known, key=len, reverse=True)  # the longest (most specific) first
            _private = known
            _private_re = re.compile("|".join(f"(?<![\\w.~-])(?:{re.escape(p)}){_TAIL}" for p in ordered))


def add_server_paths(settings: Settings) -> None:
    """Register the store and the OpenVINO extensions' library folders (in the server and each worker process)."""
    from ovreduce._openvino import find_extension

    add_private_path(settings.store)
    for name in settings.extension_names():
        library = find_extension(name).library
        if library is not None:
            add_private_path(os.path.dirname(library))


for _path in (os.getcwd(), os.path.expanduser("~"), tempfile.gettempdir(), sys.prefix, sys.base_prefix,
              os.path.dirname(os.path.dirname(os.path.abspath(__file__)))):  # fmt: skip
    add_private_path(_path)


def _replace(match: re.Match[str]) -> str:
    token = match.group(0).rstrip("/")
    name = os.path.basename(token)
    return "<server path>" if token in _private or not name else name


_NAME_KEYS = frozenset({"layer_name", "name", "names", "full_name", "node", "missing_tensors"})
"""The members of the documents that hold names from the user's file, answered as they are: a layer named
``/tmp/cache/variance`` is not a path of the server. Where a message quotes such a name, the name is kept too."""


def scrub_json(body: bytes, sources: Sequence[bytes | str] = ()) -> bytes | None:
    """A JSON document with the private paths in its strings replaced, or None when it names none (the usual case,
    found by a cheap substring search). Kept: object keys, the members of :data:`_NAME_KEYS` and the messages' quotes
    of them, and what the request's ``sources`` hold (:func:`held`)."""
    if not any(p.encode() in body for p in _private):
        return None
    doc = json.loads(body)
    return dumps(scrub(doc, [*held(body.decode("utf-8", "replace"), sources), *_names(doc, "")]), indent=False)


_CUT = re.compile(r"[\[<>(]")
_MAX_HELD = 16


def held(text: str, sources: Sequence[bytes | str]) -> tuple[str, ...]:
    """The tokens of ``text`` a scrub would touch that the request's ``sources`` (path, body, files) hold, whole or up
    to their first bracket (``x[0]``): the user's own words, which tell a client nothing of the server. At most
    :data:`_MAX_HELD` tokens, two searches each: a search that finds nothing reads a gigabyte upload whole."""
    tokens: dict[str, None] = {}
    for match in _private_re.finditer(text) if sources else ():
        tokens[match[0]] = None
        if len(tokens) >= _MAX_HELD:
            break
    found = []
    for token in tokens:
        short = _CUT.split(token, 1)[0]
        if short and _holds(sources, short):  # (the whole token holds it: one search where neither is held)
            found.append(token if short != token and _holds(sources, token) else short)
    return tuple(found)


def _holds(sources: Sequence[bytes | str], part: str) -> bool:
    return any(part.encode() in s if isinstance(s, bytes) else part in s for s in sources)


@contextlib.contextmanager
def holding(*sources: bytes | str) -> Iterator[None]:
    """Errors raised inside keep the words of the request's ``sources`` that their message quotes (:func:`held`)."""
    try:
        yield
    except OvReduceError as exc:
        exc.quoted = (*getattr(exc, "quoted", ()), *held(exc.message, sources))  # type: ignore[attr-defined]
        raise


def private_names(names: Iterable[str]) -> tuple[str, ...]:
    """Those of the user's ``names`` that a scrub would touch (the few that begin like a private path)."""
    return tuple(n for n in set(names) if n and _private_re.search(n))


def _names(node: Any, key: str) -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _names(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _names(v, key)
    elif isinstance(node, str) and key in _NAME_KEYS:
        yield node


def scrub(value: Any, names: Iterable[str] = ()) -> Any:
    """``value`` (strings, lists and dicts, recursively) with every private path replaced by its base name; kept: the
    members of :data:`_NAME_KEYS` and the user's ``names`` where a string quotes them whole."""
    kept = sorted(private_names(names), key=len, reverse=True)  # (not where a name is part of a longer path)
    kept_re = re.compile(rf"(?<![^\s'\"(\[,;:=])({'|'.join(map(re.escape, kept))})(?=[\s'\"),;:\]\[<>(]|\Z)")

    def walk(node: Any, key: str) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, k) for k, v in node.items()}
        if isinstance(node, list | tuple):
            return [walk(v, key) for v in node]
        if not isinstance(node, str) or key in _NAME_KEYS:
            return node
        parts = kept_re.split(node) if kept else [node]  # the text between the names it quotes, and the names
        return "".join(part if i % 2 else _private_re.sub(_replace, part) for i, part in enumerate(parts))

    return walk(value, "")


# -- documents --------------------------------------------------------------------------------------------
_MAX_DETAIL = 4000  # characters of an answered error message, at most


def answered(message: str, names: Iterable[str] = ()) -> str:
    """An error message as answered: scrubbed but for the user's ``names``, a huge one cut to its ends."""
    if len(message) > _MAX_DETAIL:
        cut = len(message) - _MAX_DETAIL
        message = f"{message[: _MAX_DETAIL // 2]} ... ({cut} characters cut) ... {message[-_MAX_DETAIL // 2 :]}"
    return str(scrub(message, names))


def problem_document(
    status: int, detail: str, code: str, *, instance: str | None = None, names: Iterable[str] = (), **extra: Any
) -> dict[str, Any]:
    """The problem document, ``detail`` and ``extra`` scrubbed but for the user's ``names`` (:func:`answered`)."""
    doc: dict[str, Any] = {
        "type": f"urn:ovreduce:problem:{code}",
        "title": phrases.get(status, "Error"),
        "status": status,
        "detail": answered(detail, names),
        "code": code,
    }
    if instance is not None:
        doc["instance"] = instance
    doc.update(scrub(extra, names))
    return doc


def error_response(
    request: Request,
    status: int,
    detail: str,
    code: str,
    *,
    headers: Mapping[str, str] | None = None,
    names: Iterable[str] = (),
    **extra: Any,
) -> Response:
    """The answer to ``request`` of :func:`answer_bytes`."""
    body, media = answer_bytes(status, detail, code, request.scope["path"], names=names, **extra)
    return Response(body, status, dict(headers or {}), media)


def answer_bytes(
    status: int, detail: str, code: str, path: str | None, *, names: Iterable[str] = (), **extra: Any
) -> tuple[bytes, str]:
    """An error's answer to a request for ``path`` (None: not known) and its media type: problem+json, or under
    ``/v2`` KServe's ``{"error": detail}``; ``names``: the user's, which the message may quote (:func:`answered`)."""
    if path is not None and _under_v2(path):
        return json.dumps({"error": answered(detail, names)}).encode(), "application/json"
    doc = problem_document(status, detail, code, instance=path, names=names, **extra)
    return json.dumps(doc).encode(), PROBLEM_MEDIA_TYPE


def escaped(text: str) -> str:
    """A request's text as a message or the log shows it: line breaks, escape sequences, bidirectional overrides
    and other characters that do not print escaped, so that it forges no line and hides nothing it holds."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text[:2000])


# -- handlers -------------------------------------------------------------------------------------------
async def _library_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OvReduceError)
    extra = {key: value for key in ("layer_id", "layer_name") if (value := getattr(exc, key)) is not None}
    status = status_for(exc)
    if _under_v2(request.url.path):  # a status of its own (api.kserve.RefusedError's), or Triton's for its class
        status = getattr(exc, "status", None) or _most_specific(V2_STATUS_BY_ERROR, exc) or 400
    retry = _most_specific(_RETRY_AFTER, exc)
    names = getattr(exc, "quoted", ())  # the user's names its message may quote, which the worker found
    headers = {"Retry-After": retry} if retry else {}
    return error_response(request, status, exc.message, exc.code, headers=headers, names=names, **extra)


async def _client_gone(request: Request, exc: Exception) -> Response:
    """A body the client stopped sending: it has gone, as one that leaves while its job waits (nothing is sent)."""
    return Response(status_code=499)


_UNREADABLE = {  # why FastAPI could not read a body ("There was an error parsing the body"), by the cause
    RecursionError: "it is nested too deeply",
    UnicodeDecodeError: "it is not UTF-8 text",
    ClientDisconnect: "the client closed the connection before the body arrived",
}

_FORM_ERRORS = {  # python-multipart's words (the bounds: MultipartParser's defaults, which Starlette keeps), else
    # Starlette's (FastAPI keeps its bounds), by a pattern of their start: ours, with the numbers they name
    r"Maximum header size exceeded\Z": f"a part has a header line longer than {DEFAULT_MAX_HEADER_SIZE} bytes (a "
    f"long file name, say), or one without a colon, which the parser reads on into the part; shorten it, or write "
    f"it as 'Name: value'",
    r"Maximum header count exceeded\Z": f"a part has more than {DEFAULT_MAX_HEADER_COUNT} header lines",
    r"Found invalid character (\d+) in header at (\d+)\Z": r"a part's header holds a character a header name cannot "
    r"hold (byte \1) at byte \2 of the body: a line without its colon, a folded line, or a line break in a file name",
    r"(?s:(?:Expected boundary character|Did not find (?:CR|LF) at end of boundary).*)": r"it does not begin with its "
    r"first boundary line, '--' and the boundary of its Content-Type, then a line break; text before it (a preamble) "
    r"is not read (\g<0>)",
    r"Missing boundary": "its Content-Type names no boundary",
    r"Too many fields\D*(\d+)": r"it has more than \1 text fields (parts without a filename); a request takes each "
    r"field once",
    r"Too many files\D*(\d+)": r"it has more than \1 files; a request takes each of its files once",
    r"Part exceeded maximum size\D*(\d+)": r"a text field (a part without a filename) holds more than \1 KiB; send a "
    r"model's files as file parts, each with a filename",
    r"The Content-Disposition header field": "a part has no name; expected a header such as 'Content-Disposition: "
    'form-data; name="xml"; filename="model.xml"\'',
}


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    path = request.scope["path"]  # as requested (the URL Starlette builds drops tabs and line breaks)
    detail = exc.detail if isinstance(exc.detail, str) else phrases.get(exc.status_code, "Error")
    code = f"http.{exc.status_code}"
    headers = dict(exc.headers or {})
    if exc.status_code == 404 and detail == "Not Found":
        detail = no_route(request.method, path)
        if path.endswith("/") and path != "/" and _allowed_methods(request, path.rstrip("/")):
            detail += f" (without the trailing slash: {escaped(path.rstrip('/'))})"
    elif detail == "There was an error parsing the body":
        cause = exc.__cause__
        why = cause.message if isinstance(cause, OvReduceError) else _UNREADABLE.get(type(cause), "it cannot be read")
        detail = f"the request body cannot be read as JSON: {why}"
    elif isinstance(exc.__context__, MultiPartException):  # Starlette's refusal of the form, in its words
        said = str(exc.__context__.__cause__ or "") or exc.__context__.message  # python-multipart's, else Starlette's
        why = next((m.expand(ours) for pattern, ours in _FORM_ERRORS.items() if (m := re.match(pattern, said))), said)
        detail, code = f"the multipart body cannot be read: {why}", "request.invalid"  # as a body cut short is
    elif exc.status_code == 405:  # Starlette names the methods of one route; the resource may have several
        headers["Allow"] = ", ".join(_allowed_methods(request))
        detail = f"{request.method[:20]} is not allowed on {escaped(path[:200])}; it takes {headers['Allow']}"
    # the path as the client sent it is its own (a layer named /tmp/x)
    names = (escaped(path[:200]), escaped(path.rstrip("/")))
    return error_response(request, exc.status_code, detail, code, headers=headers, names=names)


def no_route(method: str, path: str) -> str:
    """What a 404 for a path that no route serves says."""
    return f"no route for {method} {escaped(path[:200])}; " + (
        "ovreduce serves the KServe v2 server and model metadata, health, readiness, inference and repository index"
        if _under_v2(path) else "see /docs for the API"
    )  # fmt: skip


def _allowed_methods(request: Request, path: str | None = None) -> list[str]:
    """Every method some route or mount (files: GET) of ``app.state.routes`` serves at this path."""
    path = request.scope.get("path", "") if path is None else path
    routes = getattr(request.app.state, "routes", [])
    allowed = {m for r in routes if r.path_regex.match(path) for m in getattr(r, "methods", None) or {"GET"}}
    return sorted(allowed | ({"HEAD"} if "GET" in allowed else set()))  # HEAD is answered wherever GET is


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first_error: dict[str, Any] = next(iter(exc.errors()), {})
    if first_error.get("type") == "json_invalid":  # FastAPI's "JSON decode error", its offset shown as a field
        why, at = (first_error.get("ctx") or {}).get("error", "not JSON"), first_error.get("loc", ("", "?"))[-1]
        detail = f"the request body cannot be read as JSON: {why} (at character {at})"
        return error_response(request, 400, detail, "http.400")
    errors = [
        {"loc": [str(p) for p in err.get("loc", ())], "msg": str(err.get("msg", "")), "type": str(err.get("type", ""))}
        for err in exc.errors()[:20]
    ]
    for err in errors:  # a form field sent as text where a file is taken: in words, not pydantic's
        if "Expected UploadFile" in err["msg"]:
            err["msg"] = 'a file is expected: a part with filename="..." (not filename*=, which RFC 7578 forbids)'
    detail = "the request is not valid"
    if errors:
        detail += f": {' -> '.join(errors[0]['loc'])}: {errors[0]['msg']}"
    if len(errors) > 1:
        detail += f" (and {len(errors) - 1} more)"
    return error_response(request, 400, detail, "request.invalid", errors=errors)


def install(app: FastAPI) -> None:
    """Register the handlers: the library's whole tree, HTTP errors, validation, a client gone mid-upload."""
    app.add_exception_handler(OvReduceError, _library_error)
    app.add_exception_handler(ClientDisconnect, _client_gone)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)


# -- OpenAPI ----------------------------------------------------------------------------------------------
EXAMPLES: dict[str, Any] = json.loads((Path(__file__).parent / "openapi_examples.json").read_text("utf-8"))
"""The OpenAPI examples recorded from the service on the samples (``openapi_examples.json``)."""

_DESCRIPTIONS: dict[int | str, str] = {
    400: "The request is malformed (problem+json, code request.invalid, input or usage)",
    403: "A cross-origin state-changing request (problem+json, code request.origin)",
    404: "Unknown model, layer or route (problem+json, code not_found)",
    410: "The stored model failed its integrity check and was removed; upload it again (code store.corrupt)",
    413: "Too large: body, upload, XML, layer count or tensor elements (problem+json, code limit*)",
    415: "A body in a media type or content coding the route does not read (problem+json, code request.media_type)",
    422: "The upload is not a readable OpenVINO IR (problem+json, code ir.*)",
    503: "Not available: OpenVINO device, busy workers or the store (problem+json)",
    504: "The run took longer than the time limit (problem+json, code limit.time)",
    "default": "Any other error, e.g. 500 internal (problem+json)",
}


def responses(route: str, *statuses: int) -> dict[int | str, dict[str, Any]]:
    """The problem+json answers of ``route`` (``"<method> <path>"``) for its OpenAPI entry: ``statuses`` and
    ``default``, each with its examples from :data:`EXAMPLES`."""
    out: dict[int | str, dict[str, Any]] = {}
    instance = re.sub(r"\{(\w+)\}", lambda m: str(EXAMPLES["parameters"][m[1]]), route.split(" ", 1)[1])
    unsafe = route.split(" ", 1)[0].upper() in ("POST", "PUT", "PATCH", "DELETE")  # (a cross-origin one is 403)
    body = route.split(" ", 1)[0].upper() in ("POST", "PUT", "PATCH")  # (in another media type or coding: 415)
    every: list[int | str] = [*sorted({*statuses, *([403] if unsafe else []), *([415] if body else [])}), "default"]
    for status in every:
        number = 500 if isinstance(status, str) else status  # "default"
        examples: dict[str, Any] = {}
        for p in EXAMPLES["problems"].get(str(status), EXAMPLES["problems"]["default"]):
            if route in p.get("routes", [route]):  # an example recorded for other routes only is not this one's
                name = p["code"] if p["code"] not in examples else f"{p['code']} ({len(examples) + 1})"
                examples[name] = {"summary": f"{number} {p['code']}", "value": {
                    "type": f"urn:ovreduce:problem:{p['code']}", "title": phrases[number], "status": number,
                    "detail": p["detail"], "code": p["code"], "instance": instance, **p.get("extra", {})}}  # fmt: skip
        out[status] = {"model": Problem, "description": _DESCRIPTIONS.get(status, "Error (problem+json)"),
                       "content": {PROBLEM_MEDIA_TYPE: {"examples": examples}}}  # fmt: skip
    return out


def _references(node: Any, components: Mapping[str, Any]) -> set[str]:
    """The components ``node`` refers to, directly or through others."""
    found: set[str] = set()
    todo = [node]
    while todo:
        for name in set(re.findall(r'"\$ref": "#/components/schemas/([^"/]+)"', json.dumps(todo.pop()))) - found:
            found.add(name)
            todo.append(components.get(name))
    return found


def _non_finite_allowed(node: Any) -> Any:
    """``node`` with each number also taking the strings every document writes for a float that is not finite."""
    if isinstance(node, dict):
        if node.get("type") == "number":
            return {"anyOf": [node, {"type": "string", "enum": list(NON_FINITE)}]}
        return {k: _non_finite_allowed(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_non_finite_allowed(v) for v in node]
    return node


def openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema with the error answers under application/problem+json (FastAPI puts them under the route's
    media type) and the successes' examples (added here: FastAPI drops their many null members). An optional JSON
    body may be left out, but its schema does not take ``null`` (refused)."""
    if not app.openapi_schema:
        schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        for path, path_item in schema["paths"].items():
            for method, operation in path_item.items():
                body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
                if {"type": "null"} in body.get("schema", {}).get("anyOf", ()):  # optional: left out, never null
                    (kept,) = (s for s in body["schema"].pop("anyOf") if s != {"type": "null"})
                    body["schema"].update(kept)
                for status, answer in operation["responses"].items():
                    content = answer.get("content", {})
                    if (status == "default" or status >= "400") and "application/json" in content:
                        content.setdefault(PROBLEM_MEDIA_TYPE, {}).update(content.pop("application/json"))
                for status, example in EXAMPLES["responses"].get(f"{method} {path}", {}).items():
                    operation["responses"][status]["content"]["application/json"]["example"] = example
        components = schema.get("components", {}).get("schemas", {})
        requests = _references([op.get("requestBody") for item in schema["paths"].values() for op in item.values()],
                               components)  # fmt: skip
        for name, component in components.items():
            if name not in requests:  # an answer's number may be "NaN", "Infinity" or "-Infinity" (docs/api-fields.md)
                components[name] = _non_finite_allowed(component)
        app.openapi_schema = schema
    return app.openapi_schema
