"""``--layer``: a mistyped layer gets "did you mean", and ``run`` without it lists the model's reductions."""

from __future__ import annotations

from collections.abc import Iterator

from ovreduce.errors import NotFoundError
from ovreduce.ir.model import IRModel, Layer

__all__ = ["locate_layer", "suggestions"]


def _candidates(model: IRModel, reductions_only: bool) -> Iterator[str]:
    """Every layer's id and name, those of sub-graph bodies as paths (``12/then/110``, ``If_12/then/x``)."""
    from ovreduce.ops.registry import reductions

    kinds = set(reductions()) if reductions_only else None

    def wanted(layer: Layer) -> bool:
        return kinds is None or layer.type in kinds

    for layer in model.layers:
        if wanted(layer):
            yield layer.id
            yield layer.name
    for body in model.bodies():
        for layer in body.body.graph.layers:
            if wanted(layer):
                yield f"{body.path}/{layer.id}"
                yield f"{body.name_path}/{layer.name}"


def suggestions(model: IRModel, key: str, *, reductions_only: bool = False) -> list[str]:
    """Up to three layer ids or names close to ``key`` (difflib's ratio, closest first)."""
    import difflib

    names = list(dict.fromkeys(_candidates(model, reductions_only)))
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    if not close:  # a case slip ("reducemean_3") is a near miss too
        folded = {n.lower(): n for n in names}
        close = [folded[n] for n in difflib.get_close_matches(key.lower(), list(folded), n=3, cutoff=0.6)]
    return close


def locate_layer(model: IRModel, key: str, *, reductions_only: bool = False) -> None:
    """Nothing when ``key`` names one layer of ``model``; else the :class:`NotFoundError` of
    :meth:`IRModel.locate`, with "did you mean" when some layer's id or name is close to ``key`` (unless that
    error names the body layers ``key`` is the id or name of already)."""
    try:
        model.locate(key)
    except NotFoundError as exc:
        if exc.candidates:
            raise
        close = suggestions(model, key, reductions_only=reductions_only)
        if not close:
            raise
        raise NotFoundError(f"{exc.message}; did you mean {' or '.join(repr(c) for c in close)}?") from None
