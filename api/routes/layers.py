"""``/v1/models/{id}/layers``: a stored model's reductions (or every layer), one layer, and running one.

``{layer}`` is a layer id or name, or a path into a sub-graph body (:data:`ovreduce.ir.model.PATH_GRAMMAR`). A path
ending in ``/run`` is always a run (POST only; others 405) of everything between ``layers/`` and that last ``/run``:
a layer named ``x/run`` runs at ``.../layers/x/run/run`` and is shown by its id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from fastapi import APIRouter, Body, Path, Query
from starlette.concurrency import run_in_threadpool
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.responses import Response

from ovreduce.errors import LimitExceededError
from ovreduce.reports.common import JsonDocument
from ovreduce.run import make_backends, prepare_inputs, run_spec
from ovreduce.shapes import JsonShape
from ovreduce.tensors import to_kserve

from ..deps import ServicesDep, SinceDep
from ..problems import EXAMPLES, responses
from ..schemas import LayerDetail, LayerList, OutputTensor, RunAnswer, RunRequest, fields_of
from ..workers import WorkerContext
from .common import STORED_MODEL_PROBLEMS, ServiceRoute, document_bytes, given_tensors, parse_shapes, with_flat_inputs
from .models import ModelIdPath

__all__ = ["router"]


class LayerConvertor(PathConvertor):
    """A layer id or name in a path: anything but nothing (slashes and line breaks included) that does not end in
    ``/run`` or ``/run/`` (a trailing slash is then the 404 that names the path without it)."""

    regex = r"(?![\s\S]*/run/?$)[\s\S]+"


class RunLayerConvertor(PathConvertor):
    """The layer of a run: anything but nothing, line breaks included."""

    regex = r"[\s\S]+"


register_url_convertor("layer", LayerConvertor())
register_url_convertor("run_layer", RunLayerConvertor())
router = APIRouter(prefix="/v1/models/{model_id}/layers", tags=["layers"], route_class=ServiceRoute)
LayerPath = Annotated[
    str,
    Path(
        description="a layer id or name, or a path into a sub-graph body",
        openapi_examples={"name": {"value": EXAMPLES["parameters"]["layer"]}},
    ),
]
_IDENTITY = ("layer_id", "layer_name", "type", "version", "line", "body_path")


def _layers(context: WorkerContext, mid: str, all_layers: bool) -> bytes:
    loaded = context.catalog.load(mid)
    out: list[dict[str, Any]] = []
    for view in loaded.inspected.layers:
        if view.reduction is not None:
            out.append({**view.reduction.to_json(), "line": view.line, "is_reduction": True})
        elif all_layers:
            out.append({**{k: getattr(view, k) for k in _IDENTITY}, "is_reduction": False})
    if not all_layers:  # the order of the check document: by line in the file
        out.sort(key=lambda e: e["line"] or 0)
    return document_bytes({"id": mid, "all": all_layers, "layers": out})


@dataclass(frozen=True, slots=True)
class Consumer(JsonDocument):
    """An input port that one of the layer's outputs feeds, with the shape that input declares."""

    output_port: str  # the layer's output port
    layer_id: str
    layer_name: str
    type: str
    port: str  # the consumer's input port
    declared_shape: JsonShape
    declared_has_dims: bool


@dataclass(frozen=True, slots=True)
class LayerNeighbourhood(LayerDetail):
    """One layer as ``ovreduce inspect --layer`` shows it (its producers are in ``inputs``), and its consumers:
    what the web page draws so that a person sees where a mismatch comes from and where it goes."""

    consumers: tuple[Consumer, ...] = ()


def _layer(context: WorkerContext, mid: str, key: str) -> bytes:
    loaded = context.catalog.load(mid)
    ref = loaded.model.locate(key)
    view = next(v for v in loaded.inspected.layers if v.layer_id == ref.layer.id and v.body_path == ref.body_path)
    consumers = []
    for out in ref.layer.outputs:
        for layer_id, port_id in ref.graph.consumers(ref.layer.id, out.id):
            target = ref.graph.layer(layer_id)
            port = ref.graph.input_port(target, port_id)
            consumers.append(Consumer(output_port=out.id, layer_id=target.id, layer_name=target.name, type=target.type,
                                      port=port.id, declared_shape=port.declared_shape.to_json(),
                                      declared_has_dims=port.has_dims))  # fmt: skip
    return document_bytes(LayerNeighbourhood(**fields_of(view), id=mid, consumers=tuple(consumers)))


