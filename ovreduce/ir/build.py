"""The one builder of a parsed IR: the only code that makes :class:`Layer`, :class:`Port`, :class:`ConstData`,
:class:`Edge`, :class:`Body` and :class:`IRModel`, and that decides what an attribute's text means.

Both readers hand it plain values: the texts of attributes and ``<dim>`` elements as XML reads them (entities
replaced, line ends normalised) and line numbers. :mod:`ovreduce.ir.careful` gets them from libxml2, element by
element; :mod:`ovreduce.ir.fast` from compiled patterns over the bytes. What a text means is OpenVINO's IR
frontend's reading of it (``src/frontends/ir/src/ir_deserializer.cpp``, ``input_model.cpp``): ids are integers
(``"02"`` is layer 2), a ``<dim>`` is the integer at the start of its text, a Parameter without ``shape`` is a
scalar. Every problem is an :class:`~ovreduce.errors.IRError` whose message names the file, the line, the layer and
what was expected.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import NoReturn, TypeVar

from ovreduce.errors import (
    ElementTypeError,
    IRError,
    IRStructureError,
    IRVersionError,
    LimitExceededError,
    WeightsError,
)
from ovreduce.ir.dtypes import ELEMENT_TYPES, ElementType, element_type, element_type_from_precision
from ovreduce.ir.model import (
    BODY_ROLES,
    PORTS_WALKED,
    BackEdge,
    Body,
    ConstData,
    Edge,
    IRModel,
    Layer,
    Port,
    PortIndex,
    PortMapping,
    PortRef,
    RtInfo,
    built_ids,
    port_indices,
    port_position,
    port_positions,
)
from ovreduce.ir.rt_info import check_runtime_attributes
from ovreduce.ir.weights import Weights
from ovreduce.shapes import INT64_MAX, PartialShape, quoted

__all__ = [
    "NO_DATA",
    "SUPPORTED_IR_VERSIONS",
    "WITH_BODIES",
    "Builder",
    "ParseLimits",
    "RawEdge",
    "canonical_id",
]

SUPPORTED_IR_VERSIONS = (10, 11)
NO_DATA: Mapping[str, str] = MappingProxyType({})  # shared by every layer without <data> attributes


# a Const of the dynamic element type: OpenVINO reads it, but its bytes have no type to be read in (refused on purpose)
_DYNAMIC_CONST = (
    "a Const cannot have the dynamic element type (its bytes have no type to be read in); expected a static one "
    "(f32, i64, ...)"
)


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Bounds on what a single IR may cost to read."""

    max_xml_bytes: int = 1 << 30
    max_layers: int = 1_000_000  # sub-graph body layers included
    max_rank: int = 64
    max_body_depth: int = 64  # sub-graph bodies nested in bodies (libxml2's depth bound allows about 80)
    layers_setting: str = "ovreduce's fixed bound, bodies included"  # what sets max_layers, for the message


# An <edge>'s from-layer, from-port, to-layer and to-port texts and its line.
RawEdge = tuple[str, str, str, str, "int | None"]

# -- the syntax of values, as OpenVINO reads them ---------------------------------------------------------------
# Ids (layers, ports, edges' ends, port maps' internal_layer_id) are read by a C++ stream into a signed 64-bit
# integer that must be >= 0 and end the text: leading blanks and a '+' are taken, leading zeros mean nothing.
_ID = re.compile(r"[ \t\n\r\f\v]*(?:\+|-(?=0+\Z))?0*([0-9]+)")  # leading zeros left out of the digits
# A <dim> is the integer at the start of its text (a stream read with no check of what follows: "1.0" is 1).
_DIM = re.compile(r"[ \t\n\r\f\v]*([+-]?)0*([0-9]+)")
_INT = re.compile(r"[ \t\n\r\f\v]*([+-]?)0*([0-9]+)")
_PRECISIONS: dict[str, ElementType] = {t.precision: t for t in ELEMENT_TYPES.values()}
_DYNAMIC = ELEMENT_TYPES["dynamic"]
_SCALAR = PartialShape(())
# The ops that read sub-graph bodies, and the elements of theirs; OpenVINO's other ops never look at them.
WITH_BODIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"If": ("then_body", "else_body"), "Loop": ("body",), "TensorIterator": ("body",)}
)


def canonical_id(text: str) -> str | None:
    """The id ``text`` names as OpenVINO reads it, in decimal (``" +02"`` -> ``"2"``); None if it is not one."""
    if text.isdigit() and text.isascii() and (text[0] != "0" or len(text) == 1) and len(text) < 19:
        return text  # the usual case, as every serializer writes it
    found = _ID.fullmatch(text)
    if found is None:
        return None
    value = int(found[1]) if len(found[1]) <= 20 else INT64_MAX + 1  # int() refuses more than 4300 digits
    return str(value) if value <= INT64_MAX else None


@lru_cache(maxsize=4096)
def _parse_shape(text: str) -> PartialShape:
    # A model's Consts and Parameters repeat a few hundred distinct shape attributes thousands of times. An empty
    # interval is what OpenVINO's writer makes of a dim no size fits (Reshape of 5..7 into [8, -1]: 1..0), and reads.
    return PartialShape.parse(text, empty_as_dynamic=True)


# Dims tuples seen before (a model repeats a few hundred): one tuple shared by every port declaring the same
# dims. Bounded: they come from untrusted files.
_DIM_CACHE_SIZE = 4096
_DIMS: dict[tuple[int, ...], tuple[int, ...]] = {}


def _shared(dims: tuple[int, ...]) -> tuple[int, ...]:
    shared = _DIMS.get(dims)
    if shared is not None:
        return shared
    if len(_DIMS) < _DIM_CACHE_SIZE:
        _DIMS[dims] = dims
    return dims


_CACHE_SIZE = 4096  # entries of each cache of repeated texts (they come from untrusted files: bounded)


