"""The service's own leaves of the library's exception tree (:mod:`ovreduce.errors`).

No HTTP here: the store, the worker pool and the body limit raise these; :mod:`api.problems` maps every
class of the tree to a status::

    OvReduceError
    ├── LimitExceededError
    │   ├── RequestTooLargeError   limit.body   a request body or upload over its limit
    │   └── RunTimeoutError        limit.time   a run or check that took longer than the time limit
    ├── BusyError                  busy         every worker stayed busy; the request never started
    ├── BackendError
    │   └── WorkerDiedError        worker       the worker process running the job died without an answer
    └── StoreError                 store        the model store cannot be read or written
        ├── StoreFullError         store.full   a write failed: the disk is full (or out of quota)
        └── StoreCorruptError      store.corrupt  a stored model no longer matches its hashes; it was removed
"""

from __future__ import annotations

from ovreduce.errors import BackendError, LimitExceededError, OvReduceError

__all__ = [
    "BusyError",
    "RequestTooLargeError",
    "RunTimeoutError",
    "StoreCorruptError",
    "StoreError",
    "StoreFullError",
    "WorkerDiedError",
]


class RequestTooLargeError(LimitExceededError):
    """The request body is larger than the configured limit."""

    code = "limit.body"


class RunTimeoutError(LimitExceededError):
    """A run (or check) took longer than the configured time limit."""

    code = "limit.time"


class BusyError(OvReduceError):
    """Every worker stayed busy for the whole time limit; the request never started."""

    code = "busy"


class WorkerDiedError(BackendError):
    """The worker process running a job ended without an answer (killed by the system, a crash)."""

    code = "worker"


class StoreError(OvReduceError):
    """The model store cannot be read or written (permissions, disk full)."""

    code = "store"


class StoreFullError(StoreError):
    """Writing to the model store failed for lack of space (ENOSPC, EDQUOT); retrying later may succeed."""

    code = "store.full"


class StoreCorruptError(StoreError):
    """A stored model's files no longer match the hashes recorded when it was written; it was removed."""

    code = "store.corrupt"