def _run(context: WorkerContext, mid: str, key: str, req: RunRequest) -> tuple[bytes, str]:
    """The run's answer and its outcome (for the metrics)."""
    catalog, settings = context.catalog, context.settings
    with catalog.store.pinned(mid):
        loaded = catalog.load(mid)
        spec = loaded.spec(key)
        body_path = loaded.model.locate(key).body_path
        options = req.model_dump(include={"device", "precision"}, exclude_unset=True)  # (refused with NumPy alone)
        runners = make_backends(req.backends, **options, cache=context.layer_cache)
        arrays, notes, defaulted = prepare_inputs(
            loaded.model, spec, given=given_tensors(req.inputs), shapes=parse_shapes(req.shapes), seed=req.seed,
            max_elements=settings.max_elements, body_path=body_path,
        )  # fmt: skip
        report = run_spec(spec, arrays, runners, atol=req.atol, rtol=req.rtol, notes=notes,
                          requested_precision=req.precision, body_path=body_path, defaulted=defaulted)  # fmt: skip
        for name, array in report.outputs.items():
            if array.size > settings.max_output_elements:
                raise LimitExceededError(
                    f"the {name} output has {array.size} elements, more than the limit of "
                    f"{settings.max_output_elements} (OVREDUCE_MAX_OUTPUT_ELEMENTS)"
                )
        tensors = tuple(OutputTensor(**to_kserve(name, np.asarray(array))) for name, array in report.outputs.items())
        # Built as the typed answer, written without re-validating outputs of up to a million elements.
        answer = RunAnswer(**fields_of(report.document), id=mid, outputs=tensors)
        return document_bytes(answer, (loaded.model.xml,)), report.outcome


@router.get(
    "",
    response_model=LayerList,
    summary="The model's reductions as in the check document (all=true: every layer)",
    responses=responses("get /v1/models/{model_id}/layers", *STORED_MODEL_PROBLEMS),
)
async def list_layers(
    services: ServicesDep,
    model_id: ModelIdPath,
    all_layers: Annotated[bool, Query(alias="all", description="every layer, not only the reductions")] = False,
) -> Response:
    body = await services.isolated.run("listing the layers", _layers, model_id, all_layers)
    return Response(body, media_type="application/json")


@router.get(
    "/{layer:layer}",
    response_model=LayerNeighbourhood,
    summary="One layer (id or name, URL-encoded) as ovreduce inspect --layer shows it, with its consumers",
    responses=responses("get /v1/models/{model_id}/layers/{layer}", *STORED_MODEL_PROBLEMS),
)
async def get_layer(services: ServicesDep, model_id: ModelIdPath, layer: LayerPath) -> Response:
    body = await services.isolated.run("reading the layer", _layer, model_id, layer)
    return Response(body, media_type="application/json")


@router.post(
    "/{layer:run_layer}/run",
    response_model=RunAnswer,
    summary="Run one reduction on the NumPy reference and OpenVINO (KServe v2 tensors in and out)",
    responses=responses("post /v1/models/{model_id}/layers/{layer}/run", *STORED_MODEL_PROBLEMS),
)
async def run_layer(
    services: ServicesDep,
    since: SinceDep,
    model_id: ModelIdPath,
    layer: LayerPath,
    body: Annotated[
        RunRequest | None, Body(openapi_examples=EXAMPLES["requests"]["post /v1/models/{model_id}/layers/{layer}/run"])
    ] = None,
) -> Response:
    # off the event loop, as /v2 decodes its tensors: a walk of up to OVREDUCE_MAX_ELEMENTS nested values
    req = await run_in_threadpool(with_flat_inputs, body or RunRequest(), services.settings.max_elements)
    job = services.isolated.run(f"the run of layer {layer!r}", _run, model_id, layer, req, since=since)
    data, _ = await services.metrics.counted_run(job, req.backends, req.device)
    return Response(data, media_type="application/json")