class Builder:
    """Builds the layers, ports, bodies, edges and the model of one IR from their texts (see the module)."""

    def __init__(self, source: str, weights: Weights | None, expected_bin: str | None, limits: ParseLimits) -> None:
        self.source = source
        self.weights = weights
        self.expected_bin = expected_bin
        self.limits = limits
        self.layer_count = 0  # every <layer> built so far, bodies included
        self.body_depth = 0
        self.graph_of = ""  # the graph being built, in messages: "" (the model's), " in the body of layer id=4 ..."
        self.ir_version = 0
        self._etypes: dict[tuple[str, str], ElementType] = {}  # (attribute, text) -> its element type
        # a Const's (element_type, shape, size) texts -> its type, shape, element count and byte size, once checked
        self._layouts: dict[tuple[str, str, str], tuple[ElementType, PartialShape, int, int]] = {}
        self._opsets: set[tuple[str, str]] = set()  # (type, version) pairs met before: not judged, or judged fine
        # (type, version) pairs of no op OpenVINO knows (a blank in either, a type the opset lacks): refused if built
        self._unknown_kinds: set[tuple[str, str]] = set()
        # What OpenVINO refuses of a layer only if it builds it, which it does where a Result reaches it (:meth:`model`)
        self._unless_unbuilt: list[tuple[Layer, IRError]] = []
        self._counted_later: list[
            Layer
        ] = []  # an IR v10's Parameters, Consts, Results whose inputs :meth:`graph` counts
        self._dataless: list[Layer] = []  # layers typed "Constant" (any case): OpenVINO's Constant without data
        # the ReadValue and Assign layers built, by body depth, until :meth:`_variables` judges their graph's
        self._stateful: dict[int, list[Layer]] = {}
        self._variable_walk = _VARIABLE_WALK  # layers the searches for an Assign's ReadValue may still visit

    # -- messages -------------------------------------------------------------------------------------------------
    def at(self, line: int | None) -> str:
        return f"{self.source}:{line}" if line else self.source

    def _unplaced(self, where: str) -> str:
        """``where`` without the file and line it starts with: a port map entry is placed at its own line."""
        return re.sub(rf"\A{re.escape(self.source)}(?::\d+)?: ", "", where)

    def where(self, line: int | None, layer_id: str | None, name: str | None, ltype: str | None) -> str:
        parts = [f"layer id={layer_id}"]
        if name is not None:
            parts.append(f"name={name!r}")
        if ltype is not None:
            parts.append(f"({ltype})")
        return f"{self.at(line)}: " + " ".join(parts)

    # -- the document -------------------------------------------------------------------------------------------
    def version(self, text: str | None, line: int | None) -> int:
        """The IR version of ``<net version>``; sets :attr:`ir_version`."""
        if text is None:
            raise IRVersionError(
                f"{self.at(line)}: <net> has no 'version' attribute; expected IR version 10 or 11", line=line
            )
        found = _ID.fullmatch(text)
        if found is None or len(found[1]) > 20 or int(found[1]) not in SUPPORTED_IR_VERSIONS:
            raise IRVersionError(
                f"{self.at(line)}: IR version {text!r} is not supported; ovreduce reads IR versions "
                + " and ".join(str(v) for v in SUPPORTED_IR_VERSIONS),
                line=line,
            )
        self.ir_version = int(found[1])
        return self.ir_version

    def model(
        self,
        name: str,
        layers: Sequence[Layer],
        edges: Iterable[RawEdge],
        rt_info: tuple[RtInfo, ...],
        xml: bytes,
    ) -> IRModel:
        """The whole model: ``layers`` in file order, ``edges`` as read (see :meth:`graph`)."""
        ordered, built_edges, by_id, producer, ports = self.graph(layers, edges)
        if self._dataless:
            self._dataless_read(ordered, by_id, producer)
        if self._unless_unbuilt:
            self._refuse_built(ordered, by_id, producer)
        if self._stateful:
            self._variables(by_id, producer)
        if self.ir_version == 10 and self.body_depth == 0:  # (the model's, not a body's)
            self._v10_names(layers, ordered, by_id, producer, ports)
        return IRModel(
            name=name,
            ir_version=self.ir_version,
            layers=ordered,
            edges=built_edges,
            source=self.source,
            weights=self.weights,
            rt_info=rt_info,
            xml=xml,
            by_id=by_id,
            producers=producer,
            ports=ports,
        )

    def legacy_refusal(self, tag: str, line: int | None, body: str = "") -> NoReturn:
        """OpenVINO's refusal of a child of a legacy ``<meta_data>`` (``tag``: "" for text), which it reads in a
        ``<net>`` or body (``body``: its container and tag; "": the net) without ``<rt_info>``, once it is built."""
        what = f"<{tag}> without a 'value' attribute" if tag else "text"
        of = f"{self._unplaced(body)}, " if body else ""
        raise IRStructureError(
            f"{self.at(line)}: {of}<meta_data> holds {what}; OpenVINO reads a <meta_data> where there is no <rt_info>, "
            f"each of its elements with a 'value' but <cli_parameters>, and refuses the model (Unsupported legacy "
            f"argument: {tag}); expected a 'value' attribute, or the section as <rt_info>",
            line=line,
        )

    def _dataless_read(
        self, layers: Sequence[Layer], by_id: Mapping[str, Layer], producer: Mapping[PortRef, PortRef]
    ) -> None:
        """Keep, for refusal where OpenVINO builds it, each reduction of these layers whose axes a layer typed
        "Constant" gives: OpenVINO makes that layer a Constant without data (it reads a constant's values from the
        weights only for the IR's name of the op, "Const"), and the reduction's shape inference reads the axes' values
        from it: OpenVINO refuses the model ("ptr is Null")."""
        from ovreduce.ops.reduce import ReductionOp
        from ovreduce.ops.registry import resolve

        mine = {layer.id: layer for layer in layers if layer.id in by_id and by_id[layer.id] is layer}
        dataless = {layer.id: layer for layer in self._dataless if mine.get(layer.id) is layer}
        if not dataless:
            return
        self._dataless = [layer for layer in self._dataless if mine.get(layer.id) is not layer]
        for layer in layers:
            if len(layer.inputs) < 2 or not isinstance(resolve(layer.type, layer.version), ReductionOp):
                continue
            source = producer.get((layer.id, layer.inputs[1].id))
            constant = None if source is None else dataless.get(source[0])
            if constant is None:
                continue
            refusal = IRStructureError(
                f"{self.at(constant.line)}: {constant.where}: a layer of type {constant.type!r} is a Constant without "
                f'data to OpenVINO, which reads a constant\'s values from the weights only for type="Const" (the '
                f"IR's name of the op); {layer.where} reads its axes from it: OpenVINO refuses the model (\"ptr is "
                f'Null"); expected type="Const"',
                line=constant.line,
            )
            self._unless_unbuilt.append((layer, refusal))

    def _refuse_built(
        self, layers: Sequence[Layer], by_id: Mapping[str, Layer], producer: Mapping[PortRef, PortRef]
    ) -> None:
        """Raise the first refusal kept for these layers of one of them OpenVINO builds: one a Result or an Assign
        reaches (an unconnected layer typed "Const " is none, and OpenVINO reads the model)."""
        mine = {id(layer) for layer in layers}
        pending = [(layer, exc) for layer, exc in self._unless_unbuilt if id(layer) in mine]
        self._unless_unbuilt = [(layer, exc) for layer, exc in self._unless_unbuilt if id(layer) not in mine]
        reached = built_ids(layers, by_id, producer)
        for layer, exc in pending:
            if layer.id in reached:
                raise exc

    def _variables(self, by_id: Mapping[str, Layer], producer: Mapping[PortRef, PortRef]) -> None:
        """OpenVINO's refusal of an Assign whose variable no ReadValue of its graph declares (each body has variables
        of its own). An Assign of opset3 to opset5 looks for a ReadValue of those opsets among the layers before
        it; one of opset6 on for a ReadValue of any version in its graph. OpenVINO counts only the ReadValue layers
        it builds (those a Result or an Assign reaches); ovreduce counts them all, not to walk a whole large model
        for it: the one model it reads that OpenVINO refuses has its variable declared by a ReadValue that feeds
        nothing."""
        stateful = self._stateful.pop(self.body_depth, [])  # this graph's (a body's are read inside it)
        declared = {layer.data.get("variable_id", "") for layer in stateful if layer.type.lower() == "readvalue"}
        for layer in stateful:
            number = _stateful_opset(layer.version)
            if number is None or layer.type.lower() != "assign":
                continue
            variable = layer.data.get("variable_id", "")
            if number >= 6 and variable not in declared:
                self._unknown_variable(layer, variable, "no ReadValue of its graph declares it")
            if number < 6 and self._variable_walk > 0 and not self._read_before(layer, variable, by_id, producer):
                self._unknown_variable(layer, variable, "no ReadValue of opset3 to opset5 before it reads it")

    def _read_before(
        self, assign: Layer, variable: str, by_id: Mapping[str, Layer], producer: Mapping[PortRef, PortRef]
    ) -> bool:
        """Whether a ReadValue of opset3 to opset5 of ``variable`` is before ``assign``; True too once the walks have
        visited :data:`_VARIABLE_WALK` layers in all (a hostile file's many Assigns never cost more)."""
        seen = {assign.id}
        stack = [assign.id]
        while stack:
            current = stack.pop()
            for port in by_id[current].inputs:
                source = producer.get((current, port.id))
                if source is None or source[0] in seen:
                    continue
                self._variable_walk -= 1
                if self._variable_walk <= 0:
                    return True
                up = by_id[source[0]]
                if (
                    up.type.lower() == "readvalue"
                    and _stateful_opset(up.version) in (3, 4, 5)
                    and up.data.get("variable_id", "") == variable
                ):
                    return True
                seen.add(up.id)
                stack.append(up.id)
        return False

    def _unknown_variable(self, layer: Layer, variable: str, why: str) -> NoReturn:
        raise IRStructureError(
            f"{self.where(layer.line, layer.id, layer.name, layer.type)}: it writes the variable {variable!r}, but "
            f"{why} (OpenVINO refuses the model: Can't find variable with id = {variable})",
            line=layer.line,
        )

    def _v10_names(
        self,
        layers: Sequence[Layer],
        ordered: Sequence[Layer],
        by_id: Mapping[str, Layer],
        producer: Mapping[PortRef, PortRef],
        ports: Mapping[str, PortIndex],
    ) -> None:
        """What OpenVINO requires of an IR v10's names as it reads one (``update_v10_model``, of the model, not of its
        bodies): no tensor name on two of its inputs and outputs (a Result's output shares the names of the output
        it takes, but is a tensor of its own); then it gives every Result's output the name of the output it takes
        (its producer's name, and the output's index where the producer has several), and every Parameter its name,
        as tensor names, refusing one that is another tensor's name."""
        parameters = [layer for layer in layers if layer.type == "Parameter" and layer.outputs]
        results = [(layer, source) for layer in layers if layer.type == "Result" and layer.inputs
                   if (source := producer.get((layer.id, layer.inputs[0].id))) is not None]  # fmt: skip
        names: dict[PortRef, set[str]] = {}  # each output's tensor names, as they grow
        given: set[str] = set()
        built = built_ids(layers, by_id, producer)
        for layer in ordered:  # a name the file gives twice is renamed where OpenVINO builds it again (x, then x_1)
            for port in layer.outputs:
                own = names[(layer.id, port.id)] = set()
                if layer.id not in built and layer.type != "Parameter":  # (a layer OpenVINO never builds)
                    continue
                for name in dict.fromkeys(port.names):  # (a port's own name twice is one)
                    unique, k = name, 0
                    while unique in given:
                        k += 1
                        unique = f"{name}_{k}"
                    given.add(unique)
                    own.add(unique)

        leaves: dict[str, str] = {}  # tensor name -> the input or output (a layer id) that has it
        for layer in parameters:
            for name in names[(layer.id, layer.outputs[0].id)]:
                if name in leaves:
                    self._v10_refusal(layer, f"its tensor name {name!r} is another input's", "tensor names")
                leaves[name] = layer.id
        for layer, source in results:
            for name in names[source]:
                if leaves.setdefault(name, layer.id) != layer.id:
                    self._v10_refusal(layer, f"the tensor name {name!r} of its output is another input's or "
                                             f"output's", "tensor names")  # fmt: skip
        for layer, source in results:
            made = by_id[source[0]]
            indexed = ports.get(made.id)
            index = port_position(made.outputs, source[1], None if indexed is None else indexed[1])
            name = made.name if len(made.outputs) == 1 else f"{made.name}.{index}"
            if name in leaves and name not in names[source]:
                self._v10_refusal(layer, f"the name of its output, {name!r}, is a tensor's name")
            leaves.setdefault(name, "")
            names[source].add(name)
        for layer in parameters:
            own = names[(layer.id, layer.outputs[0].id)]
            if layer.name in leaves and layer.name not in own:
                self._v10_refusal(layer, f"its name {layer.name!r} is a tensor's name")
            leaves.setdefault(layer.name, "")
            own.add(layer.name)

    def _v10_refusal(self, layer: Layer, what: str, collide: str = "operation names") -> NoReturn:
        said = "Model tensor names have collisions" if collide == "tensor names" else (
            "Model operation names have collisions with tensor names")  # fmt: skip
        raise IRStructureError(
            f"{self.where(layer.line, layer.id, layer.name, layer.type)}: {what}; in an IR v10, OpenVINO names each "
            f"Parameter and Result's output by its layer, and refuses the model ({said})",
            line=layer.line,
        )

    # -- layers ---------------------------------------------------------------------------------------------------
    def count_layer(self) -> None:
        if self.layer_count >= self.limits.max_layers:
            raise LimitExceededError(
                f"{self.source}: more than {self.limits.max_layers} layers ({self.limits.layers_setting})"
            )
        self.layer_count += 1

    def layer_attrs(
        self, id_text: str | None, name: str | None, ltype: str | None, line: int | None
    ) -> tuple[str, str, str]:
        """A ``<layer>``'s id (as :func:`canonical_id` gives it), name and type, each checked to be there."""
        if id_text is None:
            raise IRStructureError(f"{self.at(line)}: <layer> has no 'id' attribute", line=line)
        layer_id = canonical_id(id_text)
        if layer_id is None:
            raise IRStructureError(
                f"{self.at(line)}: layer id {id_text!r} is not a non-negative integer; expected a layer id", line=line
            )
        for attr, value in (("name", name), ("type", ltype)):
            if value is None:
                raise IRStructureError(
                    f"{self.where(line, layer_id, name, ltype)}: <layer> has no {attr!r} attribute", line=line
                )
        assert name is not None and ltype is not None
        return layer_id, name, ltype

    def layer(
        self,
        layer_id: str,
        name: str,
        ltype: str,
        version: str,
        data: Mapping[str, str] | None,
        inputs: tuple[Port, ...],
        outputs: tuple[Port, ...],
        line: int | None,
        rt_info: tuple[RtInfo, ...] = (),
        bodies: tuple[Body, ...] = (),
    ) -> Layer:
        """A layer (its id, name and type from :meth:`layer_attrs`, ``data`` None when it has no ``<data>``); a
        Parameter's, Const's or Convert's attributes checked and read."""
        try:
            # each input's id its own, each output's its own (an input and an output may share one)
            if len(inputs) > 1 and len({p.id for p in inputs}) != len(inputs):
                self._duplicate_port(inputs, "input", line, layer_id, name, ltype)
            if len(outputs) > 1 and len({p.id for p in outputs}) != len(outputs):
                self._duplicate_port(outputs, "output", line, layer_id, name, ltype)
            if type(data) is dict:  # as the careful reader gathers them: read-only from here on
                data = MappingProxyType(data) if data else NO_DATA
            elif data is None and ltype != "Parameter":
                data = NO_DATA
            unbuilt: IRError | None = None  # what OpenVINO refuses only if it builds the layer
            if data and ltype in _TYPED:
                data, unbuilt = self._blank_type(data, _TYPED[ltype], self.where(line, layer_id, name, ltype))
            etype: ElementType | None = None
            shape: PartialShape | None = None
            const: ConstData | None = None
            if ltype == "Const":
                etype, shape, const = self._const(data or NO_DATA, outputs, line, layer_id, name)
            elif ltype == "Parameter":
                # OpenVINO's defaults for what <data> leaves out: the dynamic element type and a scalar (not the port's
                # dims, which it never reads for a known op).
                where = self.where(line, layer_id, name, ltype)
                if data is None:
                    raise IRStructureError(f"{where}: a Parameter has no <data>; OpenVINO refuses the model")
                etype = self.etype_attr(data, "element_type", where, required=False) or _DYNAMIC
                shape = self.shape_attr(data, where, required=False) or _SCALAR
                if len(outputs) != 1:
                    raise IRStructureError(
                        f"{where}: a Parameter must have exactly one output port, found {len(outputs)}"
                    )
            elif ltype == "Convert" and data and "destination_type" in data:
                where = self.where(line, layer_id, name, ltype)
                etype = self.etype_attr(data, "destination_type", where, required=True)
            kind = (ltype, version)
            if kind not in self._opsets:
                if _blank_ended(ltype, version) or _not_in_opset(ltype, version):
                    self._unknown_kinds.add(kind)
                elif not version or ltype in _VERSIONED or _is_reduction(ltype):
                    _check_opset(ltype, version, self.where(line, layer_id, name, ltype))
                if len(self._opsets) < _CACHE_SIZE:
                    self._opsets.add(kind)
            if len(ltype) in (5, 8) and ltype != "Const" and ltype.lower() in ("const", "constant"):
                unbuilt = unbuilt or _not_const(ltype, version, self.where(line, layer_id, name, ltype), line)
            if self._unknown_kinds and kind in self._unknown_kinds:
                try:
                    _check_opset(ltype, version, self.where(line, layer_id, name, ltype))
                except IRError as exc:
                    unbuilt = _located(exc, line)
            if data and "size" in data and "offset" in data and "element_type" in data and not _plain_weights(data):
                weightless = _weightless(data, self.where(line, layer_id, name, ltype))
                if weightless is not None and ltype == "Parameter":  # OpenVINO builds every Parameter
                    raise weightless
                unbuilt = unbuilt or weightless
            # Parameter, Const: no input; Result: one (an IR v10's unconnected input ports after the others are not
            # the op's: counted once the edges are read)
            counted_later = self.ir_version == 10 and len(inputs) > (ltype == "Result")
            if ltype in _VERSIONED and len(inputs) != (ltype == "Result") and not counted_later:
                _versioned_inputs(self.where(line, layer_id, name, ltype), ltype, len(inputs))
            if ltype.lower() in _STATEFUL and "variable_id" not in (data or NO_DATA) and _opset_6_on(version):
                raise IRStructureError(f"{self.where(line, layer_id, name, ltype)}: no variable_id attribute; a "
                                       f"{ltype} of opset6 on names the variable it reads or writes by it (OpenVINO's "
                                       f"reader crashes on the model)")  # fmt: skip
            if ltype in WITH_BODIES and not bodies:
                raise IRStructureError(
                    f"{self.where(line, layer_id, name, ltype)}: no sub-graph body; expected "
                    + " and ".join(f"<{t}>" for t in WITH_BODIES[ltype])
                    + " (OpenVINO refuses the model)"
                )
            if ltype in ("Loop", "TensorIterator") and bodies:
                single = self._iteration_map(ltype, bodies[0], inputs, outputs, self.where(line, layer_id, name, ltype))
                unbuilt = unbuilt or single
            if rt_info and self.ir_version > 10:  # (OpenVINO reads no runtime attribute of an IR v10; ports: port())
                check_runtime_attributes(rt_info, self.where(line, layer_id, name, ltype))
            built = Layer(
                layer_id,
                name,
                ltype,
                version,
                data or NO_DATA,
                inputs,
                outputs,
                line,
                rt_info,
                etype,
                shape,
                const,
                bodies,
            )
        except (IRError, LimitExceededError) as exc:  # (a rank past the limit: its line too)
            raise _located(exc, line) from None
        if unbuilt is not None:
            self._unless_unbuilt.append((built, _located(unbuilt, line)))
        elif len(ltype) == 8 and ltype.lower() == "constant" and "value" not in (data or NO_DATA):
            self._dataless.append(built)  # (a `value` attribute's text is data to OpenVINO, as a Const's)
        if ltype.lower() in _STATEFUL:
            self._stateful.setdefault(self.body_depth, []).append(built)
        if ltype in _VERSIONED and counted_later:
            self._counted_later.append(built)
        return built

    def _blank_type(self, data: Mapping[str, str], attr: str, where: str) -> tuple[Mapping[str, str], IRError | None]:
        """``data`` with the element type ``attr`` trimmed where it has a blank, and OpenVINO's refusal of the blank
        (it trims none), kept for a layer it builds."""
        text = data.get(attr)
        if text is None or text == text.strip():
            return data, None
        try:
            element_type(text)
        except ElementTypeError as exc:
            return MappingProxyType({**data, attr: text.strip()}), ElementTypeError(f"{where}: {attr}: {exc}")
        return data, None

    def _iteration_map(
        self, ltype: str, body: Body, inputs: tuple[Port, ...], outputs: tuple[Port, ...], where: str
    ) -> IRError | None:
        """What OpenVINO requires of a Loop's or TensorIterator's port map beyond its entries: every input and
        output port mapped (but a Loop's first two inputs, its trip count and condition, which a body Parameter may
        take too). A Loop whose port map names no body Result for its ``execution_condition`` OpenVINO builds with
        one output and checks no more: the refusal returned is that of its second output port, in an IR v11, whose
        runtime attributes it reads on an output the Loop lacks (only if it builds the Loop)."""
        if ltype == "Loop" and body.condition is None:
            if self.ir_version > 10 and len(outputs) > 1:
                return IRStructureError(
                    f'{where}: <port_map> has no <output purpose="execution_condition">, so OpenVINO gives the Loop '
                    f"one output, and it has {len(outputs)} output ports; expected the body Result that decides "
                    f"whether the loop goes on, or one output port (OpenVINO refuses the model: node index is out of "
                    f"range)"
                )
            return None
        special = 2 if ltype == "Loop" else 0
        for role, mapped, ports in (("input", body.inputs, inputs), ("output", body.outputs, outputs)):
            skipped = special if role == "input" else 0
            count = len({m.external_port_id for m in mapped if m.external_port_id >= skipped})
            wanted = len(ports) - skipped
            if count < wanted or (count > wanted and role == "input"):
                besides = " besides its trip count and condition" if special and role == "input" else ""
                raise IRStructureError(
                    f"{where}: <port_map> maps {count} of its {wanted} {role} ports{besides}; expected an <{role}> "
                    f"for each (OpenVINO refuses the model)"
                )
        return None

    def _duplicate_port(
        self, ports: tuple[Port, ...], role: str, line: int | None, layer_id: str, name: str, ltype: str
    ) -> None:
        seen: set[str] = set()
        twice: set[str] = set()
        for p in ports:
            (twice if p.id in seen else seen).add(p.id)
        dup = min(twice, key=int)
        raise IRStructureError(
            f"{self.where(line, layer_id, name, ltype)}: {role} port id {dup} is used twice; each {role} of a layer "
            f"needs an id of its own (OpenVINO connects an edge to the first and leaves the other "
            f"{'unconnected' if role == 'input' else 'without consumers'})"
        )

    def _const(
        self, data: Mapping[str, str], outputs: tuple[Port, ...], line: int | None, layer_id: str, name: str
    ) -> tuple[ElementType, PartialShape, ConstData]:
        key = (data.get("element_type", ""), data.get("shape", ""), data.get("size", ""))
        layout = self._layouts.get(key)
        if layout is not None and len(outputs) == 1 and "value" not in data:  # the checks below passed before
            offset, weights = data.get("offset", ""), self.weights
            if weights is not None and offset.isascii() and offset.isdigit() and len(offset) <= 20:
                etype, shape, count, nbytes = layout
                start = int(offset)
                if start + nbytes <= weights.size:
                    return etype, shape, ConstData(start, nbytes, count)
        where = self.where(line, layer_id, name, "Const")
        found_type = self.etype_attr(data, "element_type", where, required=True)
        found_shape = self.shape_attr(data, where, required=True)
        assert found_type is not None and found_shape is not None
        if len(outputs) != 1:
            raise IRStructureError(f"{where}: a Const must have exactly one output port, found {len(outputs)}")
        const = self._const_data(data, found_type, found_shape, where)
        expected = found_type.nbytes(const.count)
        if (
            expected is not None
            and const.count > 0
            and found_type.kind != "dynamic"
            and len(self._layouts) < _CACHE_SIZE
        ):
            self._layouts[key] = (found_type, found_shape, const.count, expected)
        return found_type, found_shape, const

    def etype_attr(self, data: Mapping[str, str], attr: str, where: str, *, required: bool) -> ElementType | None:
        text = data.get(attr)
        if text is None:
            if required:
                raise IRStructureError(f"{where}: <data> has no {attr!r} attribute")
            return None
        found = self._etypes.get((attr, text))
        if found is not None:
            return found
        try:
            found = element_type(text)
        except ElementTypeError as exc:
            raise ElementTypeError(f"{where}: {attr}: {exc}") from None
        if len(self._etypes) < _CACHE_SIZE:
            self._etypes[attr, text] = found
        return found

    def shape_attr(self, data: Mapping[str, str], where: str, *, required: bool) -> PartialShape | None:
        text = data.get("shape")
        if text is None:
            if required:
                raise IRStructureError(f"{where}: <data> has no 'shape' attribute")
            return None
        try:
            shape = _parse_shape(text)
        except ValueError as exc:
            raise IRStructureError(f"{where}: shape={quoted(text)}: {exc}") from None
        if shape.rank is not None and shape.rank > self.limits.max_rank:
            raise LimitExceededError(f"{where}: rank {shape.rank} exceeds the limit of {self.limits.max_rank}")
        return shape

    def _const_data(self, data: Mapping[str, str], etype: ElementType, shape: PartialShape, where: str) -> ConstData:
        if not shape.is_static:
            raise IRStructureError(f"{where}: shape={data['shape']!r}: a Const must have a static shape")
        inline = data.get("value") if etype.kind != "string" else None  # a string Const's is never read
        values = {}
        for attr in ("offset", "size"):
            text = data.get(attr)
            if inline is not None and ("offset" not in data or "size" not in data):  # parsed only where both are
                continue
            if text is None:
                raise IRStructureError(f"{where}: <data> has no {attr!r} attribute")
            found = _ID.fullmatch(text)
            if found is None:
                raise IRStructureError(f"{where}: {attr}={text!r} is not a non-negative integer")
            if len(found[1]) > 20:  # int() refuses more than 4300 digits; the .bin is far smaller anyway
                raise WeightsError(f"{where}: {attr}={text[:24]}... is out of range; expected a byte count in the .bin")
            values[attr] = int(found[1])
        count = math.prod(shape.to_list())
        expected = etype.nbytes(count)
        if inline is not None:
            return self._inline_data(inline, etype, shape, count, expected, where)
        offset, size = values["offset"], values["size"]
        # OpenVINO's serializer writes a 1-byte placeholder for a Const with no elements.
        if expected is not None and size != expected and not (count == 0 and size == 1):
            raise WeightsError(
                f"{where}: size={size} does not match shape {shape} of {etype}: expected {expected} bytes "
                f"({count} elements{_BLOCKS.get(etype.name, '')})"
            )
        if etype.kind == "string" and size < 4 * (count + 2):
            raise WeightsError(
                f"{where}: size={size} is too small for {count} strings: expected at least {4 * (count + 2)} "
                f"bytes (count, {count + 1} offsets, characters)"
            )
        if etype.kind == "dynamic":
            raise ElementTypeError(f"{where}: {_DYNAMIC_CONST}")
        if size == 0 and (self.weights is None or self.weights.size == 0):  # OpenVINO: "Empty weights data in bin..."
            wanted = f" (expected {self.expected_bin})" if self.expected_bin and self.weights is None else ""
            why = (
                "there is none; OpenVINO refuses the model" if self.weights is None else
                "it is empty: the Const then has no data, which OpenVINO refuses where an op reads it ('ptr is Null', "
                "as a reduction's axes), and reads where none does; ovreduce refuses it whatever reads it"
            )  # fmt: skip
            raise WeightsError(
                f"{where}: a Const holding no bytes still needs a weights file that is not empty, and {why}{wanted}"
            )
        if self.weights is None:
            raise WeightsError(
                f"{where}: needs {size} bytes at offset {offset} of the weights file, but there is none"
                + (f" (expected {self.expected_bin})" if self.expected_bin else "")
            )
        self.weights.check_range(offset, size, where=where)
        if etype.kind == "string":  # OpenVINO unpacks the strings as it reads the model
            from ovreduce.ir.values import string_spans  # NumPy: imported for string Consts only

            try:
                string_spans(self.weights.read(offset, size, where=where), count)
            except WeightsError as exc:
                raise WeightsError(f"{where}: {exc.message}") from None
        return ConstData(offset, size, count)

    @staticmethod
    def _inline_data(
        text: str, etype: ElementType, shape: PartialShape, count: int, expected: int | None, where: str
    ) -> ConstData:
        """A Const whose ``<data>`` has a ``value`` attribute: OpenVINO takes the bytes of its text (UTF-8, as the
        XML parser gives it: entities replaced, a literal tab or line break a blank) as the constant's data, and
        reads neither the ``.bin`` nor the ``offset`` and ``size`` (which it still parses where both are given).
        A text of fewer bytes than the shape needs is refused: OpenVINO reads past its end."""
        if etype.kind == "dynamic":
            raise ElementTypeError(f"{where}: {_DYNAMIC_CONST}")
        raw = text.encode("utf-8", "surrogatepass")
        assert expected is not None  # (None only for strings, which never come here)
        if len(raw) < expected:
            shown = text if len(text) <= 40 else text[:40] + "..."
            raise WeightsError(
                f"{where}: value={shown!r}: OpenVINO takes the text of a Const's 'value' attribute as its data, in "
                f"place of the .bin's, and {len(raw)} byte(s) of text are fewer than shape {shape} of {etype} needs "
                f"({expected}): it reads past the text's end, values that vary from run to run; expected a value of "
                f"at least {expected} bytes, or no value attribute (the data then read from the .bin)"
            )
        return ConstData(0, expected, count, raw[:expected])

    # -- ports ----------------------------------------------------------------------------------------------------
    def port(
        self,
        id_text: str | None,
        precision_text: str | None,
        names_text: str | None,
        dims: Sequence[tuple[str | None, int | None]],
        line: int | None,
        rt_info: tuple[RtInfo, ...],
        where: str,
        *,
        output: bool,
    ) -> Port:
        """A ``<port>`` of an ``<output>`` (else an ``<input>``) from its ``id``, ``precision`` and ``names``
        attributes and its ``<dim>`` texts with their lines; ``where`` names its layer in messages.

        OpenVINO requires the precision of an output port (and reads it only for ops it does not know); an input
        port's it never reads, so an unknown one is no error there (and reads as None)."""
        try:
            port_id = None if id_text is None else canonical_id(id_text)
            if port_id is None:
                got = "no 'id' attribute" if id_text is None else f"id {id_text!r}"
                raise IRStructureError(f"{where}{_said(line)}: <port> has {got}; expected a non-negative integer id")
            precision = None
            if precision_text is not None:
                precision = _PRECISIONS.get(precision_text)
                if precision is None:
                    try:
                        precision = element_type_from_precision(precision_text)
                    except ElementTypeError as exc:
                        if output:
                            raise ElementTypeError(f"{where}, port {port_id}: {exc}") from None
            elif output:
                raise IRStructureError(
                    f"{where}{_said(line)}: output port {port_id} has no 'precision' attribute; expected its element "
                    f"type (OpenVINO refuses the model)"
                )
            if len(dims) > self.limits.max_rank:
                raise LimitExceededError(
                    f"{where}, port {port_id}{_said(line)}: rank {len(dims)} exceeds the limit of "
                    f"{self.limits.max_rank}"
                )
            values = []
            for text, dim_line in dims:
                if text is not None and text.isdigit() and len(text) < 19 and text.isascii():
                    values.append(int(text))
                elif text == "-1":
                    values.append(-1)
                else:
                    values.append(self._dim(text, dim_line, where, port_id))
            if not names_text:
                names: tuple[str, ...] = ()
            elif "\\" not in names_text and ",," not in names_text and names_text[0] != "," and names_text[-1] != ",":
                names = tuple(names_text.split(","))
                if len(names) > 1 and len(set(names)) != len(names):  # a name written twice is one (a set's)
                    names = tuple(dict.fromkeys(names))
            else:
                names = _names(names_text)
            if rt_info and self.ir_version > 10:
                check_runtime_attributes(rt_info, f"{where}, port {port_id}")
            return Port(port_id, precision, names, _shared(tuple(values)), line, rt_info)
        except (IRError, LimitExceededError) as exc:
            raise _located(exc, line) from None

    def _dim(self, text: str | None, line: int | None, where: str, port: str) -> int:
        found = _DIM.match(text or "")
        if found is None:
            raise IRStructureError(
                f"{where}, port {port}{_said(line)}: <dim>{text or ''}</dim> is not an integer; "
                f"expected a size >= 0 or -1 for a dynamic dimension",
                line=line,
            )
        digits = found[2]
        value = int(digits) if len(digits) <= 20 else INT64_MAX + 1  # int() refuses more than 4300 digits
        value = -value if found[1] == "-" else value
        if value < -1 or value > INT64_MAX:
            raise IRStructureError(
                f"{where}, port {port}{_said(line)}: <dim>{(text or '').strip()}</dim> is out of range; "
                f"expected a size >= 0 (and < 2^63) or -1 for a dynamic dimension",
                line=line,
            )
        return value

    @staticmethod
    def ports_at(ports: tuple[Port, ...], line: int) -> tuple[Port, ...]:
        """``ports`` (built by :meth:`port` with lines counted from 0) for an element whose content starts at
        ``line``: the fast reader builds the ports of each distinct ``<input>``/``<output>`` text once."""
        if len(ports) == 1:  # most elements (no list to build)
            port_id, precision, names, dims, at, _ = ports[0]
            return (Port(port_id, precision, names, dims, line + (at or 0)),)
        return tuple([Port(i, precision, names, dims, line + (at or 0)) for i, precision, names, dims, at, _ in ports])

    # -- sub-graph bodies -----------------------------------------------------------------------------------------
    def enter_body(self, where: str, line: int | None = None) -> None:
        if self.body_depth >= self.limits.max_body_depth:
            raise LimitExceededError(
                f"{where}: sub-graph bodies are nested more than {self.limits.max_body_depth} deep (the configured "
                f"limit)",
                line=line,
            )
        self.body_depth += 1

    def leave_body(self) -> None:
        self.body_depth -= 1

    def body(
        self,
        tag: str,
        line: int | None,
        layers: Sequence[Layer],
        edges: Iterable[RawEdge],
        port_map: Sequence[tuple[str, Mapping[str, str], int | None]],
        back_edges: Sequence[tuple[str, Mapping[str, str], int | None]],
        where: str,
        inputs: tuple[Port, ...],
        outputs: tuple[Port, ...],
        *,
        ltype: str | None = None,
    ) -> Body:
        """A body (``<body>``, ``<then_body>`` or ``<else_body>``) of the layer ``where`` names: its layers in file
        order and edges, and the (element name, attributes, line) of each entry of its port map and back edges."""
        role, map_tag = BODY_ROLES[tag]
        where = self._unplaced(where)  # each message names the line of its own entry
        outer, self.graph_of = self.graph_of, f" in the {'body' if role == 'body' else f'{role} body'} of {where}"
        try:
            graph = self.model(role, layers, edges, (), b"")
        finally:
            self.graph_of = outer
        by_id = {layer.id: layer for layer in graph.layers}
        ins: list[PortMapping] = []
        outs: list[PortMapping] = []
        # OpenVINO keys a port map's entries by external_port_id and reads the first of each (a std::map's emplace);
        # of an entry with a negative id it reads no more than what makes it an input or output description
        seen: dict[str, set[int]] = {"input": set(), "output": set()}
        for item_tag, attrs, item_line in port_map:
            try:
                what = f"{self.at(item_line)}: {where}: <{map_tag}> <{item_tag}>"
                ext = self._int_attr(attrs, "external_port_id", what, required=True)
                assert ext is not None
                new_id = ext not in seen[item_tag]
                seen[item_tag].add(ext)
                if not new_id:
                    continue  # never read
                if ext < 0 and not self._described(item_tag, attrs, ltype == "Loop", what, back_edges):
                    continue
                mapped = self._mapping(item_tag, attrs, item_line, map_tag, where, by_id, inputs)
            except IRError as exc:
                raise _located(exc, item_line) from None
            (ins if item_tag == "input" else outs).append(mapped)
        connected = sum(1 for m in outs if m.external_port_id >= 0)
        # a Loop's, TensorIterator's or If's outputs take the entries in the order of their ids: one past its ports is
        # an output of its own that feeds nothing (OpenVINO reads it)
        if connected > len(outputs) and ltype not in ("Loop", "TensorIterator", "If"):
            raise IRStructureError(
                f"{self.at(line)}: {where}: <{map_tag}> maps {connected} outputs but the layer has {len(outputs)} "
                f"output ports; expected at most one <output> per port",
                line=line,
            )
        back: list[BackEdge] = []
        if role == "body":
            fed: dict[str, BackEdge] = {}
            # OpenVINO looks for a back edge of each input it does not slice, and reads no more of the others
            merged = {m.internal_layer_id for m in ins if m.axis is None}
            for item_tag, attrs, item_line in back_edges:
                try:
                    item = self._back_edge(item_tag, attrs, item_line, where, by_id, merged)
                except IRError as exc:
                    raise _located(exc, item_line) from None
                if item is None:
                    continue
                earlier = fed.setdefault(item.to_layer, item)
                if earlier is not item:
                    raise IRStructureError(
                        f"{self.at(item.line)}: {where}: <back_edges> <edge> to-layer={item.to_layer}: the "
                        f"Parameter is already fed by the back edge{_said(earlier.line, ' at line ')}; expected one "
                        f"back edge per body Parameter",
                        line=item.line,
                    )
                back.append(item)
        return Body(role, graph, tuple(ins), tuple(outs), tuple(back), line)

    @staticmethod
    def _described(
        tag: str,
        attrs: Mapping[str, str],
        loop: bool,
        what: str,
        back_edges: Sequence[tuple[str, Mapping[str, str], int | None]],
    ) -> bool:
        """Whether OpenVINO reads a port-map entry with a negative ``external_port_id`` (the first of its id) as more
        than a number: a Loop's ``execution_condition`` output or ``current_iteration`` input, whose body layer it
        looks up. It refuses the model where such an input is sliced or fed by a back edge (it makes it an input
        description of no port), and reads the entry's ``internal_layer_id`` as an unsigned integer in any case."""
        text = attrs.get("internal_layer_id")
        internal = None if text is None else canonical_id(text)
        if internal is None:
            got = "is missing" if text is None else f"is {text!r}"
            raise IRStructureError(f"{what}: internal_layer_id {got}; expected the id of a body layer")
        purpose = attrs.get("purpose") if loop else None  # a TensorIterator's or If's purpose is never read
        if tag == "output":
            return purpose == "execution_condition"
        fed = any(
            item_tag == "edge" and canonical_id(edge.get("to-layer") or "") == internal
            for item_tag, edge, _ in back_edges
        )
        if "axis" in attrs or fed:
            how = "sliced along an axis" if "axis" in attrs else "fed by a back edge"
            raise IRStructureError(
                f"{what}: external_port_id={attrs.get('external_port_id', '').strip()} is no input port, and the "
                f"body Parameter it maps is {how}; OpenVINO makes it an input description of no port and refuses "
                f"the model (Number of inputs must be the same as number of input descriptions)"
            )
        return purpose == "current_iteration"

    def _mapping(
        self,
        tag: str,
        attrs: Mapping[str, str],
        line: int | None,
        map_tag: str,
        where: str,
        by_id: Mapping[str, Layer],
        inputs: tuple[Port, ...],
    ) -> PortMapping:
        """One port-map entry, its internal layer checked to be a body Parameter (input) or Result (output)."""
        what = f"{self.at(line)}: {where}: <{map_tag}> <{tag}>"
        ext = self._int_attr(attrs, "external_port_id", what, required=True)
        assert ext is not None
        text = attrs.get("internal_layer_id")
        internal = None if text is None else canonical_id(text)
        if internal is None:
            got = "is missing" if text is None else f"is {text!r}"
            raise IRStructureError(f"{what}: internal_layer_id {got}; expected the id of a body layer")
        expected = "Parameter" if tag == "input" else "Result"
        target = by_id.get(internal)
        if target is None:
            raise IRStructureError(
                f"{what}: internal_layer_id={internal}: the body has no layer with that id; expected a body {expected}"
            )
        if target.type != expected:
            raise IRStructureError(
                f"{what}: internal_layer_id={internal} is {target.where}; expected a body {expected}"
            )
        # (a negative id reaches here only for a Loop's current iteration, which OpenVINO finds by its purpose)
        if tag == "input" and ext >= len(inputs):
            raise IRStructureError(
                f"{what}: external_port_id={ext} but the layer has {len(inputs)} inputs; expected 0 to "
                f"{len(inputs) - 1} (or -1 for a body-only Parameter; OpenVINO refuses the model)"
            )
        axis = self._int_attr(attrs, "axis", what, required=False)
        if tag == "input" and axis is not None and ext >= 0 and inputs[ext].dims:
            rank = len(inputs[ext].dims)
            if not 0 <= axis < rank:  # OpenVINO reads the slicing axis as unsigned and refuses the model
                raise IRStructureError(
                    f"{what}: axis={axis} but input port {inputs[ext].id} has rank {rank}; expected an axis from 0 to "
                    f"{rank - 1} to slice it along (OpenVINO refuses the model)"
                )
        if tag == "input" and axis is not None and axis < 0:  # unsigned to OpenVINO, dims or none
            raise IRStructureError(
                f"{what}: axis={axis}; expected an axis of 0 or more to slice the input along (OpenVINO reads it as "
                f"an unsigned integer and refuses the model)"
            )
        part_size = self._int_attr(attrs, "part_size", what, required=False)
        if part_size is not None and part_size < 1:
            raise IRStructureError(f"{what}: part_size={part_size}; expected a positive integer")
        return PortMapping(
            external_port_id=ext,
            internal_layer_id=internal,
            axis=axis,
            start=_or(self._int_attr(attrs, "start", what, required=False), 0),
            end=_or(self._int_attr(attrs, "end", what, required=False), -1),
            stride=_or(self._int_attr(attrs, "stride", what, required=False), 1),
            part_size=_or(part_size, 1),
            purpose=attrs.get("purpose"),
            line=line,
        )

    def _back_edge(
        self,
        tag: str,
        attrs: Mapping[str, str],
        line: int | None,
        where: str,
        by_id: Mapping[str, Layer],
        merged: set[str],
    ) -> BackEdge | None:
        """A back edge to one of the ``merged`` Parameters (mapped, not sliced) from a body Result; None for one to
        any other layer, which OpenVINO never looks up: it reads its ``to-layer`` as an id, and no more of it."""
        what = f"{self.at(line)}: {where}: <back_edges>"
        if tag != "edge":
            raise IRStructureError(f"{what}: unexpected <{tag}>; expected <edge>")
        ends = []
        for attr, expected in (("to-layer", "Parameter"), ("from-layer", "Result")):
            text = attrs.get(attr)
            found = None if text is None else canonical_id(text)
            if found is None:
                got = "is missing" if text is None else f"is {text!r}"
                raise IRStructureError(
                    f"{what} <edge> attribute {attr!r} {got}; expected the id of a body {expected} (OpenVINO refuses "
                    f"the model)"
                )
            if attr == "to-layer" and found not in merged:
                return None
            target = by_id.get(found)
            if target is None or target.type != expected:
                got = "no layer of the body" if target is None else target.where
                raise IRStructureError(
                    f"{what} <edge> {attr}={found} is {got}; expected a body {expected} (OpenVINO refuses the model)"
                )
            ends.append(found)
        return BackEdge(ends[1], ends[0], line)

    @staticmethod
    def _int_attr(attrs: Mapping[str, str], attr: str, what: str, *, required: bool) -> int | None:
        text = attrs.get(attr)
        if text is None:
            if required:
                raise IRStructureError(f"{what} has no {attr!r} attribute; expected an integer")
            return None
        found = _INT.fullmatch(text)
        # the length first: int() refuses more than 4300 digits with a ValueError of its own
        if found is None or len(found[2]) > 19 or int(found[2]) > INT64_MAX + (found[1] == "-"):  # -2**63 too
            raise IRStructureError(f"{what}: {attr}={text!r} is not an integer; expected a 64-bit integer")
        return -int(found[2]) if found[1] == "-" else int(found[2])

    # -- the graph ------------------------------------------------------------------------------------------------
    def graph(
        self, layers: Sequence[Layer], edges: Iterable[RawEdge]
    ) -> tuple[tuple[Layer, ...], tuple[Edge, ...], dict[str, Layer], dict[PortRef, PortRef], dict[str, PortIndex]]:
        """The layers (given in file order) in topological order, the edges, each layer by id, each input port's
        producer and the port positions of each layer of many ports (:func:`~ovreduce.ir.model.port_indices`); every id
        unique, every edge joining an existing output port to an input port no other edge feeds, every input port
        fed, no cycle."""
        by_id: dict[str, Layer] = {}
        index: dict[str, int] = {}
        ports: dict[str, PortIndex] = {}
        for i, layer in enumerate(layers):
            prev = by_id.setdefault(layer.id, layer)
            if prev is not layer:
                raise IRStructureError(
                    f"{self.at(layer.line)}: duplicate layer id {layer.id}{self.graph_of} (name {layer.name!r}); it "
                    f"was already used{_said(prev.line, ' at line ')} by layer {prev.name!r}: layer ids must be unique",
                    line=layer.line,
                )
            index[layer.id] = i
            if len(layer.inputs) > PORTS_WALKED or len(layer.outputs) > PORTS_WALKED:  # (port_indices, inline)
                ports[layer.id] = port_positions(layer)
        producer: dict[PortRef, PortRef] = {}
        indegree = [0] * len(layers)
        succ: list[list[int] | None] = [None] * len(layers)
        built: list[Edge] = []
        add = built.append
        for raw in edges:
            fl, fp, tl, tp, line = raw
            frm, to = index.get(fl), index.get(tl)
            out_id = in_id = None
            if frm is not None and to is not None:  # the port is nearly always the layer's first (or only) one
                outs, ins = layers[frm].outputs, layers[to].inputs
                if outs and outs[0].id == fp:
                    out_id = outs[0].id
                else:
                    out_id = _port_id(outs, fp, ports.get(fl), 1)
                    if out_id is not None and layers[frm].type == "Loop":
                        self._later_loop_output(layers[frm], layers[to], raw)
                in_id = ins[0].id if ins and ins[0].id == tp else _port_id(ins, tp, ports.get(tl), 0)
            if out_id is None or in_id is None:
                self._edge_problem(raw, by_id)
            assert frm is not None and to is not None and out_id is not None and in_id is not None
            # The layers' and ports' own id strings: every later lookup by them then matches by identity, not by
            # comparing characters (a million-layer graph's dicts no longer fit any cache).
            src_id, dst_id = layers[frm].id, layers[to].id
            key = (dst_id, in_id)
            if key in producer:
                first = next(e.line for e in built if e.to_layer == dst_id and e.to_port == in_id)
                raise IRStructureError(
                    f"{self.at(line)}: edge {src_id}:{out_id} -> {dst_id}:{in_id}{self.graph_of}: input port "
                    f"{in_id} of {layers[to].where} already has an incoming edge{_said(first, ' (line ', ')')}; an "
                    f"input port takes exactly one",
                    line=line,
                )
            producer[key] = (src_id, out_id)
            indegree[to] += 1
            after = succ[frm]
            if after is None:
                succ[frm] = [to]
            else:
                after.append(to)
            add(Edge(src_id, out_id, dst_id, in_id, line))
        order = _kahn_order(indegree, succ)
        if len(order) != len(layers):
            stuck = [layers[i].id for i, n in enumerate(indegree) if n > 0]
            on_cycles = [by_id[lid] for lid in _on_cycles(stuck, built)]
            names = ", ".join(f"id={layer.id} {layer.name!r}" for layer in on_cycles[:5])
            more = f" and {len(on_cycles) - 5} more" if len(on_cycles) > 5 else ""
            raise IRStructureError(
                f"{self.source}: the graph{self.graph_of} has a cycle through layers {names}{more}; an IR must be "
                f"acyclic"
            )
        ordered = tuple([layers[i] for i in order])
        if len(producer) != sum(len(layer.inputs) for layer in layers):
            ordered = self._unconnected(ordered, by_id, producer, ports)
        if self._counted_later:
            mine = {id(layer) for layer in ordered}
            for layer in self._counted_later:
                if id(layer) in mine and len(layer.inputs) != (layer.type == "Result"):
                    _versioned_inputs(layer.where, layer.type, len(layer.inputs))
            self._counted_later = [layer for layer in self._counted_later if id(layer) not in mine]
        return ordered, tuple(built), by_id, producer, ports

    def _unconnected(
        self,
        ordered: tuple[Layer, ...],
        by_id: dict[str, Layer],
        producer: Mapping[PortRef, PortRef],
        ports: dict[str, PortIndex],
    ) -> tuple[Layer, ...]:
        """``ordered`` where input ports are left unconnected: an error, but in an IR v10, whose unconnected input
        ports after its connected ones a layer does without (OpenVINO makes the op of the inputs edges reach, and
        reads no port's runtime attributes, which in an IR v11 asks for every input port it declares: "node index is
        out of range"); ``by_id`` then holds the layers without them."""
        trimmed: dict[str, Layer] = {}
        for layer in ordered:
            for i, port in enumerate(layer.inputs):
                if (layer.id, port.id) in producer:
                    continue
                after = layer.inputs[i:]
                if self.ir_version == 10 and all((layer.id, p.id) not in producer for p in after):
                    trimmed[layer.id] = layer._replace(inputs=layer.inputs[:i])
                    break
                raise IRStructureError(
                    f"{self.source}:{port.line}: input port {port.id} of {layer.where}{self.graph_of} has no incoming "
                    f"edge; "
                    f"every input port must be connected"
                    + ("" if self.ir_version != 10 else
                       " (OpenVINO reads an IR v10 whose unconnected input ports come after the connected ones)"),
                    line=port.line,
                )  # fmt: skip
        if not trimmed:
            return ordered
        for layer_id, layer in trimmed.items():
            by_id[layer_id] = layer
            ports.pop(layer_id, None)
        ports.update(port_indices(trimmed.values()))
        swapped = {id(layer): by_id[layer.id] for layer in ordered if layer.id in trimmed}
        self._unless_unbuilt = [(swapped.get(id(layer), layer), exc) for layer, exc in self._unless_unbuilt]
        self._dataless = [swapped.get(id(layer), layer) for layer in self._dataless]
        self._counted_later = [swapped.get(id(layer), layer) for layer in self._counted_later]
        self._stateful = {depth: [swapped.get(id(layer), layer) for layer in found]
                          for depth, found in self._stateful.items()}  # fmt: skip
        return tuple(trimmed.get(layer.id, layer) for layer in ordered)

    def _later_loop_output(self, loop: Layer, consumer: Layer, raw: RawEdge) -> None:
        """OpenVINO's refusal of an edge from a Loop's output port other than its first where the Loop has one
        output (its port map names no ``execution_condition``), kept for a ``consumer`` it builds."""
        body = loop.body("body")
        if body is None or body.condition is not None:
            return
        fl, fp, tl, tp, line = raw
        refusal = IRStructureError(
            f"{self.at(line)}: edge {fl}:{fp} -> {tl}:{tp} leaves output port {fp} of {loop.where}, whose <port_map> "
            f'has no <output purpose="execution_condition">, so that OpenVINO gives it one output; expected an edge '
            f"from its first output port (OpenVINO refuses the model: node index is out of range)",
            line=line,
        )
        self._unless_unbuilt.append((consumer, refusal))

    def edge_attrs(self, attrs: Mapping[str, str], line: int | None) -> RawEdge:
        """An ``<edge>``'s four ends, each an id as :func:`canonical_id` reads it."""
        ends = []
        for attr in ("from-layer", "from-port", "to-layer", "to-port"):
            text = attrs.get(attr)
            found = None if text is None else canonical_id(text)
            if found is None:
                got = "is missing" if text is None else f"is {text!r}"
                raise IRStructureError(
                    f"{self.at(line)}: <edge> attribute {attr!r} {got}; expected a non-negative integer", line=line
                )
            ends.append(found)
        return ends[0], ends[1], ends[2], ends[3], line

    def _edge_problem(self, raw: RawEdge, by_id: Mapping[str, Layer]) -> None:
        """Raise the precise error for an edge whose layer or port does not exist."""
        fl, fp, tl, tp, line = raw
        desc = f"edge {fl}:{fp} -> {tl}:{tp}{self.graph_of}"
        src, dst = by_id.get(fl), by_id.get(tl)
        if src is None:
            raise IRStructureError(f"{self.at(line)}: {desc} starts at layer id {fl}, which does not exist", line=line)
        if dst is None:
            raise IRStructureError(f"{self.at(line)}: {desc} ends at layer id {tl}, which does not exist", line=line)
        if all(p.id != fp for p in src.outputs):
            raise IRStructureError(
                f"{self.at(line)}: {desc}: {src.where} has no output port {fp} (its output ports: {_ids(src.outputs)})",
                line=line,
            )
        raise IRStructureError(
            f"{self.at(line)}: {desc}: {dst.where} has no input port {tp} (its input ports: {_ids(dst.inputs)})",
            line=line,
        )


