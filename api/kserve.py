"""The KServe v2 (Open Inference Protocol) codec of :mod:`api.routes.v2`: model names, the inference request
(JSON header and binary tensor data) checked and decoded, the answer encoded, and the protocol's errors.

Header lengths, shapes, sizes and nesting are checked on the request's bytes before anything is converted, copied
or pickled to a worker. Nothing here knows HTTP routing.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from ovreduce.backends.base import LayerSpec
from ovreduce.errors import BackendError, InputError, NotFoundError, OvReduceError
from ovreduce.ir.dtypes import ElementType, element_type_from_kserve
from ovreduce.reports.common import dumps
from ovreduce.tensors import EXECUTABLE_TYPES, check_elements, flat_values, from_kserve, json_quoted, to_kserve

from .problems import scrub
from .routes.common import read_json
from .schemas import V2_OPTIONS, RunRequest, V2InferRequest, near_miss
from .store.disk import canonical_id

__all__ = [
    "MODEL_NAME",
    "Inputs",
    "NotReadyError",
    "RefusedError",
    "canonical_name",
    "decode_request",
    "encode_answer",
    "given_arrays",
    "header_length_of",
    "model_name",
    "parse_name",
]

MODEL_NAME = re.compile(r"(?P<id>[0-9a-f]{64})\.(?P<path>[0-9]+(?:-(?:then|else|body)-[0-9]+)*)")
"""A v2 model name: ``<model id>.<layer ids path with "-" for "/">``."""
VERSION = "1"
OUTPUT = "output"
HEADER_LENGTH = "inference-header-content-length"


class NotReadyError(BackendError):
    """The model exists but cannot run (its shapes or types cannot be resolved, or are not executable): 503."""

    code = "v2.not_ready"


class RefusedError(OvReduceError):
    """An answer with a status of its own (404 unknown version), which :mod:`api.problems` answers under ``/v2``."""

    code = "v2"

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status  # pickled with the instance's __dict__


def model_name(mid: str, path: str) -> str:
    """The v2 name of layer ``path`` (an ids path) of stored model ``mid``."""
    return f"{mid}.{path.replace('/', '-')}"


def shown(name: str) -> str:
    return repr(name if len(name) <= 200 else name[:200] + "...")


def canonical_name(name: str) -> str:
    """A v2 model name asked for with its model id in any case, with the id in the lower case the store names it in."""
    mid, dot, path = name.partition(".")
    return canonical_id(mid) + dot + path


def parse_name(name: str, version: str | None = None) -> tuple[str, str]:
    """The stored model id and the layer's ids path a v2 model name (and version) stands for (404 when none)."""
    if version is not None and version != VERSION:
        raise RefusedError(f"Request for unknown model version {shown(version)}: ovreduce models have version "
                           f"{VERSION} only", 404)  # fmt: skip
    found = MODEL_NAME.fullmatch(name)
    if found is None:
        raise NotFoundError(
            f"Request for unknown model: {shown(name)} is not found; ovreduce names a model "
            f"<model id>.<layer ids path with '-' for '/'>, e.g. <id>.12 or <id>.12-then-110 "
            f"(POST /v2/repository/index lists them)"
        )
    return found["id"], found["path"].replace("-", "/")


Input = tuple[str, list[int], str, "bytes | list[Any]"]  # name, shape, datatype, binary or JSON data
Inputs = list[Input] | bytes  # bytes: a raw binary request's, its layer's one input (Triton's)


def _element_type(datatype: str, what: str) -> ElementType:
    try:
        etype = element_type_from_kserve(datatype)
    except OvReduceError as exc:
        raise InputError(f"{what}: {exc.message}") from None
    if etype.name not in EXECUTABLE_TYPES:
        raise InputError(f"{what}: reductions of {datatype} data cannot be executed")
    return etype


def _first_error(exc: ValidationError, whole: str = "") -> str:
    first = exc.errors()[0]
    said = str(first.get("msg", "")).removeprefix("Value error, ")  # (pydantic's words before a validator's own)
    return f"{'.'.join(str(p) for p in first.get('loc', ())) or whole}: {said}"


def header_length_of(header: str, size: int | None) -> int:
    """Inference-Header-Content-Length's value, a length within a body of ``size`` bytes (None: not known yet)."""
    text = header.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 20 or (size is not None and int(text) > size):
        said = header.encode("latin-1").decode("utf-8", "replace")  # as sent: Starlette reads latin-1
        within = "" if size is None else f" within the request body of {size} bytes"
        raise InputError(f"Inference-Header-Content-Length: {said[:40]!r} is not a length{within}")
    return int(text)


