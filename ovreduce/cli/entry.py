"""The entry point: parse the command line, run the command, map what went wrong to an exit status."""

from __future__ import annotations

import argparse
import errno
import io
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn

from ovreduce.cli import commands, options
from ovreduce.cli.errors import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    OUTPUT_FAILED,
    OutputError,
    UsageError,
)
from ovreduce.cli.interrupt import interrupted
from ovreduce.cli.options import bound_memory
from ovreduce.cli.parser import build_parser
from ovreduce.cli.render.safe import escape
from ovreduce.cli.render.terminal import terminal_width
from ovreduce.cli.serve import serve
from ovreduce.cli.wording import in_flag_terms
from ovreduce.errors import BackendError, InputError, MemoryLimitError, OvReduceError
from ovreduce.processes import end_with_parent

__all__ = ["COMMANDS", "console", "main"]

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "check": commands.check,
    "inspect": commands.inspect,
    "run": commands.run,
    "audit": commands.audit,
    "conform": commands.conform,
    "devices": commands.devices,
    "serve": serve,
}


def main(argv: Sequence[str] | None = None, *, bounded: bool = False) -> int:
    """Run the command line; returns the exit status (never raises, never prints a traceback). ``bounded``: hold the
    process to its memory bound first (:func:`~ovreduce.cli.options.bound_memory`), as the ``ovreduce`` program does;
    a caller that goes on after the command keeps its own."""
    if sys.stderr is None:  # started with it closed: messages go nowhere, the exit status still tells
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the rest of the process
    if sys.stdout is None:  # started with it closed: the command still reads its command line and says what is
        sys.stdout = _Closed()  # wrong with it; its output, when it has one, cannot be written, which it says then
    for stream in (sys.stdout, sys.stderr):  # a locale whose encoding is not UTF-8 (Latin-1, ASCII) lacks characters
        if isinstance(stream, io.TextIOWrapper):  # a name may hold: written as escapes (\u5e73), never an error
            stream.reconfigure(errors="backslashreplace")
    command = "ovreduce"
    try:
        if signal.getsignal(signal.SIGINT) is interrupted:
            signal.signal(signal.SIGINT, signal.default_int_handler)  # loaded: main takes Ctrl-C from here
        given = list(sys.argv[1:] if argv is None else argv)
        ahead = given[: next((i for i, word in enumerate(given) if word in COMMANDS), len(given))]
        if "--version" in ahead and len(given) > 1:  # (argparse's action would print it and drop the rest)
            stray = next((word for word in given if word != "--version"), None)
            if stray is None:
                raise UsageError("--version is given twice; give it once")
            raise UsageError(f"--version takes nothing else, but {_shown(stray)} was given too; expected --version "
                             f"alone")  # fmt: skip
        args = build_parser().parse_args(argv)  # --help and --version write here too
        command = f"ovreduce {args.command}"
        for option, first, then in getattr(args, "given_twice", ()):  # (argparse keeps the last without a word)
            raise UsageError(f"{option} is given twice, as {_shown(first)} and {_shown(then)}; give it once")
        if args.command != "serve":  # (the server writes no text to fit)
            terminal_width()  # its setting refused before the command runs, not once its work is done
        if bounded and args.command != "serve":  # the server bounds each of its workers
            bound_memory()
        return COMMANDS[args.command](args)
    except OvReduceError as exc:
        code = "usage" if isinstance(exc, InputError) and exc.twice else exc.code  # (the command line alone is wrong)
        _say(f"{command}: {escape(in_flag_terms(command.partition(' ')[2], exc))} [{code}]")
        return EXIT_INPUT
    except KeyboardInterrupt:
        _say("ovreduce: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # a file name the system refuses (too long...), or output it cannot take (disk full)
        if exc.filename is None:  # --help and --version write as argparse does, not through the commands' writer
            _say(f"{command}: {OUTPUT_FAILED}: {exc.strerror or exc} [{OutputError.code}]")
        else:
            _say(f"{command}: {escape(os.fsdecode(exc.filename))}: {exc.strerror or exc} [usage]")
        return EXIT_INPUT
    except MemoryError:  # the system refused memory: a tensor whose shape depends on input values, sized as computed
        _say(f"{command}: it needs more memory than the process may use ({options.MEMORY_BOUND}); give smaller inputs "
             f"or shapes, or a larger OVREDUCE_MAX_WORKER_BYTES [{MemoryLimitError.code}]")  # fmt: skip
        return EXIT_INPUT
    except Exception as exc:  # a bug: report it without a traceback, with enough to file it
        _say(f"{command}: internal error: {type(exc).__name__}: {escape(str(exc))} (please report)")
        return EXIT_INTERNAL


class _Closed(io.TextIOBase):
    """Standard output that was closed when the program started: each write fails, as on a closed descriptor."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it is closed")


def _shown(value: object) -> str:
    """An option's value as the command line gave it, quoted where it is a word (a path, a name)."""
    return repr(os.fsdecode(value)) if isinstance(value, (str, os.PathLike)) else repr(value)


def _say(line: str) -> None:
    """A line on standard error, unless it cannot take one (closed, full): the exit status still tells."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


# The commands that compile and run a model with OpenVINO, whose plugins crash on some models they read
# (a division by an attribute of 0, indices out of bounds): each runs in a child process that only that costs.
SUPERVISED = frozenset({"run", "audit", "conform"})
_CRASHES: dict[int, str] = {signal.SIGSEGV: "a segmentation fault", signal.SIGFPE: "an arithmetic fault",
                             signal.SIGBUS: "a bus error", signal.SIGILL: "an illegal instruction",
                             signal.SIGABRT: "an abort"}  # fmt: skip


def _supervise(command: str) -> int | None:
    """Run the rest of the program in a child process and wait for it (None: this is the child). A child killed by a
    crash (:data:`_CRASHES`) is said, in a line and exit 2; by another signal, the program ends by that signal too.

    SIGTERM and SIGHUP sent to this process are passed on to the child, and SIGINT sent by a process (``kill``): a
    terminal's Ctrl-C reaches the child itself (one process group), and a second one would cut its answer short.
    Whatever else ends this process (SIGKILL, SIGUSR1) ends the child with it (Linux)."""
    watched = {signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)  # from before the fork: none is lost, none acted on here
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        end_with_parent(parent)  # a program ended otherwise (SIGKILL, SIGUSR1) leaves no child behind
        signal.pthread_sigmask(signal.SIG_UNBLOCK, watched)
        return None
    while True:
        info = signal.sigwaitinfo(watched)
        if info.si_signo == signal.SIGCHLD:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
        elif info.si_signo != signal.SIGINT or info.si_pid != 0:  # (a terminal's has no sending process)
            os.kill(pid, info.si_signo)
    if not os.WIFSIGNALED(status):
        return os.waitstatus_to_exitcode(status)
    number = os.WTERMSIG(status)
    if number not in _CRASHES:
        if number != signal.SIGKILL:
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
        os.kill(os.getpid(), number)
        return 128 + number
    _say(f"ovreduce {command}: OpenVINO crashed the process ({signal.Signals(number).name}, {_CRASHES[number]}) "
         f"while it compiled or ran the model: the model, or an input given or made for it (integers that must "
         f"fit what they index or count: give such inputs), holds something its plugin cannot run, which ovreduce does "
         f"not know by name (those it knows it refuses, naming the layer) [{BackendError.code}]")  # fmt: skip
    return EXIT_INPUT


def console() -> NoReturn:
    """The ``ovreduce`` program: :func:`main`, then exit; a command of :data:`SUPERVISED` in a child process
    (:func:`_supervise`). Where an inference was left running past its time limit or interrupted (OpenVINO cannot
    stop it), the process ends at once, after flushing its output, instead of waiting for it at exit."""
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command in SUPERVISED and hasattr(os, "fork"):
        status = _supervise(command)
        if status is not None:
            sys.exit(status)
    try:
        status = main(bounded=True)
    except SystemExit as exc:  # argparse's: --help, --version, a wrong command line
        status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else EXIT_INPUT
    try:  # what is left in the buffer, now: a full or closed pipe is a status, not an "Exception ignored" at exit
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError) as exc:
        if not isinstance(exc, BrokenPipeError):
            _say(f"ovreduce: {OUTPUT_FAILED}: {getattr(exc, 'strerror', None) or exc} [{OutputError.code}]")
            status = EXIT_INPUT  # whatever the verdict: the report it rests on is not all there
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if "ovreduce.backends.openvino" in sys.modules:
        from ovreduce.backends.openvino import abandoned

        if abandoned():
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    if threading.current_thread() is threading.main_thread():  # a Ctrl-C while the process ends (its helpers
        signal.signal(signal.SIGINT, interrupted)  # joined, its finalizers run) is said as any other: 130
    sys.exit(status)
