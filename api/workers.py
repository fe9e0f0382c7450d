"""Work that a timeout really ends: checks, runs, audits and conformance checks in worker processes.

A thread cannot be stopped: an audit abandoned after its 504 kept the only worker thread and grew to 1.6 GB,
and the next request got 503. Here each job runs in one of ``size`` worker processes; one that outlives the time
limit, or reaches its memory bound (``OVREDUCE_MAX_WORKER_BYTES``), is killed, which frees all its memory at once,
and replaced (docs/service.md says what each case answers). Neither standard pool does this: a
``ProcessPoolExecutor`` is broken whole by one dead worker, ``multiprocessing.Pool`` never answers its job, and
pebble's ``ProcessPool`` times a job from when a worker takes it, breaks when an idle worker is killed, and pickles
uploads whole.

A worker keeps its own model catalog (the store on disk is shared) and compiled-layer cache between jobs,
so repeated runs of a stored model cost what they cost in one process. Jobs are module-level functions
taking a :class:`WorkerContext` first; their arguments and results cross a pipe, pickled.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import itertools
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import pickle
import re
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

from ovreduce import processes
from ovreduce.backends.openvino import LayerCache, abandoned
from ovreduce.errors import BackendError, InputError, MemoryLimitError, OvReduceError
from ovreduce.memory import bound_memory, data_size

from .config import Settings
from .errors import BusyError, RunTimeoutError, WorkerDiedError
from .problems import add_server_paths, private_names
from .store.catalog import Catalog
from .store.disk import ModelStore, is_model_id

__all__ = ["IsolatedPool", "UploadMemory", "WorkerContext", "apply_extensions", "catalog_for", "on_parent_exit"]

logger = logging.getLogger("ovreduce.api")

T = TypeVar("T")

# A job that gets a worker with less than this share of its time left is withdrawn (503) instead of started
# to be killed moments later.
_LEAST_LEFT = 0.25


def catalog_for(settings: Settings) -> Catalog:
    """The model catalog ``settings`` describe (the same store, limits and cache size in every process)."""
    return Catalog(
        ModelStore(settings.store, settings.store_max_bytes),
        limits=settings.parse_limits(),
        cache_size=settings.model_cache_size,
    )


@dataclass
class WorkerContext:
    """What a job gets in its worker process: the settings, a catalog and a compiled-layer cache, made once
    per process."""

    settings: Settings
    _catalog: Catalog | None = None
    layer_cache: LayerCache = field(default_factory=LayerCache)
    deadline: float | None = None
    """When the job under way is stopped (``time.monotonic()``, a clock every process of the machine shares): its
    request's time limit, counted from when the request began waiting (queueing included)."""

    @property
    def model_timeout_s(self) -> float:
        """The time a whole-model inference (audit, conform) may take in the job under way: what is left of its limit
        less a fifth of the limit, so that the job answers with what it established instead of being killed."""
        limit = self.settings.run_timeout_s
        left = limit if self.deadline is None else self.deadline - time.monotonic()
        return max(round(left - limit * 0.2, 1), 0.1)  # (a job is started with a quarter of its limit left at least)

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = catalog_for(self.settings)
        return self._catalog


def apply_extensions(settings: Settings) -> None:
    """Load the OpenVINO extensions of ``settings`` (``OVREDUCE_EXTENSIONS``) into this process's OpenVINO, before
    it reads any model; nothing (OpenVINO is not even imported) when there are none.

    Raises:
        BackendError: one cannot be loaded; the message names no path (the log says which and why).
    """
    if not (names := settings.extension_names()):
        return
    from ovreduce._openvino import load_extensions

    try:
        load_extensions(names)
    except InputError as exc:
        logger.error("OVREDUCE_EXTENSIONS: %s", exc.message)
        raise BackendError(
            "the service's OpenVINO extensions (OVREDUCE_EXTENSIONS) could not be loaded; the server's log says why"
        ) from None


