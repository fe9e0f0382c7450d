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

from ovreduce.errors import OvReduceError, UsageError
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
    """``NAME=SHAPE`` pairs (OpenVINO shape syntax) as a dict."""
    out = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise UsageError(f"{option} {item!r}: expected NAME=SHAPE, e.g. {option} x=[1,3,224,224]")
        try:
            out[name] = PartialShape.parse(text)
        except ValueError as exc:
            raise UsageError(f"{option} {item!r}: {exc}") from None
    return out


def _emit(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


# -- check ----------------------------------------------------------------------------------------------
def _cmd_check(args: argparse.Namespace) -> int:
    from ovreduce.check import check_paths
    from ovreduce.render import check_junit, check_sarif, check_text

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
            progress=progress,
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
    from ovreduce.inspect import inspect_model
    from ovreduce.ir.parser import load_ir
    from ovreduce.render import inspect_text

    model = load_ir(args.path, args.bin)
    try:
        doc = inspect_model(model, layer=args.layer, all_layers=args.all)
    finally:
        model.close()
    if args.format == "json":
        _emit(json.dumps(doc, indent=2) + "\n")
    else:
        _emit(inspect_text(doc, detail=args.layer is not None))
    return EXIT_OK


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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (never raises, never prints a traceback)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
        return status
    except OvReduceError as exc:
        sys.stderr.write(f"ovreduce {args.command}: {exc.message} [{exc.code}]\n")
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