_TYPED = {"Parameter": "element_type", "Const": "element_type", "Convert": "destination_type"}  # the element types
_VERSIONED = frozenset({"Parameter", "Const", "Result"})  # beside the reductions, the ops whose opsets are judged


def _versioned_inputs(where: str, ltype: str, count: int) -> NoReturn:
    wanted = "exactly one input port" if ltype == "Result" else "no input ports"
    raise IRStructureError(f"{where}: {count} input port(s); a {ltype} takes {wanted} (OpenVINO refuses the model)")


# A std::stoll of a text: C's blanks, a sign, digits (what follows is looked at by its caller).
_STOLL = re.compile(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)")


_PLAIN_TYPES = frozenset(t for t in ELEMENT_TYPES if t != "dynamic")  # as OpenVINO writes them: lower case


def _plain_weights(data: Mapping[str, str]) -> bool:
    """Whether a ``<data>``'s size and offset are plain decimal numbers of at most 18 digits and its element_type one
    of :data:`_PLAIN_TYPES`, as every file OpenVINO writes has them (then :func:`_weightless` has nothing to say: the
    common case, checked without building its message's place)."""
    size, offset = data["size"], data["offset"]
    return (
        len(size) <= 18 and len(offset) <= 18 and size.isascii() and size.isdigit() and offset.isascii()
        and offset.isdigit() and data["element_type"] in _PLAIN_TYPES
    )  # fmt: skip