def decode_request(body: bytes, header_length: str | None, max_elements: int) -> tuple[V2InferRequest, Inputs]:
    """The JSON header and the inputs of an inference request; every binary tensor's size is checked against
    its shape and datatype (and the element limit) before anything is allocated for it."""
    if header_length is None:
        head, rest = body, b""
    else:
        length = header_length_of(header_length, len(body))
        head, rest = body[:length], body[length:]
        if not head:  # Triton's raw binary request: the body is the binary data of the model's one input
            return V2InferRequest(inputs=[], parameters={"binary_data_output": True}), rest  # outputs as binary data
    try:
        doc = read_json(head)  # its own InputError (a number beyond the float range) goes through
    except (ValueError, UnicodeDecodeError) as exc:
        hint = ""
        if header_length is None and b'"binary_data_size"' in body:  # binary data after a header of unsaid length
            hint = ("; a request whose tensors follow its JSON header as binary data (binary_data_size) must give "
                    "the header's length in bytes in Inference-Header-Content-Length, and it has none")  # fmt: skip
        raise InputError(f"the inference request header is not valid JSON: {exc}{hint}") from None
    except RecursionError:
        raise InputError("the inference request header is nested too deeply to be read") from None
    if not isinstance(doc, dict):
        raise InputError("the inference request header must be a JSON object")
    try:
        req = V2InferRequest.model_validate(doc)
    except ValidationError as exc:
        raise InputError(f"the inference request is not valid: {_first_error(exc, 'the request')}") from None
    inputs: list[Input] = []
    offset = 0
    for tensor in req.inputs:
        what = f"input {tensor.name!r}"
        count = check_elements(tensor.shape, max_elements, what)
        if "shared_memory_region" in tensor.parameters:
            raise RefusedError(f"{what}: shared memory is not supported by ovreduce; send the data in the request")
        size = tensor.parameters.get("binary_data_size")
        if size is None:
            if tensor.data is None:
                raise InputError(f"{what} has neither data nor parameters.binary_data_size")
            flat = flat_values(tensor.data, tensor.shape, what, max_elements)
            inputs.append((tensor.name, tensor.shape, tensor.datatype, flat))
            continue
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise InputError(
                f"{what}: parameters.binary_data_size must be a non-negative integer, got {json_quoted(size)}"
            )
        if tensor.data is not None:
            raise InputError(f"{what} has both data and parameters.binary_data_size")
        if tensor.datatype != "BYTES":  # (BYTES elements are of their own lengths: read below)
            expected = count * np.dtype(_element_type(tensor.datatype, what).numpy).itemsize
            if size != expected:
                raise InputError(f"{what}: binary_data_size is {size} bytes but shape {tensor.shape} of "
                                 f"{tensor.datatype} needs {expected}")  # fmt: skip
        if offset + size > len(rest):
            raise InputError(f"{what}: its {size} bytes of binary data go past the end of the request body "
                             f"({len(rest) - offset} left)")  # fmt: skip
        inputs.append((tensor.name, tensor.shape, tensor.datatype, rest[offset : offset + size]))
        offset += size
    if offset != len(rest):
        raise InputError(f"the request body holds {len(rest) - offset} bytes after the binary data of its inputs")
    return req, inputs


def _texts(data: bytes, count: int, what: str) -> list[str]:
    """The ``count`` elements of BYTES binary data in Triton's form (each a 4-byte little-endian length, then its
    bytes), as the strings JSON would give (bytes not UTF-8 replaced)."""
    texts: list[str] = []
    at = 0
    for index in range(count):
        length = int.from_bytes(data[at : at + 4], "little") if at + 4 <= len(data) else None
        if length is None or at + 4 + length > len(data):
            raise InputError(f"{what}: element {index} of its BYTES binary data (a 4-byte little-endian length, then "
                             f"its bytes) runs past the end of its {len(data)} bytes")  # fmt: skip
        texts.append(data[at + 4 : at + 4 + length].decode("utf-8", "replace"))
        at += 4 + length
    if at != len(data):
        raise InputError(f"{what}: its BYTES binary data holds {len(data) - at} bytes after its {count} elements")
    return texts


def run_options(parameters: dict[str, Any]) -> tuple[str, RunRequest]:
    for name in parameters:  # others (a client's own, as a sequence id) are let through
        near = near_miss(name, V2_OPTIONS[:-1])
        if near is not None:
            raise InputError(f"parameters.{shown(name)} is not a parameter ovreduce reads; did you mean {near!r}?")
    backend = parameters.get("backend", "openvino")
    if backend not in ("openvino", "numpy"):
        raise InputError(f'parameters.backend must be "openvino" or "numpy", got {json_quoted(backend)}')
    fields: dict[str, Any] = {k: parameters[k] for k in ("device", "precision", "atol", "rtol") if k in parameters}
    fields["backends"] = ["numpy"] if backend == "numpy" else ["numpy", "openvino"]
    try:
        run = RunRequest.model_validate(fields)
    except ValidationError as exc:
        raise InputError(f"parameters.{_first_error(exc)}") from None
    return str(backend), run


