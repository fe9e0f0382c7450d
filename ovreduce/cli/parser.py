"""The command line's grammar: every command, its arguments and their help (argparse, nothing else)."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ovreduce.cli.errors import EXIT_INPUT
from ovreduce.errors import MAX_TIMEOUT_S

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = ["build_parser", "versions"]


def _takes(parser: argparse.ArgumentParser, word: str) -> bool:
    """Whether ``word`` is one of ``parser``'s options (``--name=value`` and ``-jN`` included)."""
    options = parser._option_string_actions
    return word.split("=", 1)[0] in options or (not word.startswith("--") and word[:2] in options)


class _Parser(argparse.ArgumentParser):
    _adding = False  # within add_argument

    _argv: Sequence[str] = ()  # the command line being read, for the messages of the top-level parser

    def error(self, message: str) -> NoReturn:  # argparse's own errors exit 2 with the usage line
        if message.startswith("the following arguments are required: command"):
            commands = ", ".join(self._commands())
            unknown = next((a for a in self._argv if a.startswith("-")), None)
            message = (f"unrecognized option {unknown!r}: expected a command first ({commands})" if unknown else
                       f"a command is required: one of {commands}")  # fmt: skip
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")

    def _commands(self) -> list[str]:
        return [name for action in self._subparsers._group_actions if action.choices  # type: ignore[union-attr]
                for name in action.choices]  # fmt: skip

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """argparse's, but what is left over is said by the command it was given to, saying what was expected: a
        path after an option between two paths (the options go before or after all the paths), an argument the
        command does not take."""
        self._argv = list(sys.argv[1:] if args is None else args)
        self._refuse_misplaced(self._argv)
        parsed, extras = self.parse_known_args(args, namespace)
        if not extras:
            return parsed
        command = getattr(parsed, "command", None)
        if command is None:  # (argparse refuses a command line without one before this)
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        sub = next(action for action in self._subparsers._group_actions if action.choices)  # type: ignore[union-attr]
        parser: argparse.ArgumentParser = sub.choices[command]  # type: ignore[index]
        words = " ".join(extras)
        many = any(a.nargs == "+" for a in parser._actions if not a.option_strings)
        if many and not any(a.startswith("-") for a in extras):
            parser.error(f"{words}: a path after an option that follows other paths; the options go before or "
                         f"after all the paths, not between two (ovreduce {command} [OPTIONS] PATH... "
                         f"[OPTIONS])")  # fmt: skip
        parser.error(f"unrecognized arguments: {words}; expected those of 'ovreduce {command} --help'")

    def _refuse_misplaced(self, argv: Sequence[str]) -> None:
        """What argparse would blame on something else, said as it is: a command's own option written before the
        command (argparse takes its value for the command, or hands the option to the command as one it does not
        take), and a path that begins with ``-`` (argparse takes it for an option, then says no path was given)."""
        sub = next(action for action in self._subparsers._group_actions if action.choices)  # type: ignore[union-attr]
        commands: dict[str, argparse.ArgumentParser] = sub.choices  # type: ignore[assignment]
        at = next((i for i, word in enumerate(argv) if word in commands or word == "--"), None)
        if at is None or argv[at] == "--":
            return
        command, parser = argv[at], commands[argv[at]]
        for word in argv[:at]:
            if word.startswith("-") and _takes(parser, word) and not _takes(self, word):
                name = word.split("=", 1)[0]
                name = name if name in parser._option_string_actions else word[:2]  # (-j2: -j)
                self.error(f"{name!r} is an option of {command!r}: write it after the command "
                           f"(ovreduce {command} [OPTIONS] ...)")  # fmt: skip
        for word in argv[at + 1 :]:
            if word == "--":
                return
            if len(word) > 1 and word.startswith("-") and not _takes(parser, word) and os.path.exists(word):
                parser.error(f"{word!r} is read as an option, and {command!r} has none of that name: a path "
                             f"that begins with '-' goes after '--' (ovreduce {command} -- {word}) or as "
                             f"./{word}")  # fmt: skip

    def print_help(
        self, file: SupportsWrite[str] | None = None
    ) -> None:  # argparse drops an error writing it: said here
        (file or sys.stdout).write(self.format_help())

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        if args and str(args[0]).startswith("-") and kwargs.get("action", "store") == "store":
            kwargs["action"] = _Once  # an option of one value: given twice, the first would be dropped
        self._adding = True
        try:
            return super().add_argument(*args, **kwargs)
        finally:
            self._adding = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if self._adding:
            # add_argument makes a formatter only to check the action's metavar, which no width changes: a set
            # width spares importing shutil and asking the terminal its size once per argument.
            return argparse.HelpFormatter(prog=self.prog, width=80)
        return super()._get_formatter()