def _weightless(data: Mapping[str, str], where: str) -> IRError | None:
    """OpenVINO's refusal of the ``size``, ``offset`` and ``element_type`` of a layer's ``<data>`` that has all three,
    which it reads on a layer of any type (where its weights are, for a model cache without weights): each of the
    first two an unsigned 64-bit integer as ``get_uint64_attr`` reads one (a ``std::stoll`` of the whole text, not
    negative), the last an element type as ``ov::element::Type`` names one (a port's precision); None: it reads them."""
    for attr in ("size", "offset"):
        text = data[attr]
        found = _STOLL.match(text)
        digits = "" if found is None else found[2].lstrip("0")
        if found is None or len(digits) > 19 or int(digits or "0") > INT64_MAX + (found[1] == "-"):
            said = "stoll"
        elif found.end() != len(text) or (found[1] == "-" and digits):
            said = f'node <data> has attribute "{attr}" = "{text}" which is not an unsigned 64 bit integer'
        else:
            continue
        return IRStructureError(
            f"{where}: <data> has size, offset and element_type, which OpenVINO reads on a layer of any type (where "
            f"its weights are, for a model cache without them), and {attr}={text!r} is not an unsigned 64-bit "
            f"integer; OpenVINO refuses the model ({said})"
        )
    text = data["element_type"]
    try:
        element_type_from_precision(text)
    except ElementTypeError:
        return ElementTypeError(
            f"{where}: <data> has size, offset and element_type, which OpenVINO reads on a layer of any type (where "
            f"its weights are, for a model cache without them), and element_type={text!r} names no element type as "
            f"it reads one there (f32, FP32, bf16, BF16..., in these cases); OpenVINO refuses the model (Unsupported "
            f"element type: {text})"
        )
    return None


