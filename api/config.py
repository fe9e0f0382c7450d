"""The service's settings: one :class:`Settings` object, read from ``OVREDUCE_*`` environment variables.

Every limit has a safe default for a service on 127.0.0.1; raise them for trusted, larger models.

==============================  ======================  ====================================================
variable                        default                 meaning
==============================  ======================  ====================================================
OVREDUCE_HOST                   127.0.0.1               ``ovreduce serve`` bind address
OVREDUCE_PORT                   8000                    ``ovreduce serve`` port
OVREDUCE_WORKERS                1                       ``ovreduce serve`` worker processes
OVREDUCE_STORE                  <user cache>/ovreduce/  the model store directory (platformdirs cache dir)
                                store
OVREDUCE_STORE_MAX_BYTES        2 GiB                   total size of the store; least recently used
                                                        models are evicted beyond it
OVREDUCE_MAX_UPLOAD_BYTES       256 MiB                 a multipart request body (xml + bin), counted as
                                                        it streams
OVREDUCE_MAX_JSON_BYTES         8 MiB                   any other request body (a run's JSON; parsing
                                                        it costs about 11x its size in memory)
OVREDUCE_MAX_XML_BYTES          32 MiB                  one IR .xml
OVREDUCE_MAX_LAYERS             100000                  layers in one IR
OVREDUCE_MAX_ELEMENTS           4194304                 elements of one run input (given or generated)
OVREDUCE_MAX_OUTPUT_ELEMENTS    1048576                 elements of one run output (returned as JSON)
OVREDUCE_RUN_TIMEOUT_S          30                      seconds a run or check may take, queueing included
OVREDUCE_CONCURRENCY            os.cpu_count()          checks, runs, audits, conforms at once (worker processes)
OVREDUCE_MODEL_CACHE_SIZE       16                      parsed models kept in memory per process
OVREDUCE_CHECK_CACHE_SIZE       256                     /v1/check documents kept per process, by content hash
OVREDUCE_LOG_LEVEL              info                    log level of ``ovreduce serve``
OVREDUCE_ALLOWED_HOSTS          localhost,127.0.0.1,    the ``Host`` values answered (any port unless one is
                                [::1]                   given, ``*.example.com`` for subdomains); the bind
                                                        host is added; ``*`` answers any Host. Others: 400
OVREDUCE_MAX_REQUESTS           64                      requests handled at once per worker process
                                                        (``/healthz`` and ``/readyz`` excepted); beyond it
                                                        503 busy
OVREDUCE_HEADER_TIMEOUT_S       10                      seconds a connection may take to send a request's
                                                        line and headers (``ovreduce serve`` and the image)
OVREDUCE_BODY_TIMEOUT_S         30                      seconds a request's body may go without a byte
                                                        arriving; then 408 and the connection is closed
OVREDUCE_EXTENSIONS             (none)                  comma-separated OpenVINO extensions loaded in every
                                                        process before it reads a model: library files or
                                                        Python modules that provide one (openvino-tokenizers'
                                                        is loaded wherever it is installed). A request can
                                                        never name one
==============================  ======================  ====================================================

State-changing requests (POST, PUT, PATCH, DELETE) whose ``Origin`` is not the service's own, or that a
browser marks ``Sec-Fetch-Site: cross-site``/``same-site``, are refused 403: only the service's own pages
(and clients that are not browsers) can drive it.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_path
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["HEADER_TIMEOUT_STATE_KEY", "Settings", "default_store"]

HEADER_TIMEOUT_STATE_KEY = "ovreduce.header_timeout_s"
"""The app's lifespan state entry that tells :class:`api.protocol.HeaderTimeoutProtocol` its deadline."""

_MiB = 1 << 20


def default_store() -> Path:
    """``<user cache dir>/ovreduce/store`` (``~/.cache/ovreduce/store`` on Linux)."""
    return user_cache_path("ovreduce", appauthor=False) / "store"


def _cpu_count() -> int:
    return max(os.cpu_count() or 1, 1)


class Settings(BaseSettings):
    """Everything the service can be told; see the module docstring for the table."""

    model_config = SettingsConfigDict(env_prefix="OVREDUCE_", extra="ignore", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    workers: int = Field(default=1, ge=1)
    store: Path = Field(default_factory=default_store)
    store_max_bytes: int = Field(default=2 << 30, ge=0)
    max_upload_bytes: int = Field(default=256 * _MiB, ge=1)
    max_json_bytes: int = Field(default=8 * _MiB, ge=1)
    max_xml_bytes: int = Field(default=32 * _MiB, ge=1)
    max_layers: int = Field(default=100_000, ge=1)
    max_elements: int = Field(default=1 << 22, ge=1)
    max_output_elements: int = Field(default=1 << 20, ge=1)
    run_timeout_s: float = Field(default=30.0, gt=0)

    @property
    def model_timeout_s(self) -> float:
        """The time a whole-model inference (audit, conform) may take inside a job: most of the job's limit, so
        that the job answers with what it established instead of being killed."""
        return self.run_timeout_s * 0.8

    concurrency: int = Field(default_factory=_cpu_count, ge=1)
    model_cache_size: int = Field(default=16, ge=1)
    check_cache_size: int = Field(default=256, ge=0)
    log_level: str = "info"
    allowed_hosts: str = "localhost,127.0.0.1,[::1]"
    max_requests: int = Field(default=64, ge=1)
    header_timeout_s: float = Field(default=10.0, gt=0)
    body_timeout_s: float = Field(default=30.0, gt=0)
    extensions: str = ""

    @field_validator("extensions")
    @classmethod
    def _extensions_are_there(cls, value: str) -> str:
        """Each extension names a file or an installed Python module (found now; loaded when the service
        starts, in each of its processes)."""
        from ovreduce._openvino import find_extension
        from ovreduce.errors import InputError

        for name in _items(value):
            try:
                find_extension(name)
            except InputError as exc:
                raise ValueError(exc.message) from None
        return value

    def extension_names(self) -> tuple[str, ...]:
        """:attr:`extensions` as a tuple of names (library paths or Python module names), in order."""
        return _items(self.extensions)

    def host_patterns(self) -> tuple[str, ...]:
        """The allowed ``Host`` values, lower-case: :attr:`allowed_hosts` plus the bind host (``*``: any)."""
        items = [item.strip().lower() for item in self.allowed_hosts.split(",") if item.strip()]
        bind = self.host.strip().lower()
        if bind:
            items.append(f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind)
        return tuple(dict.fromkeys(items))


def _items(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())
