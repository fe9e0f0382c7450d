"""The ``ovreduce`` command: parse arguments, call the library, render, return an exit status.

Exit statuses: 0 clean / all agree; 1 a finding of severity error, a disagreement or a failed backend;
2 an input that could not be read, or a wrong command line; 3 an internal error (a bug: please report).
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ovreduce import shapes
from ovreduce.cli.errors import UsageError
from ovreduce.errors import InputError, OvReduceError
from ovreduce.shapes import PartialShape

__all__ = ["main"]

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
_GLOB_CHARS = set("*?[")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's own errors exit 2 with the usage line
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def expand_paths(items: Sequence[str]) -> list[Path]:
    """Files as given, folders searched recursively for ``*.xml``, globs expanded (sorted)."""
    out: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.xml") if p.is_file())
            if not found:
                raise UsageError(f"{item}: the folder holds no .xml files")
            out += found
        elif _GLOB_CHARS & set(item) and not path.exists():
            matches = sorted(Path(p) for p in glob.glob(item, recursive=True) if Path(p).is_file())
            if not matches:
                raise UsageError(f"{item}: the pattern matches no files")
            out += matches
        else:
            out.append(path)
    return out


def parse_named_shapes(items: Sequence[str], option: str) -> dict[str, PartialShape]:
    """``NAME=SHAPE`` options as a dict; :class:`UsageError` naming the option otherwise."""
    try:
        return shapes.parse_named_shapes(items)
    except ValueError as exc:
        raise UsageError(f"{option} {exc}") from None


def _emit(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# -- check ----------------------------------------------------------------------------------------------
def _cmd_check(args: argparse.Namespace) -> int:
    from ovreduce.check import check_paths
    from ovreduce.cli.render import check_junit, check_sarif, check_text

    paths = expand_paths(args.paths)
    if args.bin is not None and len(paths) != 1:
        raise UsageError(f"--bin names the weights of one model, but {len(paths)} models were given")
    reshape = parse_named_shapes(args.reshape, "--reshape")
    progress = None
    if len(paths) > 1 and sys.stderr.isatty():
        from tqdm import tqdm

        progress = tqdm(total=len(paths), unit="model", file=sys.stderr, leave=False)
    try:
        report = check_paths(
            paths, bin_path=Path(args.bin) if args.bin else None, reshape=reshape, engine=args.engine,
            progress=None if progress is None else lambda: progress.update(1),
        )  # fmt: skip
    finally:
        if progress is not None:
            progress.close()
    renderers: dict[str, Callable[[], str]] = {
        "json": lambda: json.dumps(report.to_json(), indent=2) + "\n",
        "junit": lambda: check_junit(report),
        "sarif": lambda: check_sarif(report),
        "text": lambda: check_text(report, verbose=args.verbose),
    }
    _emit(renderers[args.format]())
    if report.unreadable:
        return EXIT_INPUT
    return EXIT_OK if report.ok else EXIT_FINDINGS


# -- inspect --------------------------------------------------------------------------------------------
def _cmd_inspect(args: argparse.Namespace) -> int:
    from ovreduce.check.inspect import inspect_model
    from ovreduce.cli.render import inspect_text
    from ovreduce.ir.parser import load_ir

    model = load_ir(args.path, args.bin)
    try:
        doc = inspect_model(model, layer=args.layer, all_layers=args.all)
    finally:
        model.close()
    if args.format == "json":
        _emit(json.dumps(doc.to_json(), indent=2) + "\n")
    else:
        _emit(inspect_text(doc.to_json(), detail=args.layer is not None))
    return EXIT_OK


# -- run ----------------------------------------------------------------------------------------------------
def parse_named_files(items: Sequence[str]) -> dict[str, Any]:
    """``NAME=FILE`` pairs loaded as arrays."""
    from ovreduce.tensors import load_tensor

    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--input {item!r}: expected NAME=FILE, e.g. --input 0=data.npy or --input x=inputs.npz:x")
        out[name] = load_tensor(path)
    return out


def _cmd_run(args: argparse.Namespace) -> int:
    from ovreduce.cli.render import run_text
    from ovreduce.ir.parser import load_ir
    from ovreduce.run import run_layer

    inputs = parse_named_files(args.input)
    shapes = parse_named_shapes(args.shape, "--shape")
    if (args.atol is not None and args.atol < 0) or (args.rtol is not None and args.rtol < 0):
        raise UsageError("--atol and --rtol must be >= 0")
    model = load_ir(args.model, args.bin)
    try:
        report = run_layer(
            model, args.layer, inputs=inputs, shapes=shapes, seed=args.seed,
            backends=args.backend or ["numpy", "openvino"], device=args.device, precision=args.precision,
            atol=args.atol, rtol=args.rtol,
        )  # fmt: skip
    finally:
        model.close()
    if args.save_outputs:
        _save_outputs(Path(args.save_outputs), report.outputs)
    if args.format == "json":
        _emit(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        _emit(run_text(report, source=args.model))
    return EXIT_OK if report.ok else EXIT_FINDINGS


def _save_outputs(folder: Path, outputs: dict[str, Any]) -> None:
    import numpy as np

    try:
        folder.mkdir(parents=True, exist_ok=True)
        for backend, array in outputs.items():
            np.save(folder / (backend.replace(":", "-") + ".npy"), array)
    except OSError as exc:
        raise UsageError(f"--save-outputs {folder}: {exc.strerror or exc}") from None


# -- audit ------------------------------------------------------------------------------------------------
def _cmd_audit(args: argparse.Namespace) -> int:
    from ovreduce.audit import audit_model
    from ovreduce.cli.render import audit_text
    from ovreduce.ir.parser import load_ir

    inputs = parse_named_files(args.input)
    if not Path(args.model).is_file():
        raise UsageError(f"{args.model}: no such file")
    model = load_ir(args.model, args.bin)
    progress = None
    if sys.stderr.isatty() and args.format == "text":
        from tqdm import tqdm

        progress = tqdm(unit="reduction", file=sys.stderr, leave=False, desc="audit")
    try:
        report = audit_model(
            model, inputs=inputs, seed=args.seed, device=args.device, precision=args.precision,
            atol=args.atol, rtol=args.rtol, progress=None if progress is None else lambda: progress.update(1),
        )  # fmt: skip
    finally:
        model.close()
        if progress is not None:
            progress.close()
    _emit(json.dumps(report.to_json(), indent=2) + "\n" if args.format == "json" else audit_text(report))
    return EXIT_OK if report.ok else EXIT_FINDINGS


# -- conform ----------------------------------------------------------------------------------------------
def _cmd_conform(args: argparse.Namespace) -> int:
    from ovreduce.cli.render import conform_text
    from ovreduce.conform import conform_model

    if not Path(args.model).is_file():
        raise UsageError(f"{args.model}: no such file")
    inputs = parse_named_files(args.input)
    report = conform_model(
        args.model, inputs=inputs, seed=args.seed, device=args.device, precision=args.precision,
        save_ir=args.save_ir, atol=args.atol, rtol=args.rtol,
    )  # fmt: skip
    _emit(json.dumps(report.to_json(), indent=2) + "\n" if args.format == "json" else conform_text(report))
    return EXIT_OK if report.ok else EXIT_FINDINGS


# -- devices ------------------------------------------------------------------------------------------------
def _cmd_devices(args: argparse.Namespace) -> int:
    from ovreduce.backends.openvino import device_info
    from ovreduce.cli.render import table

    devices = device_info()
    if args.format == "json":
        _emit(json.dumps({"schema": "ovreduce.devices/v1", "devices": devices}, indent=2) + "\n")
        return EXIT_OK
    rows = [
        [
            d["device"],
            d.get("full_name", ""),
            " ".join(d.get("capabilities", [])),
            d.get("default_inference_precision", ""),
        ]
        for d in devices
    ]
    _emit(table(rows, ["device", "full name", "capabilities", "default precision"], indent="") + "\n")
    return EXIT_OK


# -- serve --------------------------------------------------------------------------------------------------
def _cmd_serve(args: argparse.Namespace) -> int:
    """Run the REST API (:func:`api.server.serve`) until SIGTERM or Ctrl-C, then exit 0."""
    try:
        from pydantic import ValidationError

        from api.config import Settings
        from api.server import ServeError, serve
    except ImportError as exc:
        raise UsageError(f"serve needs the API's dependencies (fastapi, uvicorn, pydantic-settings): {exc}") from None
    try:
        settings = Settings()
    except ValidationError as exc:
        problems = "; ".join(f"OVREDUCE_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"the environment has invalid settings: {problems}") from None
    given = {"host": args.host, "port": args.port}
    if args.store is not None:
        given["store"] = Path(args.store).expanduser().resolve()
    settings = settings.model_copy(update={k: v for k, v in given.items() if v is not None})
    workers = args.workers if args.workers is not None else settings.workers
    if workers < 1:
        raise UsageError(f"--workers {workers}: expected 1 or more")
    try:
        serve(settings, workers=workers, log_level=args.log_level, access_log=not args.no_access_log,
              graceful_timeout=args.graceful_timeout)  # fmt: skip
    except ServeError as exc:
        raise UsageError(str(exc)) from None
    return EXIT_OK


# Where the library names one of its parameters, the options that give it on each command.
_OPTIONS = {
    "inputs": {"run": "--input NAME=FILE", "audit": "--input NAME=FILE", "conform": "--input NAME=FILE"},
    "shapes": {"run": "--shape NAME=SHAPE or --input NAME=FILE", "audit": "--input NAME=FILE",
               "conform": "--input NAME=FILE"},
    "reshape": {"check": "--reshape NAME=SHAPE", "inspect": "--reshape NAME=SHAPE"},
    "save_ir": {"conform": "--save-ir DIR"},
}  # fmt: skip


def _hint(command: str, exc: OvReduceError) -> str:
    """The command-line options that give what an :class:`InputError` is about, where this command has them."""
    if not isinstance(exc, InputError) or exc.parameter is None:
        return ""
    option = _OPTIONS.get(exc.parameter, {}).get(command)
    return f" (give it with {option})" if option else ""


def build_parser() -> argparse.ArgumentParser:
    from ovreduce import __version__

    parser = _Parser(
        prog="ovreduce",
        description="Check, inspect and execute the Reduce* layers of OpenVINO IR models.",
        epilog="Exit status: 0 clean, 1 findings/disagreements, 2 unreadable input or bad usage, 3 internal error.",
    )
    parser.add_argument("--version", action="version", version=f"ovreduce {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("check", help="re-infer every reduction's output shape and check the whole graph")
    p.add_argument("paths", nargs="+", metavar="PATH", help="IR .xml files, folders (searched recursively) or globs")
    p.add_argument("--bin", help="the weights file (default: the .bin beside the .xml); one model only")
    p.add_argument("--format", choices=("text", "json", "junit", "sarif"), default="text")
    p.add_argument("--engine", choices=("native", "openvino"), default="native",
                   help="openvino: also read the model with the OpenVINO runtime and compare every layer")  # fmt: skip
    p.add_argument("--reshape", action="append", default=[], metavar="NAME=SHAPE",
                   help="what-if: new shape for Parameter NAME (OpenVINO syntax: x=[1,?,4..8])")  # fmt: skip
    p.add_argument("-v", "--verbose", action="store_true", help="also list info findings")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("inspect", help="list the reductions (or every layer) with attributes and shapes")
    p.add_argument("path", help="an IR .xml file")
    p.add_argument("--bin", help="the weights file (default: the .bin beside the .xml)")
    p.add_argument("--layer", metavar="ID_OR_NAME", help="show one layer in detail")
    p.add_argument("--all", action="store_true", help="every layer, not only the reductions")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("run", help="execute one reduction layer on the NumPy reference and OpenVINO, and compare")
    p.add_argument("model", help="an IR .xml file")
    p.add_argument("--layer", required=True, metavar="ID_OR_NAME", help="the reduction layer to run")
    p.add_argument("--bin", help="the weights file (default: the .bin beside the .xml)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="input 0 (data) or 1 (runtime axes), or the feeding Parameter's name = .npy, .npz[:ENTRY] "
                        "or ONNX TensorProto .pb; repeatable")  # fmt: skip
    p.add_argument("--shape", action="append", default=[], metavar="NAME=SHAPE",
                   help="shape for generated data of a dynamic input (dynamic dims default to 1)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed for generated inputs (default 0)")
    p.add_argument("--backend", action="append", choices=("numpy", "openvino"),
                   help="backend to run (repeatable; default numpy, openvino); the first is the reference")  # fmt: skip
    p.add_argument("--device", default="CPU", help="OpenVINO device (CPU, GPU, GPU.1, AUTO...); default CPU")
    p.add_argument("--precision", choices=("f32", "f16", "bf16", "default"), default="f32",
                   help="OpenVINO inference precision (default f32; 'default' lets the device choose)")  # fmt: skip
    p.add_argument("--atol", type=float, help="absolute tolerance (default: per data type)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: per data type)")
    p.add_argument("--save-outputs", metavar="DIR", help="save each backend's output as DIR/<backend>.npy")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("audit", help="run the whole model and check every reduction against the reference")
    p.add_argument("model", help="an IR .xml file")
    p.add_argument("--bin", help="the weights file (default: the .bin beside the .xml)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="a model input (tensor or Parameter name) = .npy, .npz[:ENTRY] or .pb; repeatable")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed for generated inputs (default 0)")
    p.add_argument("--device", default="CPU", help="OpenVINO device (default CPU)")
    p.add_argument("--precision", choices=("default", "f32", "f16", "bf16"), default="default",
                   help="inference precision (default: what the device does when left alone)")  # fmt: skip
    p.add_argument("--atol", type=float, help="absolute tolerance (default: per element type)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: per element type)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_cmd_audit)

    p = sub.add_parser("conform", help="check OpenVINO's conversion of an ONNX model's mean/reduce nodes")
    p.add_argument("model", help="an ONNX .onnx file (needs the onnx extra: pip install 'ovreduce[onnx]')")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="a graph input = .npy, .npz[:ENTRY] or ONNX TensorProto .pb; repeatable")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed for generated inputs (default 0)")
    p.add_argument("--device", default="CPU", help="OpenVINO device (default CPU)")
    p.add_argument("--precision", choices=("f32", "f16", "bf16", "default"), default="f32",
                   help="inference precision (default f32)")  # fmt: skip
    p.add_argument("--save-ir", metavar="DIR", help="keep the converted IR in DIR for check and run")
    p.add_argument("--atol", type=float, help="absolute tolerance (default: per element type)")
    p.add_argument("--rtol", type=float, help="relative tolerance (default: per element type)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_cmd_conform)

    p = sub.add_parser("devices", help="list the OpenVINO devices with their full names and capabilities")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=_cmd_devices)

    p = sub.add_parser("serve", help="run the REST API (OpenAPI docs at /docs) until SIGTERM or Ctrl-C",
                       epilog="Limits and the store's size are read from OVREDUCE_* environment variables "
                              "(see api/config.py).")  # fmt: skip
    p.add_argument("--host", help="address to bind (default 127.0.0.1, or OVREDUCE_HOST)")
    p.add_argument("--port", type=int, help="port (default 8000, or OVREDUCE_PORT)")
    p.add_argument("--workers", type=int, help="worker processes (default 1, or OVREDUCE_WORKERS)")
    p.add_argument("--store", metavar="DIR", help="model store directory (default: user cache dir, or OVREDUCE_STORE)")
    p.add_argument("--log-level", choices=("critical", "error", "warning", "info", "debug", "trace"))
    p.add_argument("--no-access-log", action="store_true", help="do not log every request")
    p.add_argument("--graceful-timeout", type=int, default=10, metavar="S",
                   help="seconds to let requests finish on shutdown (default 10)")  # fmt: skip
    p.set_defaults(func=_cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never raises, never prints a traceback)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
        return status
    except OvReduceError as exc:
        sys.stderr.write(f"ovreduce {args.command}: {exc.message}{_hint(args.command, exc)} [{exc.code}]\n")
        return EXIT_INPUT
    except KeyboardInterrupt:
        sys.stderr.write("ovreduce: interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug: report it without a traceback, with enough to file it
        sys.stderr.write(f"ovreduce {args.command}: internal error: {type(exc).__name__}: {exc} (please report)\n")
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
