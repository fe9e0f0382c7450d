"""Random reduction models built with OpenVINO's Python API, for the differential tests.

A case is a frozen spec drawn from ``random.Random(seed)`` in pure Python, so pytest can collect (and name)
the cases without importing OpenVINO. :func:`build_batch` turns a batch of specs into one ``ov.Model``
holding their reductions side by side (each case has its own Parameters, so the reductions are
independent), and records, per reduction step, either the node OpenVINO built or the message it refused
it with. Whether a step is valid is decided by OpenVINO, never by this module: the concrete axes values
are drawn at build time from the step's own seed and the rank OpenVINO gave the step's input.

Run it as a script to print a few specs: ``python tests/ops/gen_models.py``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

ARITHMETIC = ("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2")
LOGICAL = ("ReduceLogicalAnd", "ReduceLogicalOr")
CONSTRUCTORS = {
    "ReduceMean": "reduce_mean",
    "ReduceSum": "reduce_sum",
    "ReduceMax": "reduce_max",
    "ReduceMin": "reduce_min",
    "ReduceProd": "reduce_prod",
    "ReduceL1": "reduce_l1",
    "ReduceL2": "reduce_l2",
    "ReduceLogicalAnd": "reduce_logical_and",
    "ReduceLogicalOr": "reduce_logical_or",
}

AxesSource = Literal["const", "convert", "fp16", "reshape", "squeeze", "unsqueeze", "concat", "runtime", "mixed"]
Flavour = Literal["subset", "negative", "duplicate", "empty", "all", "out_of_range"]
Invalid = Literal["", "bool_data", "nonbool_data", "float_axes", "axes_2d"]
_SOURCES: tuple[AxesSource, ...] = (
    "const", "convert", "fp16", "reshape", "squeeze", "unsqueeze", "concat", "runtime", "mixed",
)  # fmt: skip
_FLAVOURS: tuple[Flavour, ...] = ("subset", "negative", "duplicate", "empty", "all", "out_of_range")
_INVALID: tuple[Invalid, ...] = ("", "bool_data", "nonbool_data", "float_axes", "axes_2d")

_NUMPY = {
    "i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8,
    "u64": np.uint64, "u8": np.uint8, "f16": np.float16, "f32": np.float32,
}  # fmt: skip


@dataclass(frozen=True)
class AxesRecipe:
    """How to make a step's axes input; the values are drawn at build time."""

    source: AxesSource
    etype: str  # the Const's (or runtime Parameter's) element type
    flavour: Flavour
    scalar: bool = False  # a 0-D axes input
    runtime_shape: str = ""  # source runtime/mixed: the axes Parameter's shape
    two_d: bool = False  # invalid: axes of rank 2

    def describe(self) -> str:
        if self.source in ("runtime", "mixed"):
            return f"{self.source}{self.runtime_shape.replace(',', 'x') or 'scalar'}-{self.etype}"
        return f"{self.source}-{self.etype}-{'scalar' if self.scalar else self.flavour}" + ("-2d" if self.two_d else "")


@dataclass(frozen=True)
class Step:
    op: str
    axes: AxesRecipe
    keep_dims: bool
    seed: int
    via: str = ""  # "", "Relu", "Convert" or "LogicalNot": applied to the step's input first
    via_type: str = ""  # Convert's destination type


@dataclass(frozen=True)
class Case:
    id: str
    data_shape: str  # OpenVINO syntax; "..." is a dynamic rank
    data_type: str
    steps: tuple[Step, ...]
    invalid: Invalid = ""


