"""The service's own leaves of the library's exception tree (:mod:`ovreduce.errors`).

No HTTP here: the store, the worker pool and the body limit raise these; :mod:`api.problems` maps every
class of the tree to a status::

    OvReduceError
    ├── LimitExceededError
    │   ├── RequestTooLargeError   limit.body   a request body or upload over its limit
    │   └── RunTimeoutError        limit.time   a run or check that took longer than the time limit
    ├── InputError
    │   └── MediaTypeError         request.media_type  a body in a media type or content coding the route does not read
    ├── BusyError                  busy         every worker stayed busy; the request never started
    ├── BackendError
    │   └── WorkerDiedError        worker       the worker process running the job died without an answer
    └── StoreError                 store        the model store cannot be read or written
        ├── StoreFullError         store.full   a write failed: the disk is full (or out of quota)
        └── StoreCorruptError      store.corrupt  a stored model no longer matches its hashes; it was removed
"""

from __future__ import annotations

from ovreduce.errors import BackendError, InputError, LimitExceededError, OvReduceError

__all__ = [
    "BusyError",
    "MediaTypeError",
    "RequestTooLargeError",
    "RunTimeoutError",
    "StoreCorruptError",
    "StoreError",
    "StoreFullError",
    "WorkerDiedError",
]


class RequestTooLargeError(LimitExceededError):
    code = "limit.body"


class RunTimeoutError(LimitExceededError):
    code = "limit.time"


class MediaTypeError(InputError):
    code = "request.media_type"


class BusyError(OvReduceError):
    code = "busy"


class WorkerDiedError(BackendError):
    code = "worker"


class StoreError(OvReduceError):
    code = "store"


class StoreFullError(StoreError):
    code = "store.full"


class StoreCorruptError(StoreError):
    code = "store.corrupt"