def _blank_ended(ltype: str, version: str) -> bool:
    """Whether the layer's type or version begins or ends with a blank; not for a Result's type: no Result reaches a
    "Result " (it is none), so OpenVINO never builds it, and reads the model."""
    return ltype.strip() != "Result" and (ltype != ltype.strip() or version != version.strip())


_VARIABLE_WALK = 1 << 21
"""Layers visited in all by the searches for the ReadValue before each Assign of opset3 to opset5: past them the
rest are not judged (OpenVINO's own reading still refuses such a model)."""
_STATEFUL = ("readvalue", "assign")  # (OpenVINO's reader finds a type in any case)


def _opset_6_on(version: str) -> bool:
    """Whether ``version`` names an opset holding ReadValue-6 and Assign-6 (opset6 to opset16)."""
    number = _stateful_opset(version)
    return number is not None and number >= 6


def _stateful_opset(version: str) -> int | None:
    """The number of the opset ``version`` names where it holds ReadValue and Assign (opset3 on), else None."""
    from ovreduce.ops.base import LAST_OPSET
    from ovreduce.ops.registry import opset_number

    number = opset_number(version)
    return number if number is not None and 3 <= number <= LAST_OPSET else None


def _not_in_opset(ltype: str, version: str) -> bool:
    """Whether ``version`` names an opset the installed OpenVINO lacks (``opset0``, ``opset18``, ``Opset1``), or one
    that holds no op ``ltype`` (in any case: ``Gelu`` in opset1, ``Relu`` in opset17), for ops but the reductions,
    Parameter, Const and Result (judged as they are read), the layers typed "Constant" or "const" (:func:`_not_const`)
    and the ops a caller registered. Another version (``extension``) names an extension's op: not judged here."""
    from ovreduce._openvino import opset_types
    from ovreduce.ops.registry import is_registered

    lowered = ltype.lower()
    if ltype in _VERSIONED or lowered in ("const", "constant") or is_registered(ltype) or _is_reduction(ltype):
        return False
    tables = opset_types()
    # OpenVINO's reader takes these three of opset1 (which lacks them) from opset2, as written
    types = tables.get("opset2" if version == "opset1" and ltype in ("MVN", "ROIPooling", "ReorgYolo") else version)
    if types is None:
        return bool(tables) and re.fullmatch(r"opset[0-9]+", version, re.IGNORECASE) is not None
    return lowered not in types