def binary_outputs(req: V2InferRequest) -> bool:
    """Whether the output is answered as binary data (and 400 for an output the model does not have)."""
    default = req.parameters.get("binary_data_output", False)
    if not isinstance(default, bool):
        raise InputError("parameters.binary_data_output must be true or false")
    binary = default
    for out in req.outputs or ():
        if out.name != OUTPUT:
            raise InputError(f"unexpected inference output {shown(out.name)}: the model has one output, {OUTPUT!r}")
        if "classification" in out.parameters:
            raise RefusedError("the classification extension is not supported by ovreduce")
        if "shared_memory_region" in out.parameters:  # nothing would write the region the client then reads
            raise RefusedError(f"output {out.name!r}: shared memory is not supported by ovreduce; ask for the output "
                               f"in the answer")  # fmt: skip
        binary = out.parameters.get("binary_data", default)
        if not isinstance(binary, bool):
            raise InputError(f"outputs[{out.name!r}].parameters.binary_data must be true or false")
    if len(req.outputs or ()) > 1:  # the last one's binary_data would be taken
        raise InputError(f"outputs names the model's one output, {OUTPUT!r}, {len(req.outputs or ())} times; once")
    return binary


def _raw_input(spec: LayerSpec, raw: bytes, max_elements: int) -> Input:
    """The layer's data input, its one dim that is not static (if any) worked out from the byte count, as Triton."""
    why = "a raw binary request (Inference-Header-Content-Length: 0, the body is the data of the model's one input)"
    if spec.runtime_axes:
        raise InputError(f"{why} cannot be read for this model: it takes 2 inputs, 'data' and 'axes'; send a JSON "
                         f"header that names them")  # fmt: skip
    datatype = spec.data_type.kserve or ""
    itemsize = np.dtype(_element_type(datatype, "input 'data'").numpy).itemsize
    if spec.data_shape.dims is None:
        raise InputError(f"{why}: the shape of input 'data' cannot be deduced, its rank is dynamic; send a JSON header "
                         f"that gives it")  # fmt: skip
    dims = spec.data_shape.dims
    unknown = [i for i, d in enumerate(dims) if not d.is_static]
    if len(unknown) > 1:
        raise InputError(f"{why}: the shape of input 'data' ({spec.data_shape}) cannot be deduced, more than one of "
                         f"its dimensions is variable; send a JSON header that gives it")  # fmt: skip
    count, odd = divmod(len(raw), itemsize)
    known = math.prod(d.lo for d in dims if d.is_static)
    shape = [d.lo for d in dims]
    if unknown and known:
        shape[unknown[0]] = count // known
    if odd or math.prod(shape) != count:
        raise InputError(f"{why}: its {len(raw)} bytes are not a whole {datatype} tensor of shape "
                         f"{spec.data_shape}")  # fmt: skip
    check_elements(shape, max_elements, "input 'data'")
    return ("data", shape, datatype, raw)


def given_arrays(name: str, spec: LayerSpec, inputs: Inputs, max_elements: int) -> dict[str, npt.NDArray[Any]]:
    """The arrays by name of the inputs :func:`decode_request` read, for layer ``spec`` of v2 model ``name``."""
    if isinstance(inputs, bytes):
        inputs = [_raw_input(spec, inputs, max_elements)]
    wanted = 2 if spec.runtime_axes else 1
    if len(inputs) != wanted:
        names = "'data' and 'axes'" if spec.runtime_axes else "'data'"
        raise InputError(f"model {shown(name)} takes {wanted} input(s), {names}; the request has {len(inputs)}")
    given: dict[str, npt.NDArray[Any]] = {}
    for tname, shape, datatype, payload in inputs:
        what = f"input {tname!r}"
        if tname in given:
            raise InputError(f"{what} is given twice")
        if isinstance(payload, bytes) and datatype == "BYTES":  # (a str each: read here, in the worker, not the server)
            payload = _texts(payload, math.prod(shape), what)  # judged by the layer's port, as BYTES in JSON are
        if not isinstance(payload, bytes):  # made flat and checked as the request arrived
            given[tname] = from_kserve({"name": tname, "shape": shape, "datatype": datatype, "data": payload}, what)
            continue
        etype = _element_type(datatype, what)
        if etype.kind == "bool" and payload and max(payload) > 1:  # NumPy would take any byte as a bool
            raise InputError(f"{what}: BOOL binary data must hold bytes 0 or 1")
        given[tname] = np.frombuffer(payload, dtype=np.dtype(etype.numpy)).reshape(shape).copy()
    return given


def encode_answer(name: str, request_id: str | None, parameters: dict[str, Any], output: npt.NDArray[Any],
                  binary: bool) -> tuple[bytes, int | None]:  # fmt: skip
    """The inference answer's body, and its JSON header's length when the output goes as binary data."""
    answer = to_kserve(OUTPUT, output.reshape(-1)[:0] if binary else output)  # binary: no JSON data written
    if binary:
        del answer["data"]
        answer.update(shape=list(output.shape), parameters={"binary_data_size": output.nbytes})
    doc: dict[str, Any] = {"model_name": name, "model_version": VERSION}
    if request_id is not None:
        doc["id"] = request_id
    doc.update(parameters=scrub(parameters), outputs=[answer])  # OpenVINO's errors may name server paths
    header = dumps(doc, indent=False)
    return (header + output.tobytes(), len(header)) if binary else (header, None)  # tobytes: row-major, any strides
