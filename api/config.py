"""The service's settings: one :class:`Settings` object, read from ``OVREDUCE_*`` environment variables.

Every limit has a safe default for a service on 127.0.0.1; raise them for trusted, larger models. What each setting
means is written once, in docs/service.md's settings table, which ``python -m tests.api.settings_doc`` makes from this
class (the suite fails while it is stale).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from platformdirs import user_cache_path
from pydantic import BeforeValidator, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ovreduce.errors import MAX_TIMEOUT_S
from ovreduce.ir.build import ParseLimits
from ovreduce.processes import usable_cpus

__all__ = ["HEADER_TIMEOUT_STATE_KEY", "Settings", "split_host"]

HEADER_TIMEOUT_STATE_KEY = "ovreduce.header_timeout_s"
"""The app's lifespan state entry that tells :class:`api.protocol.HeaderTimeoutProtocol` its deadline."""

_MiB = 1 << 20
_MOST = 1 << 62
"""The largest size or count a setting takes: every limit is compared and added to, and passed to the system
(``read(limit + 1)``, ``setrlimit``), as a 64-bit integer."""


_HOST_RE = re.compile(r"^(?P<host>\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(?P<port>[0-9]{1,5}))?$")


def split_host(value: str) -> tuple[str, str | None] | None:
    """A ``Host`` value (or an allowed one) as its lower-case name and its port, if it has one; None when it is
    neither a name nor an address (``[v6]``) with an optional port up to 65535."""
    match = _HOST_RE.match(value.strip().lower())
    if match is None or (match["port"] is not None and int(match["port"]) > 65535):
        return None
    return match["host"], match["port"]


MAX_WORKERS = 256
"""The most uvicorn worker processes: it starts them all at once, so a mistyped count must not fill the machine."""


class Settings(BaseSettings):
    """Everything the service can be told; see the module docstring for the table."""

    model_config = SettingsConfigDict(env_prefix="OVREDUCE_", extra="ignore", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    workers: int = Field(default=1, ge=1, le=MAX_WORKERS)
    store: Path = Field(default_factory=lambda: user_cache_path("ovreduce", appauthor=False) / "store")
    store_max_bytes: int = Field(default=2 << 30, ge=0, le=_MOST)
    max_upload_bytes: int = Field(default=256 * _MiB, ge=1, le=_MOST)
    max_json_bytes: int = Field(default=8 * _MiB, ge=1, le=_MOST)
    max_xml_bytes: int = Field(default=32 * _MiB, ge=1, le=_MOST)
    max_layers: int = Field(default=100_000, ge=1, le=_MOST)
    max_elements: int = Field(default=1 << 22, ge=1, le=_MOST)
    max_output_elements: int = Field(default=1 << 20, ge=1, le=_MOST)
    max_worker_bytes: int = Field(default=4 << 30, ge=256 * _MiB, le=_MOST)
    upload_memory_bytes: int = Field(default=1 << 30, ge=1, le=_MOST)
    run_timeout_s: float = Field(default=30.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)

    concurrency: int = Field(default_factory=usable_cpus, ge=1)
    model_cache_size: int = Field(default=16, ge=1)
    check_cache_size: int = Field(default=256, ge=0)
    log_level: Annotated[
        Literal["critical", "error", "warning", "info", "debug", "trace"],
        BeforeValidator(lambda value: value.lower() if isinstance(value, str) else value),
    ] = "info"
    allowed_hosts: str = "localhost,127.0.0.1,[::1]"
    max_requests: int = Field(default=64, ge=1)
    header_timeout_s: float = Field(default=10.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    body_timeout_s: float = Field(default=30.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    extensions: str = ""

    @field_validator("host")
    @classmethod
    def _an_address(cls, value: str) -> str:
        """An empty host would listen on every interface (0.0.0.0 says so); one that is not ASCII names no address."""
        if not value.strip() or not value.isascii() or not value.isprintable() or " " in value.strip():
            raise ValueError(f"{value[:40]!r} is not a host name or address; give one, e.g. 127.0.0.1 (0.0.0.0: every "
                             f"interface)")  # fmt: skip
        return value

    @field_validator("store", mode="before")
    @classmethod
    def _a_folder(cls, value: object) -> object:
        """An empty path would be the working directory, whose ``tmp/`` the store tidies."""
        if isinstance(value, str) and not value.strip():
            raise ValueError("an empty path names no folder; give the store's folder")
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts_that_can_match(cls, value: str) -> str:
        """Each entry one a ``Host`` can match, and one at least: refused at the start, not by answering 400 to all."""
        if not _items(value):
            raise ValueError("an empty list allows no Host; give names, e.g. localhost,127.0.0.1,[::1] (the default)")
        for item in _items(value):
            if item == "*" or split_host(item.removeprefix("*.")) is not None:
                continue
            if "://" in item:
                raise ValueError(f"{item[:80]!r} can match no Host: give the name alone, without a scheme or path")
            if item.count(":") > 1 and not item.startswith("["):
                raise ValueError(f"{item[:80]!r} can match no Host: write an IPv6 address in brackets, e.g. [::1]")
            raise ValueError(f"{item[:80]!r} can match no Host: give a name or address, name:port (a port up to "
                             f"65535), [IPv6 address], *.suffix or *")  # fmt: skip
        return value

    @field_validator("extensions")
    @classmethod
    def _extensions_are_there(cls, value: str) -> str:
        """Each extension is found now (a file or an installed module); loaded when the service starts."""
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

    def parse_limits(self) -> ParseLimits:
        """What reading one IR may cost, as these settings bound it."""
        return ParseLimits(max_xml_bytes=self.max_xml_bytes, max_layers=self.max_layers,
                           layers_setting="OVREDUCE_MAX_LAYERS")  # fmt: skip

    def host_patterns(self) -> tuple[str, ...]:
        """The allowed ``Host`` values, lower-case: :attr:`allowed_hosts` plus the bind host (``*``: any)."""
        items = [item.lower() for item in _items(self.allowed_hosts)]
        bind = self.host.strip().lower()  # never empty (see _an_address)
        items.append(f"[{bind}]" if ":" in bind and not bind.startswith("[") else bind)
        return tuple(dict.fromkeys(items))

    def page_names(self) -> tuple[str, ...]:
        """The names whose pages are the service's own where a proxy rewrote ``Host`` (a page's ``Origin``):
        :attr:`allowed_hosts` but ``*`` and ``*.suffix`` (anyone's, any subdomain's) and the loopback names without a
        port (another server's of this machine)."""
        names = (i.lower() for i in _items(self.allowed_hosts))
        return tuple(n for n in names if n not in _NOT_PAGE_NAMES and not n.startswith("*."))


_NOT_PAGE_NAMES = frozenset({"*", "localhost", "127.0.0.1", "[::1]"})


def _items(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())