def on_parent_exit(action: Callable[[], object], name: str) -> None:
    """Call ``action`` in a daemon thread once this process's parent is gone (nothing if it has none): a parent
    that is killed (SIGKILL, the OOM killer) stops none of its children itself."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        action()

    threading.Thread(target=watch, daemon=True, name=name).start()


def _serve(conn: Connection, settings: Settings) -> None:
    """A worker process: load the extensions, then answer jobs until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    # Without its server, a job would run on for nobody, an upload be committed to the store and evict another model.
    on_parent_exit(lambda: os._exit(1), "ovreduce-watch")
    if (why := bound_memory(settings.max_worker_bytes)) is not None:  # a tensor sized as it is computed fails here
        logger.warning("a worker's memory cannot be bounded here (OVREDUCE_MAX_WORKER_BYTES): %s", why)
    add_server_paths(settings)  # the documents written here name none of them
    context = WorkerContext(settings)
    refused: BackendError | None = None
    try:
        apply_extensions(settings)  # before any job reads a model
    except BackendError as exc:  # every job is answered with it: no model is read without them
        refused = exc
    ready = _ready()
    while True:
        try:
            message = conn.recv_bytes()  # the job's pickle, then its out-of-band buffers (see _exchange)
            buffers = [conn.recv_bytes() for _ in range(int.from_bytes(message[:4], "big"))]
            func, args, kwargs, context.deadline = pickle.loads(message[4:], buffers=buffers)
            unfit = False
        except (EOFError, OSError):
            return
        except MemoryError:  # the job's data does not fit beside what this process holds: that is its answer
            message, buffers, unfit = b"", [], True
        try:
            conn.send_bytes((data_size() or 0).to_bytes(8, "big"))  # the receipt: the data it holds with the job's
            if unfit:  # (the pipe may be read midway: this process answers, then goes, which ends the job's sending)
                unfitting = MemoryLimitError("the request's data (its inputs or files) does not fit in its worker")
                conn.send((False, _answerable(unfitting, settings), True))
        except OSError:
            return
        if unfit:
            os._exit(0)
        try:
            if refused is not None:
                raise refused
            ok, payload = True, func(context, *args, **kwargs)
        except BaseException as exc:  # the job's failure is its answer
            if isinstance(exc, OvReduceError):
                exc.quoted = _quoted(exc.message, context, (args, kwargs))  # type: ignore[attr-defined]
            ok, payload = False, _answerable(exc, settings)
        if context._catalog is not None:  # before the answer: no model's file held open, nor weights kept, between jobs
            context._catalog.idle()
        # An inference outlived its time limit and still runs, or one ran out of memory (OpenVINO's compiled model
        # keeps the failed size), or the process has grown by half of what its bound leaves above a fresh worker's
        # data (compiled layers keep the plugin's threads and buffers, which OpenVINO does not give back): it must go.
        worn = (data_size() or 0) - ready > (settings.max_worker_bytes - ready) // 2
        retire = abandoned() or isinstance(payload, MemoryLimitError) or worn
        try:
            conn.send((ok, payload, retire))
        except Exception as exc:  # an answer that cannot be pickled, or that this process has no memory left to
            error = _answerable(exc, settings)
            if not isinstance(error, MemoryLimitError):
                error = RuntimeError(f"the answer could not be sent back: {type(exc).__name__}: {exc}")
            retire = retire or isinstance(error, MemoryLimitError)
            conn.send((False, error, retire))
        if retire:
            os._exit(0)  # not a normal exit: that would wait for the inference


def _ready() -> int:
    """Load OpenVINO, its plugins and the CPU plugin's threads (a one-element inference) before the first job, and
    return this process's data then (0 where the system does not say): what every worker holds, which a job's growth
    is measured from. In the first job instead, its data could fill the worker before the CPU plugin was loaded, or
    before its threads started."""
    try:
        import numpy as np
        from openvino import Model
        from openvino import opset13 as ops

        from ovreduce._openvino import core

        if "CPU" in core().available_devices:
            value = ops.parameter([1], np.float32)
            core().compile_model(Model([ops.relu(value)], [value]), "CPU")({0: np.ones(1, np.float32)})
    except Exception as exc:  # (a job that needs it says why)
        logger.warning("a worker could not load OpenVINO's CPU plugin before its first job: %s", exc)
    return data_size() or 0