def _is_reduction(ltype: str) -> bool:
    """Whether ``ltype`` (in any case) is a reduction's type in some opset (``ReduceMean``, ``reducesum``): its
    version is judged as it is read (:func:`_check_opset`). Another type named so (``ReduceLogSumExp``, ONNX's
    ``ReduceSumSquare``, ``Reduce``) is judged as any other type."""
    from ovreduce.ops.reduce import ReductionOp
    from ovreduce.ops.registry import resolve

    return isinstance(resolve(ltype), ReductionOp)


def _check_opset(ltype: str, version: str, where: str) -> None:
    """OpenVINO's refusal of a layer without a version (of any op), of a reduction, Parameter, Const or Result whose
    ``version`` is no opset holding it (``ReduceL2`` in opset1, ``opset99``, ``extension``), or of another op its
    opset lacks (:func:`_not_in_opset`): it reads no model with one, and the rule ovreduce would apply is another
    version's. Other ops' versions of no opset are an extension's ops: not judged."""
    from ovreduce.ops.base import LAST_OPSET
    from ovreduce.ops.reduce import ReductionOp
    from ovreduce.ops.registry import lookup, opset_number, resolve

    for attr, text in (("type", ltype), ("version", version)):
        if text != text.strip() and _blank_ended(ltype, version):
            raise IRStructureError(f"{where}: its {attr} {text!r} begins or ends with a blank, which OpenVINO does not "
                                   f"trim: no opset holds such an op; OpenVINO refuses the model")  # fmt: skip
    if not version:
        raise IRStructureError(f"{where}: no opset in its 'version' attribute, which is missing or empty (e.g. "
                               f"version=\"opset1\"); OpenVINO refuses the model")  # fmt: skip
    number = opset_number(version)
    if ltype == "Result":  # the registry has no rule for it: in every opset but opset17
        if number is not None and 1 <= number <= LAST_OPSET:
            return
    elif _not_in_opset(ltype, version):
        pass
    elif (ltype not in _VERSIONED and not isinstance(resolve(ltype, version), ReductionOp)) or lookup(
        ltype, version
    ) is not None:
        return
    if number is not None and number <= LAST_OPSET + 1:  # opset17 exists, without reductions
        why = f"Opset {version} doesn't contain the operation with type: {ltype}"
    else:
        why = f"unsupported opset: {version!r}"
    raise IRStructureError(f"{where}: {why}; OpenVINO refuses the model")