class _Once(argparse._StoreAction):
    """An option that takes one value: given again, the values are kept in ``given_twice`` (the option, the first
    value and the next), which the command line refuses as a usage error, where argparse keeps the last alone."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:  # fmt: skip
        given: dict[str, tuple[str, Any]] = namespace.__dict__.setdefault("given_once", {})
        if self.dest in given:
            twice: list[tuple[str, Any, Any]] = namespace.__dict__.setdefault("given_twice", [])
            twice.append((option_string or self.dest, given[self.dest][1], values))
        else:
            given[self.dest] = (option_string or self.dest, values)
        super().__call__(parser, namespace, values, option_string)


def versions() -> str:
    """``ovreduce X (OpenVINO Y, Python Z)``: what a bug report needs; OpenVINO's version is read from its
    package metadata, so that ``--version`` does not load the runtime."""
    import platform
    from importlib import metadata

    from ovreduce import __version__

    try:
        openvino = metadata.version("openvino")
    except metadata.PackageNotFoundError:
        openvino = "not installed"
    return f"ovreduce {__version__} (OpenVINO {openvino}, Python {platform.python_version()})"


class _Version(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        sys.stdout.write(versions() + "\n")
        parser.exit()


def _runtime_options(p: argparse.ArgumentParser, *, precision: str) -> None:
    """What every command that executes on OpenVINO takes: seed, device, precision, tolerances, format."""
    p.add_argument(
        "--seed", type=_integer("a seed", 0, 2**63 - 1), default=0, help="seed for generated inputs (default 0)"
    )
    p.add_argument("--device", default="CPU", help="OpenVINO device (CPU, GPU, GPU.1, AUTO...); default CPU")
    shown = "what the device does when left alone" if precision == "default" else precision
    p.add_argument("--precision", choices=("f32", "f16", "bf16", "default"), default=precision,
                   help=f"OpenVINO inference precision (default: {shown}; 'default': the device's choice)")  # fmt: skip
    p.add_argument("--atol", type=_tolerance, help="absolute tolerance (default: per element type)")
    p.add_argument("--rtol", type=_tolerance, help="relative tolerance (default: per element type)")
    p.add_argument("--format", choices=("text", "json"), default="text")


def _shape_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--shape", action="append", default=[], metavar="NAME=SHAPE",
                   help=f"shape of a generated input: NAME=[2,3] or, as benchmark_app and ovc write it, NAME[2,3] "
                        f"(several separated by commas); {what} is reshaped to it before compiling. Dynamic dims "
                        f"left: see docs/semantics.md ('Shapes that reach the runtime'); repeatable")  # fmt: skip


# The time a whole-model run may take unless told otherwise: far beyond what a model that finishes needs on a
# CPU (an LLM's three compiles and runs included), short of forever.
DEFAULT_TIMEOUT_S = 1800.0


def _timeout_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"stop OpenVINO's inference after SECONDS and report what was established by then "
                        f"(default {DEFAULT_TIMEOUT_S:g}; a Loop that never ends would run forever)")  # fmt: skip


def _number(what: str, accept: Callable[[float], bool]) -> Callable[[str], float]:
    """An argparse type: a number that ``accept`` takes (never NaN: no value would pass or fail it), else a usage
    error that says it is not ``what``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if math.isnan(value) or not accept(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return value

    return parse


_seconds = _number(f"a positive number of seconds up to {MAX_TIMEOUT_S} (24 days)", lambda v: 0 < v <= MAX_TIMEOUT_S)
_tolerance = _number("a tolerance: a finite number >= 0", lambda v: 0 <= v < math.inf)


# The server's bound on its worker processes (api.config.MAX_WORKERS, which this module does not import: the
# parser is on every command's path).
MAX_WORKERS = 256


def _integer(what: str, low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a decimal integer from ``low`` to ``high`` (None: no bound), else a usage error."""
    bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"

    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit() and len(text) <= 40) or not (
            low <= int(text) and (high is None or int(text) <= high)
        ):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}: an integer {bounds}")
        return int(text)

    return parse


def _path(text: str) -> str:
    if not text:  # Path("") is the current folder
        raise argparse.ArgumentTypeError("an empty path names no file")
    return text


def _extension_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--extension", action="append", default=[], metavar="PATH_OR_MODULE",
                   help="an OpenVINO extension to load before OpenVINO reads the model, for ops of no OpenVINO "
                        "opset: a library (.so, .dll, .dylib) or a Python module that provides one; repeatable. "
                        "openvino-tokenizers' extension (the ops of optimum's tokenizer IRs) is loaded without "
                        "asking wherever it is installed")  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    """The ``ovreduce`` parser; the chosen command is ``args.command``."""
    parser = _Parser(
        prog="ovreduce",
        description="Check, inspect and execute the Reduce* layers of OpenVINO IR models.",
        epilog="Exit status: 0 clean, 1 findings/disagreements, 2 unreadable input, bad usage or output that cannot be "
        "written, 3 internal error, 130 interrupted (Ctrl-C), 128+N ended by signal N (serve: 0 once stopped).",
    )
    parser.add_argument("--version", action=_Version, help="show ovreduce's, OpenVINO's and Python's versions and exit")
    # prog given: what argparse would format from the usage line, which has no positional argument to show
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, prog=parser.prog)

    p = sub.add_parser("check", help="re-infer every reduction's output shape and check the whole graph")
    p.add_argument(
        "paths", type=_path, nargs="+", metavar="PATH", help="IR .xml files, folders (searched recursively) or globs"
    )
    p.add_argument("--bin", type=_path, help="the weights file (default: the .bin beside the .xml); one model only")
    p.add_argument("--format", choices=("text", "json", "junit", "sarif"), default="text")
    p.add_argument("--engine", choices=("native", "openvino"), default="native",
                   help="openvino: also read the model with the OpenVINO runtime and compare every layer")  # fmt: skip
    p.add_argument("--reshape", action="append", default=[], metavar="NAME=SHAPE",
                   help="what-if: new shape for Parameter NAME (OpenVINO syntax: x=[1,?,4..8])")  # fmt: skip
    p.add_argument("-v", "--verbose", action="store_true", help="also list info findings")
    _extension_option(p)
    p.add_argument("-j", "--jobs", type=_integer("a number of processes", 1), default=None, metavar="N",
                   help="check N models at once in worker processes (default: the number of cores); the output is "
                        "the same as with -j 1")  # fmt: skip

    p = sub.add_parser("inspect", help="list the reductions (or every layer) with attributes and shapes")
    p.add_argument("path", type=_path, help="an IR .xml file")
    p.add_argument("--bin", type=_path, help="the weights file (default: the .bin beside the .xml)")
    p.add_argument("--layer", metavar="ID_OR_NAME", help="show one layer in detail")
    p.add_argument("--all", action="store_true", help="every layer, not only the reductions")
    p.add_argument("--reshape", action="append", default=[], metavar="NAME=SHAPE",
                   help="what-if: new shape for Parameter NAME (OpenVINO syntax: x=[1,?,4..8]); the shapes shown are "
                        "those inferred under it")  # fmt: skip
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("run", help="execute one reduction layer on the NumPy reference and OpenVINO, and compare")
    p.add_argument("model", type=_path, help="an IR .xml file")
    p.add_argument("--layer", metavar="ID_OR_NAME",
                   help="the reduction layer to run (left out: the model's reductions are listed, exit 2)")  # fmt: skip
    p.add_argument("--bin", type=_path, help="the weights file (default: the .bin beside the .xml)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="input 0 (data) or 1 (runtime axes), or the feeding Parameter's name = .npy, .npz[:ENTRY] "
                        "or ONNX TensorProto .pb; repeatable")  # fmt: skip
    _shape_option(p, "the layer")
    p.add_argument("--backend", action="append", choices=("numpy", "openvino"),
                   help="backend to run (repeatable; default numpy, openvino); the first is the reference")  # fmt: skip
    _runtime_options(p, precision="f32")
    p.set_defaults(device=None, precision=None)  # CPU and f32, where an OpenVINO backend runs (None: not given)
    p.add_argument("--save-outputs", type=_path, metavar="DIR", help="save each backend's output as DIR/<backend>.npy")
    p.add_argument("--save-inputs", type=_path, metavar="DIR",
                   help="save the inputs the run used as DIR/0.npy (data) and DIR/1.npy (runtime axes), to "
                        "reproduce it with --input 0=DIR/0.npy")  # fmt: skip

    p = sub.add_parser("audit", help="run the whole model and check every reduction against the reference")
    p.add_argument(
        "model", type=_path, help="an IR .xml file, or an optimum-intel export directory (its openvino_model.xml)"
    )
    p.add_argument("--bin", type=_path, help="the weights file (default: the .bin beside the .xml)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="a model input (tensor or Parameter name) = .npy, .npz[:ENTRY] or .pb; repeatable")  # fmt: skip
    _shape_option(p, "the model")
    _runtime_options(p, precision="default")
    p.add_argument("--fail-on-drift", type=float, metavar="REL",
                   help="also fail a reduction whose output differs from an f32 run of the whole model by more than "
                        "REL relative (default: drift is reported, never failed)")  # fmt: skip
    _timeout_option(p)
    p.add_argument("--target", choices=("f16", "bf16"),
                   help="also judge whether each reduction survives this precision (the one a GPU or NPU runs, or "
                        "a CPU with AMX): its captured input chain emulated in it, overflows and errors fail the "
                        "audit; with a --device that is not here, the model runs on the CPU and the figures are "
                        "emulated")  # fmt: skip
    p.add_argument("--steps", type=_integer("a number of decode steps", 0, 64), default=0, metavar="N",
                   help="for a stateful model (an LLM with its KV cache as state): after the first run, N decode "
                        "steps on the same infer request, each fed the argmax token of the step before (a seeded "
                        "id where the model has no logits); each row gives the step of its worst error (default 0; "
                        "at most 64)")  # fmt: skip
    p.add_argument("--prompt", metavar="TEXT",
                   help="feed the model TEXT through the export's tokenizer IR (openvino_tokenizer.xml, run with "
                        "openvino-tokenizers), instead of ids it makes itself")  # fmt: skip
    _extension_option(p)

    p = sub.add_parser("conform", help="check OpenVINO's conversion of an ONNX model's mean/reduce nodes")
    p.add_argument("model", type=_path, help="an ONNX .onnx file (needs the onnx extra: pip install 'ovreduce[onnx]')")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE",
                   help="a graph input = .npy, .npz[:ENTRY] or ONNX TensorProto .pb; repeatable")  # fmt: skip
    _shape_option(p, "the converted model")
    _runtime_options(p, precision="f32")
    _timeout_option(p)
    p.add_argument("--save-ir", type=_path, metavar="DIR", help="keep the converted IR in DIR for check and run")
    _extension_option(p)

    p = sub.add_parser("devices", help="list the OpenVINO devices with their full names and capabilities")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("serve", help="run the REST API (OpenAPI docs at /docs) until SIGTERM or Ctrl-C",
                       epilog="Limits and the store's size are read from OVREDUCE_* environment variables "
                              "(each listed, with its default, in docs/service.md).")  # fmt: skip
    p.add_argument("--host", help="address to bind (default 127.0.0.1, or OVREDUCE_HOST)")
    p.add_argument("--port", type=_integer("a port", 0, 65535), help="port (default 8000, or OVREDUCE_PORT)")
    p.add_argument("--workers", type=_integer("a number of worker processes", 1, MAX_WORKERS), metavar="N",
                   help=f"worker processes, 1 to {MAX_WORKERS} (default 1, or OVREDUCE_WORKERS)")  # fmt: skip
    p.add_argument(
        "--store", type=_path, metavar="DIR", help="model store directory (default: user cache dir, or OVREDUCE_STORE)"
    )
    p.add_argument("--log-level", choices=("critical", "error", "warning", "info", "debug", "trace"))
    p.add_argument("--no-access-log", action="store_true", help="do not log every request")
    p.add_argument("--graceful-timeout", type=_integer("a number of seconds", 0, MAX_TIMEOUT_S), default=10,
                   metavar="S",
                   help="seconds to let requests finish on shutdown (default 10)")  # fmt: skip
    return parser