_NAME_ATTRIBUTE = re.compile(rb"""\bnames?\s*=\s*(?:"([^"<]{1,4096})"|'([^'<]{1,4096})')""")
_XML_START = re.compile(rb"(?:\xef\xbb\xbf)?\s*<")
_MAX_NAMES = 1 << 17
_MAX_QUOTED = 64


def _quoted(message: str, context: WorkerContext, job: Any) -> tuple[str, ...]:
    """The user's names that ``message`` quotes (escaped where they do not print) and a scrub would touch."""
    text = message if len(message) <= 8192 else f"{message[:4096]}\n{message[-4096:]}"  # what is answered of it
    found: set[str] = set()
    for name in itertools.islice(_users_names(context, job, text), _MAX_NAMES):
        for form in (name,) if name.isprintable() else (name, repr(name)[1:-1]):
            if len(form) <= len(text) and form in text:
                found.add(form)
    return tuple(sorted(private_names(found), key=len, reverse=True)[:_MAX_QUOTED])


def _users_names(context: WorkerContext, job: Any, message: str) -> Iterator[str]:
    """What a job's failure may quote of the user's own, kept when its ``message`` is answered (``problems.answered``):
    the strings of its request, the names in the models it reads (a stored one, by its id or KServe model name; an
    upload's XML ``name``/``names``, an ONNX one's ``message`` quotes). At most :data:`_MAX_NAMES` are looked at."""
    stack, seen, models = [job], 0, set()
    while stack and seen < _MAX_NAMES:
        item = stack.pop()
        seen += 1
        if isinstance(item, str):
            yield item
            mid = item.split(".", 1)[0]  # a stored model's id, or a KServe model name ("<id>.<layer>")
            if is_model_id(mid) and mid not in models:
                models.add(mid)
                with contextlib.suppress(Exception):  # (only a model this process can load is read)
                    model = context.catalog.load(mid).model
                    for layer in (*model.layers, *(x for ref in model.bodies() for x in ref.body.graph.layers)):
                        yield layer.name
                        yield from (name for port in (*layer.inputs, *layer.outputs) for name in port.names)
        elif isinstance(item, bytes | bytearray) and _XML_START.match(item[:4096]):  # an IR's XML, not its weights
            for found in itertools.islice(_NAME_ATTRIBUTE.finditer(item), _MAX_NAMES):
                text = html.unescape((found[1] or found[2]).decode("utf-8", "replace"))
                yield text
                yield from text.split(",")  # the tensor names of a port
        elif isinstance(item, bytes | bytearray):
            yield from (quoted for quoted in re.findall(r"'([^'\n]{1,4096})'", message) if quoted.encode() in item)
        elif isinstance(item, Mapping):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple | set | frozenset):  # (a tensor's numbers hold no name)
            stack += [x for x in item if not isinstance(x, int | float | complex | None)]
        elif hasattr(item, "__dict__") and not isinstance(item, type):  # a request model
            stack.append(vars(item))


def _answerable(exc: BaseException, settings: Settings) -> BaseException:
    """A job's failure as answered: running out of memory names the worker's limit; an unpicklable error its text."""
    if isinstance(exc, MemoryError | MemoryLimitError):
        message = exc.message if isinstance(exc, MemoryLimitError) else "the job ran out of memory"
        if "OVREDUCE_MAX_WORKER_BYTES" in message:  # (OpenVINO's own running out names the bound already)
            return MemoryLimitError(f"{message}; this worker process is replaced")
        return MemoryLimitError(
            f"{message}; a worker process may use {settings.max_worker_bytes} bytes (OVREDUCE_MAX_WORKER_BYTES), "
            f"and this one is replaced"
        )
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def _context() -> Any:  # a ForkServerContext, or a SpawnContext where there is no fork server
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        # Imported once in the fork server, so every worker starts with them loaded. Not openvino: importing it starts
        # a thread (its telemetry, which tries the network), and a child forked while another thread holds a lock (an
        # import's, the resolver's) can hang for ever; each worker loads it as it starts (_ready), forking nothing.
        package = __package__ or "api"  # the installed name (ovreduce_api), or the repository's folder (api)
        ctx.set_forkserver_preload([f"{package}.workers", f"{package}.routes", "ovreduce.audit", "ovreduce.conform"])
        return ctx
    return multiprocessing.get_context("spawn")