def _not_const(ltype: str, version: str, where: str, line: int | None) -> IRError | None:
    """OpenVINO's refusal of a layer typed "Constant" or "const" in any case but "Const" (None where it builds one):
    its reader translates the IR's "Const" (as written) to its Constant, and finds every other type in any case, so
    "Constant" is opset1's Constant (opset1 to opset16 hold it) and a "const" is no op."""
    from ovreduce.ops.base import LAST_OPSET
    from ovreduce.ops.registry import opset_number

    number = opset_number(version)
    if ltype.lower() == "constant" and number is not None and 1 <= number <= LAST_OPSET:
        return None
    if number is not None and number <= LAST_OPSET + 1:  # opset17 exists, without Constant
        why = f"Opset {version} doesn't contain the operation with type: {ltype}"
    else:
        why = f"Cannot create {ltype} layer from unsupported opset: {version}"
    return IRStructureError(
        f'{where}: {why}; OpenVINO refuses the model (a constant\'s type in an IR is "Const", as written)',
        line=line,
    )


_BLOCKS = {"u3": ", packed 8 to a block of 3 bytes, as OpenVINO writes u3",
           "u6": ", packed 4 to a block of 3 bytes, as OpenVINO writes u6"}  # fmt: skip


_Placed = TypeVar("_Placed", bound=IRError | LimitExceededError)