# -- spec generation (pure Python) ---------------------------------------------------------------------
def _dim(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.55:
        return str(rng.choice([1, 1, 2, 3, 4, 5, 6, 7, 0]))
    if roll < 0.75:
        return "?"
    lo = rng.randint(0, 4)
    hi = lo + rng.randint(1, 6)
    return rng.choice([f"{lo}..{hi}", f"{lo}..", f"..{hi}"])


def _shape(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return "..."
    return "[" + ",".join(_dim(rng) for _ in range(rng.randint(0, 6))) + "]"


def _axes_recipe(rng: random.Random, invalid: Invalid) -> AxesRecipe:
    flavour = rng.choices(_FLAVOURS, [40, 15, 12, 8, 10, 6])[0]
    if invalid == "float_axes":
        return AxesRecipe("const", rng.choice(["f32", "f16"]), "subset", scalar=rng.random() < 0.3)
    if invalid == "axes_2d":
        if rng.random() < 0.5:
            return AxesRecipe("const", "i64", rng.choice(["subset", "all"]), two_d=True)
        shape = rng.choice(["[2,1]", "[?,?]", "[..4,3..]", "[1,1]", "[0,2]"])
        return AxesRecipe("runtime", "i64", "subset", runtime_shape=shape, two_d=True)
    source = rng.choices(_SOURCES, [40, 10, 8, 4, 3, 4, 5, 22, 4])[0]
    if source == "runtime":
        shape = rng.choice(["[]", "[1]", "[1]", "[2]", "[3]", "[?]", "[0]", "[1..3]", "[1..1]", "..."])
        return AxesRecipe("runtime", rng.choice(["i64", "i32"]), "subset", runtime_shape=shape)
    if source == "mixed":
        return AxesRecipe("mixed", "i64", "subset", runtime_shape=rng.choice(["[1]", "[?]"]))
    if source == "convert":
        return AxesRecipe("convert", rng.choice(["i32", "i64", "u8"]), flavour)
    if source == "fp16":  # Const f16/f32 -> Convert(i64), as fp16 compression writes integer-valued consts
        return AxesRecipe("fp16", rng.choice(["f16", "f32"]), flavour, scalar=rng.random() < 0.2)
    if source == "unsqueeze":
        return AxesRecipe("unsqueeze", "i64", flavour, scalar=True)
    etype = rng.choices(["i64", "i32", "i8", "i16", "u8", "u64"], [50, 30, 5, 5, 5, 5])[0]
    scalar = source == "const" and flavour not in ("empty", "duplicate") and rng.random() < 0.2
    return AxesRecipe(source, etype, flavour, scalar=scalar)


def random_cases(seed: int, count: int) -> list[Case]:
    """``count`` case specs drawn from ``seed``: the same list every time."""
    rng = random.Random(seed)
    cases = []
    for index in range(count):
        invalid = rng.choices(_INVALID, [92, 2, 2, 2, 2])[0]
        logical = rng.random() < 2 / 9
        if invalid == "bool_data":
            logical = False
        if invalid == "nonbool_data":
            logical = True
        shape = _shape(rng)
        if logical:
            data_type = "f32" if invalid == "nonbool_data" else "boolean"
        else:
            data_type = (
                "boolean" if invalid == "bool_data" else rng.choice(["f32", "f32", "f32", "f16", "bf16", "i32", "u8"])
            )
        depth = 1 if invalid else rng.choices([1, 2, 3], [70, 18, 12])[0]
        steps = []
        for k in range(depth):
            op = rng.choice(LOGICAL if logical else ARITHMETIC)
            via, via_type = "", ""
            if rng.random() < 0.15 and not invalid:
                if logical:
                    via = rng.choice(["LogicalNot", "Convert"])
                    via_type = "boolean" if via == "Convert" else ""
                else:
                    via = rng.choice(["Relu", "Convert"])
                    via_type = rng.choice(["f32", "f16", "i32"]) if via == "Convert" else ""
            axes = _axes_recipe(rng, invalid if k == 0 else "")
            steps.append(Step(op, axes, rng.random() < 0.5, rng.getrandbits(32), via, via_type))
        first = steps[0]
        parts = [
            f"s{seed}",
            f"c{index:03d}",
            first.op.removeprefix("Reduce"),
            "dynrank" if shape == "..." else f"r{shape.count(',') + 1 if shape != '[]' else 0}",
            first.axes.describe(),
            "keep" if first.keep_dims else "nokeep",
        ]
        if depth > 1:
            parts.append(f"chain{depth}")
        if any(s.via for s in steps):
            parts.append("via")
        if invalid:
            parts.append(f"invalid-{invalid}")
        cases.append(Case("-".join(parts), shape, data_type, tuple(steps), invalid))
    return cases


def batches(cases: Sequence[Case], size: int) -> list[tuple[Case, ...]]:
    return [tuple(cases[i : i + size]) for i in range(0, len(cases), size)]


# -- axes values -----------------------------------------------------------------------------------------
def draw_axes(recipe: AxesRecipe, rank: int | None, rng: random.Random) -> list[int]:
    """Concrete axes for an input of ``rank`` (None: dynamic rank, values drawn for a made-up rank)."""
    r = rank if rank is not None else rng.randint(1, 5)
    bound = max(r, 1)  # OpenVINO validates a scalar's axes as if it had rank 1
    unsigned = recipe.etype.startswith("u")
    if recipe.scalar:
        values = [rng.randrange(-bound, bound)]
    elif recipe.flavour == "empty" or (r == 0 and rng.random() < 0.6):  # keep_dims refuses a scalar's axes
        values = []
    elif recipe.flavour == "all":
        values = rng.sample(range(bound), bound)
        values = [v - bound if rng.random() < 0.3 else v for v in values]
    else:
        n = rng.randint(1, bound)
        values = rng.sample(range(bound), n)
        if recipe.flavour == "negative":
            values = [v - bound for v in values]
        else:
            values = [v - bound if rng.random() < 0.3 else v for v in values]
        if recipe.flavour == "duplicate":
            v = rng.choice(values)
            values.insert(rng.randrange(len(values) + 1), rng.choice([v, v - bound if v >= 0 else v + bound]))
        if recipe.flavour == "out_of_range":
            values.insert(rng.randrange(len(values) + 1), rng.choice([bound, bound + 3, -bound - 1, -bound - 4, 64]))
    if recipe.scalar and recipe.flavour == "out_of_range":
        values = [rng.choice([bound, -bound - 1])]
    if unsigned:
        values = [v + bound if v < 0 else v for v in values]
        values = [v if v >= 0 else abs(v) for v in values]
    return values


# -- building with OpenVINO ------------------------------------------------------------------------------
@dataclass
class StepResult:
    """One reduction step: the node OpenVINO built, or its refusal with the inputs it refused."""

    name: str
    op: str
    keep_dims: bool
    axes: list[int] | None  # None: runtime axes
    node: Any = None
    refusal: str | None = None  # OpenVINO's message (its last line)
    data_shape: Any = None  # ov.PartialShape of the data input
    data_type: str = ""
    axes_shape: Any = None
    axes_type: str = ""


@dataclass
class BuiltBatch:
    model: Any
    steps: dict[str, list[StepResult]] = field(default_factory=dict)  # case id -> its steps


def _axes_input(recipe: AxesRecipe, values: list[int], name: str) -> tuple[Any, list[Any]]:
    """The axes input (an ov.Output) and the Parameters it needs."""
    import openvino as ov
    import openvino.opset13 as ops

    def const(vals: Sequence[int], etype: str, shape: tuple[int, ...] | None = None) -> Any:
        arr = np.array(vals, dtype=_NUMPY[etype])
        return ops.constant(arr.reshape(shape) if shape is not None else arr).output(0)

    src = recipe.source
    if src in ("runtime", "mixed"):
        shape = ov.PartialShape(recipe.runtime_shape) if recipe.runtime_shape != "..." else ov.PartialShape.dynamic()
        param = ops.parameter(shape, getattr(ov.Type, recipe.etype), name=f"{name}/axes")
        if src == "runtime":
            return param.output(0), [param]
        return ops.concat([const(values[:1], "i64"), param.output(0)], 0).output(0), [param]
    if recipe.two_d:
        return const(values, recipe.etype, (1, len(values))), []
    if recipe.scalar and src in ("const", "fp16"):
        out = ops.constant(np.array(values[0], dtype=_NUMPY[recipe.etype])).output(0)
        return (ops.convert(out, "i64").output(0) if src == "fp16" else out), []
    if src == "const":
        return const(values, recipe.etype), []
    if src == "convert":
        target = "i32" if recipe.etype == "i64" else "i64"
        return ops.convert(const(values, recipe.etype), target).output(0), []
    if src == "fp16":
        return ops.convert(const(values, recipe.etype), "i64").output(0), []
    if src == "reshape":
        return ops.reshape(const(values, recipe.etype, (1, len(values))), const([-1], "i64"), False).output(0), []
    if src == "squeeze":
        return ops.squeeze(const(values, recipe.etype, (1, len(values))), const([0], "i64")).output(0), []
    if src == "unsqueeze":
        scalar = ops.constant(np.array(values[0], dtype=_NUMPY[recipe.etype])).output(0)
        return ops.unsqueeze(scalar, const([0], "i64")).output(0), []
    assert src == "concat"
    cut = len(values) // 2
    return ops.concat([const(values[:cut], recipe.etype), const(values[cut:], recipe.etype)], 0).output(0), []


def _via(x: Any, step: Step) -> Any:
    import openvino.opset13 as ops

    if step.via == "Relu":
        return ops.relu(x).output(0)
    if step.via == "LogicalNot":
        return ops.logical_not(x).output(0)
    if step.via == "Convert":
        return ops.convert(x, step.via_type).output(0)
    return x


def last_line(exc: BaseException) -> str:
    """OpenVINO's own message: the last non-empty line of what it raised."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[-1] if lines else type(exc).__name__


def build_batch(cases: Sequence[Case], name: str) -> BuiltBatch:
    """One ov.Model with every case's reductions; each case's chain stops at its first refused step."""
    import openvino as ov
    import openvino.opset13 as ops

    params: list[Any] = []
    results: list[Any] = []
    built = BuiltBatch(model=None)
    for case in cases:
        data_shape = ov.PartialShape.dynamic() if case.data_shape == "..." else ov.PartialShape(case.data_shape)
        data = ops.parameter(data_shape, getattr(ov.Type, case.data_type), name=f"{case.id}/data")
        x = data.output(0)
        case_params: list[Any] = [data]
        steps: list[StepResult] = []
        for k, step in enumerate(case.steps):
            rng = random.Random(step.seed)
            x = _via(x, step)
            pshape = x.get_partial_shape()
            rank = None if pshape.rank.is_dynamic else pshape.rank.get_length()
            values = draw_axes(step.axes, rank, rng)
            if step.axes.source in ("unsqueeze", "mixed") and not values:
                values = [0]
            axes, axes_params = _axes_input(step.axes, values, f"{case.id}/r{k}")
            result = StepResult(
                name=f"{case.id}/r{k}",
                op=step.op,
                keep_dims=step.keep_dims,
                axes=None if step.axes.source in ("runtime", "mixed") else values,
                data_shape=pshape,
                data_type=x.get_element_type().get_type_name(),
                axes_shape=axes.get_partial_shape(),
                axes_type=axes.get_element_type().get_type_name(),
            )
            steps.append(result)
            try:
                node = getattr(ops, CONSTRUCTORS[step.op])(x, axes, step.keep_dims)
            except RuntimeError as exc:
                result.refusal = last_line(exc)
                break
            node.set_friendly_name(result.name)
            result.node = node
            case_params += axes_params
            x = node.output(0)
        built.steps[case.id] = steps
        if steps[0].node is not None:
            params += case_params
            results.append(ops.result(x))
    built.model = ov.Model(results, params, name)
    return built


if __name__ == "__main__":  # pragma: no cover - a quick look at the specs
    for c in random_cases(2026, 12):
        print(c.id, c.data_shape, c.data_type, [(s.op, s.axes, s.keep_dims, s.via) for s in c.steps])