def start_fork_server() -> None:
    """Start the workers' fork server with Ctrl-C ignored (see :func:`ovreduce.processes.start_fork_server`)."""
    processes.start_fork_server(_context())


def _replace_fork_server() -> None:
    """After a failed start (the fork server's socket removed by a clean-up of the temporary folder, say), have the
    next start launch a new fork server: multiprocessing relaunches one only once it has died. The old one serves its
    workers until the last has ended, then ends (its "alive" pipe closed), and is reaped here."""
    server: Any = getattr(multiprocessing.forkserver, "_forkserver", None)  # (private: none where it differs)
    if not all(hasattr(server, a) for a in ("_lock", "_forkserver_pid", "_forkserver_alive_fd")):
        return
    with server._lock:
        pid, alive = server._forkserver_pid, server._forkserver_alive_fd
        server._forkserver_pid = server._forkserver_alive_fd = server._forkserver_address = None
    if pid is not None:
        os.close(alive)
        threading.Thread(target=os.waitpid, args=(pid, 0), daemon=True, name="ovreduce-reap").start()


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    held: int = 0
    """The bytes of data it held when it took its last job (the job's own included)."""


class UploadMemory:
    """The bytes of request bodies this process holds at once (``OVREDUCE_UPLOAD_MEMORY_BYTES``): uploads, and what
    parsing a large JSON body makes of it (``api.routes.common.ServiceRoute``). Bodies take their turns in the order
    they came, each waiting, unread, until it fits beside those held (503 ``busy`` after ``timeout_s``); one larger
    than the whole budget waits until it has it all. Without it, every request under way could hold its body.
    """

    def __init__(self, total: int, timeout_s: float) -> None:
        self.total = total
        self.timeout_s = timeout_s
        self.held = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._turn = asyncio.Lock()  # first come, first served: only the upload whose turn it is waits for memory
        self._freed = asyncio.Event()

    @contextlib.asynccontextmanager
    async def hold(self, size: int, what: str) -> AsyncIterator[float]:
        """Hold ``size`` bytes (at most the whole budget) for the block, which is given the loop time the wait began
        (the job's time limit counts from it: :meth:`IsolatedPool.run`'s ``since``)."""
        size = min(size, self.total)
        loop = asyncio.get_running_loop()
        since = loop.time()
        if self._loop is not loop:  # (an app served by one loop after another: the tests)
            self._loop, self._turn, self._freed = loop, asyncio.Lock(), asyncio.Event()
        try:
            async with asyncio.timeout(self.timeout_s), self._turn:
                while self.held + size > self.total:
                    self._freed.clear()
                    await self._freed.wait()
                self.held += size
        except TimeoutError:
            raise _busy(
                what, f"{self.timeout_s:g} s for the memory its body needs (OVREDUCE_UPLOAD_MEMORY_BYTES)"
            ) from None
        try:
            yield since
        finally:
            self.held -= size
            self._freed.set()