def _said(line: int | None, before: str = ", line ", after: str = "") -> str:
    """A line in a message, said only where it is known (past line 65535 it may not be)."""
    return f"{before}{line}{after}" if line else ""


def _located(exc: _Placed, line: int | None) -> _Placed:
    """``exc``, placed at ``line`` (the element being built) unless it already says a more precise place."""
    if exc.line is None and line is not None and line >= 1:
        exc.line = line
    return exc


def _names(text: str) -> tuple[str, ...]:
    """The tensor names of a ``names`` attribute as OpenVINO splits it: at commas, a comma after a backslash kept
    (the backslash dropped), empty names left out, nothing trimmed, a name met twice kept once (OpenVINO keeps a
    set: its writer spells ``,a`` and ``\\,a`` alike)."""
    names: list[str] = []
    held: list[str] = []  # the parts of a name whose commas were escaped, joined once it ends (linear time)
    for part in text.split(","):
        if part.endswith("\\"):
            held.append(part[:-1])
            continue
        if held:
            part = ",".join([*held, part])
            held.clear()
        if part:
            names.append(part)
    if held:
        names.append(",".join(held) + "\\")
    return tuple(dict.fromkeys(names))


def _port_id(ports: tuple[Port, ...], port_id: str, indexed: PortIndex | None, side: int) -> str | None:
    """The id string of the port with id ``port_id`` (None if there is none), ``indexed`` being its layer's port
    index (``side``: 0 inputs, 1 outputs)."""
    found = port_position(ports, port_id, None if indexed is None else indexed[side])
    return None if found is None else ports[found].id


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def _ids(ports: tuple[Port, ...]) -> str:
    return ", ".join(p.id for p in ports) or "none"


def _kahn_order(indegree: list[int], succ: list[list[int] | None]) -> list[int]:
    """Kahn's order of nodes ``0 .. n-1`` (first in, first out, so file order among equals) given each node's
    in-degree and successors (one entry per edge). Fewer than n nodes come back when there is a cycle, and
    ``indegree`` is then left above 0 exactly for the nodes the walk could not reach."""
    ready = deque([i for i, n in enumerate(indegree) if n == 0])
    order: list[int] = []
    popleft, push, add = ready.popleft, ready.append, order.append
    while ready:
        i = popleft()
        add(i)
        after = succ[i]
        if after is not None:
            for j in after:
                left = indegree[j] - 1
                indegree[j] = left
                if left == 0:
                    push(j)
    return order


def _on_cycles(stuck: list[str], edges: Sequence[Edge]) -> list[str]:
    """The layers Kahn's walk left behind, less those that merely hang below a cycle (feed no stuck layer)."""
    outdegree = dict.fromkeys(stuck, 0)  # in file order, which the message keeps
    members = set(stuck)
    pred: dict[str, list[str]] = {}
    for e in edges:
        if e.from_layer in members and e.to_layer in members:
            outdegree[e.from_layer] += 1
            pred.setdefault(e.to_layer, []).append(e.from_layer)
    sinks = deque(lid for lid, n in outdegree.items() if n == 0)
    while sinks:
        lid = sinks.popleft()
        del outdegree[lid]
        for p in pred.get(lid, ()):
            if p in outdegree:
                outdegree[p] -= 1
                if outdegree[p] == 0:
                    sinks.append(p)
    return list(outdegree)