class IsolatedPool:
    """``size`` worker processes, one job each at a time, ``timeout_s`` per job (waiting included).

    Workers start on first use and are replaced when killed. :meth:`shutdown` stops them all.
    """

    def __init__(self, size: int, timeout_s: float, settings: Settings) -> None:
        self.size = size
        self.timeout_s = timeout_s
        self.settings = settings
        self._idle: list[_Worker] = []
        self._all: dict[int, BaseProcess] = {}  # every live worker, by its pid (dict operations are atomic)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots = asyncio.Semaphore(size)
        # The pool's own threads, two per job (its wait for the answer, and the start, kill or tidy-up beside it): in
        # asyncio's shared default executor (min(32, CPUs + 4) threads) ``size`` jobs that never answer held every
        # thread, and the kill that ends them at their time limit waited behind them for ever.
        self._threads: ThreadPoolExecutor | None = None
        self.killed = 0  # workers killed for outliving the limit (for tests and metrics)
        self._answering: set[asyncio.Task[Any]] = set()  # (a task nothing else refers to may be collected)
        self.on_event: Callable[[str], None] = lambda event: None
        """Told ``queued`` and ``dequeued`` as jobs start and stop waiting for a worker, and ``busy``,
        ``timeout`` or ``worker_died`` when a job ends without an answer (:class:`api.metrics.Metrics`)."""

    def pids(self) -> list[int]:
        """The process ids of the live workers."""
        return sorted(self._all)

    def warm(self) -> None:
        """Start one worker now (the first also starts the fork server, which imports OpenVINO and ovreduce
        for seconds), so that the first job, an upload as often as not, does not spend its time limit on it."""
        self._idle.append(self._start())

    def _start(self) -> _Worker:
        context = _context()
        ours, theirs = context.Pipe()
        process = context.Process(target=_serve, args=(theirs, self.settings), daemon=True, name="ovreduce-job")
        process.start()
        theirs.close()
        assert process.pid is not None
        self._all[process.pid] = process
        return _Worker(process, ours)

    async def _started(self, off: Callable[..., asyncio.Future[Any]], what: str, deadline: float) -> _Worker:
        """A new worker for a job, started within its time limit: a start past it (a stalled fork server) is busy, and
        its worker, once started, idle for the next job (as one whose job was cancelled); a start that fails (the fork
        server died) is a dead worker."""
        start = off(self._start)
        try:
            async with asyncio.timeout_at(deadline):
                return await asyncio.shield(start)
        except TimeoutError:
            self.on_event("busy")
            raise _busy(what, f"{self.timeout_s:g} s for a worker process to start") from None
        except Exception as exc:
            self.on_event("worker_died")
            _replace_fork_server()
            raise WorkerDiedError(
                f"{what} could not start a worker process ({type(exc).__name__}: {exc}); retry: the server starts "
                f"another for the next job"
            ) from None
        finally:  # past the limit, or the request cancelled: a thread cannot be stopped, and its worker is kept
            if not start.done():
                start.add_done_callback(self._keep)

    def _keep(self, start: asyncio.Future[_Worker]) -> None:
        if not start.cancelled() and start.exception() is None:
            self._idle.append(start.result())

    def _stop(self, worker: _Worker, grace: float = 0, tidy: bool = False) -> None:
        """Kill ``worker`` unless it ends within ``grace`` seconds. ``tidy`` removes what it left in the store's
        ``tmp/`` (an upload's staging folder, whose lock died with it), counted against the store until a restart."""
        worker.process.join(grace)
        self._all.pop(worker.process.pid or -1, None)
        worker.conn.close()
        worker.process.kill()  # (nothing when it has ended)
        worker.process.join(timeout=5)
        with contextlib.suppress(Exception):
            if tidy and (removed := ModelStore(self.settings.store, self.settings.store_max_bytes).clean_tmp()):
                logger.info("model store: removed %d leftovers of a worker that died", len(removed))

    async def run(self, what: str, func: Callable[..., T], *args: Any, since: float | None = None, **kwargs: Any) -> T:
        """``func(context, *args, **kwargs)`` in a worker process, within the time limit counted from now, or from
        ``since`` (the loop time the request began waiting for its upload's memory, :meth:`UploadMemory.hold`).

        Raises:
            BusyError: no worker became free within the time limit (the job never started).
            RunTimeoutError: the job outlived the limit; its process was killed.
            WorkerDiedError: the worker process ended without an answer.
            whatever ``func`` raised.
        """
        loop = asyncio.get_running_loop()
        deadline = (loop.time() if since is None else since) + self.timeout_s
        if self._loop is not loop:  # an app started again runs on a new loop, and a pool shut down starts anew
            self._loop, self._slots = loop, asyncio.Semaphore(self.size)
            self._threads = ThreadPoolExecutor(2 * self.size, thread_name_prefix="ovreduce-pool")
        slots, held = self._slots, False  # (released after a shutdown too; held: by a job its request left)

        def off(call: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
            return loop.run_in_executor(self._threads, call, *args)  # (after a shutdown, the default executor)

        self.on_event("queued")
        try:
            async with asyncio.timeout_at(deadline):
                await slots.acquire()
        except TimeoutError:
            self.on_event("busy")
            raise _busy(what, f"{self.timeout_s:g} s for one of its {self.size} workers") from None
        finally:
            self.on_event("dequeued")
        try:
            if deadline - loop.time() < self.timeout_s * _LEAST_LEFT:  # it would only be stopped: not started
                self.on_event("busy")
                raise _busy(
                    what, f"for one of its {self.size} workers until too little of its {self.timeout_s:g} s was left,"
                )
            for fresh in (False, True):  # a worker killed while idle (the system, an operator): not this job's doing
                while self._idle and not self._idle[-1].process.is_alive():  # reaped: its stop does not block
                    self._stop(self._idle.pop())
                worker = self._idle.pop() if self._idle and not fresh else await self._started(off, what, deadline)
                # A task of its own: a request cancelled (its client gone, the server stopping) stops its job as the
                # time limit does, and the slot is held until its worker is stopped
                answer = loop.create_task(self._answer(worker, off, deadline, what, fresh, func, args, kwargs))
                self._answering.add(answer)
                answer.add_done_callback(self._answering.discard)
                try:
                    outcome = await asyncio.shield(answer)
                except asyncio.CancelledError:
                    held = True
                    answer.cancel()
                    answer.add_done_callback(functools.partial(_release, slots))
                    raise
                if outcome is not None:
                    break
        finally:
            if not held:
                slots.release()
        assert outcome is not None  # (a fresh worker's answer is never None)
        ok, payload = outcome
        if ok:
            return payload  # type: ignore[no-any-return]
        raise payload

    async def _answer(
        self,
        worker: _Worker,
        off: Callable[..., asyncio.Future[Any]],
        deadline: float,
        what: str,
        fresh: bool,
        func: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> tuple[bool, Any] | None:
        """The job's answer from ``worker`` (ok, and the result or the error), or None where a worker taken idle had
        died before it took the job (the job never started: another one takes it)."""
        exchange = off(_exchange, worker, (func, args, kwargs, deadline))
        try:
            async with asyncio.timeout_at(deadline):
                ok, payload, retire = await asyncio.shield(exchange)
        except (TimeoutError, asyncio.CancelledError) as exc:  # past its limit, or its request cancelled
            # Killed before its pipe is closed, which ends the exchange's read first: a descriptor closed under a read
            # could be a new worker's pipe by the read's next call.
            worker.process.kill()
            with contextlib.suppress(Exception):  # (its end: EOFError)
                await asyncio.wait_for(exchange, 5)
            await off(self._stop, worker, 0, True)  # the kill frees all its memory
            if not isinstance(exc, TimeoutError):
                raise
            self.killed += 1
            self.on_event("timeout")
            raise RunTimeoutError(
                f"{what} took longer than the limit of {self.timeout_s:g} s (OVREDUCE_RUN_TIMEOUT_S); it was stopped"
            ) from None
        except (_NotDeliveredError, EOFError, OSError) as exc:
            if isinstance(exc, _NotDeliveredError) and not fresh:  # died before it took the job: unseen above
                await off(self._stop, worker)
                return None
            self.on_event("worker_died")
            await off(self._stop, worker, 1.0, True)
            ended = f"{what} ended its worker process ({_how_it_ended(worker.process.exitcode)}) without an answer"
            bound = self.settings.max_worker_bytes
            if (worker.process.exitcode or 0) < 0 and worker.held > bound // 2:  # killed near its memory bound
                raise WorkerDiedError(
                    f"{ended}; the server goes on with a fresh worker. It held {worker.held} bytes of data when it "
                    f"took the job, of the {bound} a worker process may use (OVREDUCE_MAX_WORKER_BYTES): running out "
                    f"of them is the likely cause (OpenVINO ends its process when an allocation fails in a thread of "
                    f"its own, and the system kills a process for lack of memory); send less, or raise the setting"
                ) from None
            raise WorkerDiedError(
                f"{ended}; the server goes on with a fresh worker. The system killing the worker for lack of memory "
                f"ends it so, and so does a crash of the parser or of OpenVINO, which some invalid models cause: retry "
                f"once; if it ends so again, the model or its inputs cause it"
            ) from None
        if retire:  # it left an inference running: replaced by a fresh one on the next job
            await off(self._stop, worker)
        else:
            self._idle.append(worker)
        return ok, payload

    def shutdown(self) -> None:
        """Stop every worker (running jobs end with them, as their workers died)."""
        while self._idle:
            self._stop(self._idle.pop())
        busy, self._all = list(self._all.values()), {}
        for process in busy:  # workers busy with a job
            process.kill()
        self._loop = None
        threads, self._threads = self._threads, None  # (a job still finishing goes on in the default executor)
        if threads is not None:
            threads.shutdown(wait=False)


def _release(slots: asyncio.Semaphore, answer: asyncio.Task[Any]) -> None:
    """Free the slot of a job whose request left, once it has ended; its answer (or error) goes to nobody."""
    slots.release()
    if not answer.cancelled():
        answer.exception()  # (retrieved: never "Task exception was never retrieved")


def _busy(what: str, waited: str) -> BusyError:
    return BusyError(f"the server is busy: {what} waited {waited} and was not started; retry later")


def _how_it_ended(code: int | None) -> str:
    """``killed by signal 11 (SIGSEGV)``, ``exit status 1``: how a worker process ended, for a message."""
    if code is None:
        return "still running, its pipe closed"
    if code >= 0:
        return f"exit status {code}"
    with contextlib.suppress(ValueError):  # (a number no name is known for)
        return f"killed by signal {-code} ({signal.Signals(-code).name})"
    return f"killed by signal {-code}"


class _NotDeliveredError(Exception):
    """The worker ended before it took the job (it sent no receipt): the job never started."""


_OUT_OF_BAND = 1 << 16


def _exchange(worker: _Worker, job: tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any], float]) -> Any:
    """Send one job (its function, arguments and deadline), take the worker's receipt, and return its answer (ok, the
    result or the error, whether the worker retires). Bytes arguments of :data:`_OUT_OF_BAND` bytes or more (an
    upload's files) go down the pipe as they are, beside the pickle of the rest: pickled with it, each was copied
    whole in the server first. The receipt says how much data the worker holds with the job's (``worker.held``)."""
    conn, worker.held = worker.conn, 0
    func, args, kwargs, deadline = job
    buffers: list[pickle.PickleBuffer] = []
    wrapped = tuple(pickle.PickleBuffer(a) if type(a) is bytes and len(a) >= _OUT_OF_BAND else a for a in args)
    head = pickle.dumps((func, wrapped, kwargs, deadline), protocol=5, buffer_callback=buffers.append)
    try:
        conn.send_bytes(len(buffers).to_bytes(4, "big") + head)
        for buffer in buffers:
            conn.send_bytes(buffer)
    except OSError:  # it ended: before it took the job, or after it answered that the job's data does not fit in it
        if not conn.poll(0):
            raise _NotDeliveredError from None
    try:
        receipt = conn.recv_bytes()  # a worker killed an instant before still accepts the bytes, then closes
    except (EOFError, OSError):
        raise _NotDeliveredError from None
    worker.held = int.from_bytes(receipt, "big")
    return conn.recv()
