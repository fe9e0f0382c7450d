# ruff: noqa: E501  (the meanings are table cells: one line each reads best)
"""The settings table of ``docs/service.md``, written from :class:`api.config.Settings` itself.

Each field of ``Settings`` is one row: its environment variable, its default (read from the field) and its
meaning (below)::

    python -m tests.api.settings_doc      # rewrite the table in docs/service.md (run from the repository root)

``tests/api/test_settings_doc.py`` fails when the page's table is not what this writes, and :func:`render`
raises for a field it has no meaning for, so a new setting cannot go undocumented.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic.fields import FieldInfo

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "service.md"
BEGIN = "<!-- the settings table: written by `python -m tests.api.settings_doc` from api/config.py's Settings -->"
END = "<!-- end of the settings table -->"

# What each setting means, by field name.
MEANINGS: dict[str, str] = {
    "host": "the address `ovreduce serve` binds (also allowed as a `Host`)",
    "port": "the port `ovreduce serve` listens on",
    "workers": "`ovreduce serve`'s uvicorn worker processes, 1 to 256 (metrics: see [Metrics](#metrics))",
    "store": "the model store directory",
    "store_max_bytes": "the store's size, uploads under way included; least recently used models are evicted beyond it",
    "max_upload_bytes": "one multipart request (xml + bin, or onnx), counted as it streams",
    "max_json_bytes": "any other request body (a run's JSON; parsing it costs up to about 48× its size in memory, counted in `OVREDUCE_UPLOAD_MEMORY_BYTES` at 50× past 64 KiB)",
    "max_xml_bytes": "one IR .xml",
    "max_layers": "layers in one IR",
    "max_elements": "elements of one run input, given or generated, of a run's output, and of every intermediate tensor of an audit or conform (not the model's weights: its Constants, and what a decompression makes of them); an audit's inputs together are held to it too, and the tensors it keeps (each reduction's inputs and output) to 16 times it (the CLI reads the same variable, default 2^28)",
    "max_output_elements": "elements of one run output (returned as JSON)",
    "max_worker_bytes": "the data (heap and private mappings) of one worker process, where every check, run, audit and conform runs (Linux); a job that needs more, as an audit or conform whose tensors' shapes depend on input values can, is 413 `limit.memory` and its worker replaced, as is one whose request's data does not fit in it. A worker with OpenVINO and its CPU plugin loaded already holds about 200 MiB of it on 2 cores (more with more cores), so at 256 MiB jobs get about 60 MiB (the CLI holds its own process to the same variable, default there the machine's physical memory or its control group's smaller limit: exit 2)",
    "upload_memory_bytes": "request bodies held in the server process at once, once they are in until they are answered: uploads, and JSON bodies past 64 KiB at 50× their size (other bodies, KServe's binary tensors, at 2×); one past it waits, spooled on disk or not yet parsed, for its turn, first come first served (503 `busy` once `OVREDUCE_RUN_TIMEOUT_S`, which counts this wait, has passed), and one larger than it all waits for all of it",
    "run_timeout_s": "seconds a check, run, audit or conform may take, queueing included; an audit's or conform's inference gets what is left of it less a fifth of it (80% for a job that did not wait) and answers with what it established by then (its worker, which cannot stop that inference, is replaced)",
    "concurrency": "checks, runs, audits and conforms executing at once, in worker processes, per uvicorn worker (with `OVREDUCE_WORKERS` > 1 and this not set: those CPUs divided among them)",
    "model_cache_size": "parsed models kept in memory per process, whose XML together is at most `OVREDUCE_MAX_XML_BYTES` (a parsed model takes some 16 times its XML); between jobs a worker holds none of their weights files open nor their weights in memory, so a model deleted or evicted gives its disk space back at once",
    "check_cache_size": "`/v1/check` answers of at most 256 KiB kept in memory per process, by content hash (64 MiB at most)",
    "log_level": "the log level of `ovreduce serve`",
    "allowed_hosts": "comma-separated `Host` names answered, any port unless `name:port`; `*.example.com` for subdomains; the bind host (`OVREDUCE_HOST`) is added; `*` answers any `Host`; others: 400. An entry that can match no `Host` (a URL, `::1` without brackets, a port past 65535) stops the start, as does an empty list (set but empty)",
    "max_requests": "requests handled at once per worker process, `/healthz` and `/readyz` excepted; beyond it 503 `busy`",
    "header_timeout_s": "seconds a connection may take to send a request line and headers, or go without reading any of an answer (`ovreduce serve`, the image)",
    "body_timeout_s": "seconds a request's body may go without a byte arriving, and after which it must average 8 KiB/s; then 408 `request.timeout` and the connection is closed",
    "extensions": "comma-separated OpenVINO extensions (library files or Python modules, as `--extension` takes them), loaded in the server's process at its start and in each worker process before its first job; one that cannot be loaded stops the start. openvino-tokenizers' is loaded without it. No request can name one",
}

# Defaults computed when the service starts, by field name: what they are, in words.
COMPUTED: dict[str, str] = {
    "store": "`ovreduce/store` in the user cache directory (`~/.cache/ovreduce/store` on Linux)",
    "concurrency": "the CPUs it may run on (its affinity: `taskset`, a container's `--cpuset-cpus`)",
}


def _default(name: str, field: FieldInfo) -> str:
    if field.default_factory is not None:
        return COMPUTED[name]
    value = field.default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f"Settings.{name}: a default of type {type(value).__name__}; say how to write it")
    if value == "":
        return "none"
    if isinstance(value, str):
        return f"`{value}`"
    if name.endswith("_bytes") and value and value % (1 << 20) == 0:
        mib = value >> 20
        return f"{mib >> 10} GiB" if mib % 1024 == 0 else f"{mib} MiB"
    return f"{value:g}" if isinstance(value, float) else str(value)


def render() -> str:
    """The table, from the fields of ``Settings`` in their order."""
    from api.config import Settings

    prefix = Settings.model_config.get("env_prefix", "")
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        if name not in MEANINGS:
            raise KeyError(f"Settings.{name}: no meaning; add one to MEANINGS in {__name__}")
        rows.append(f"| `{prefix}{name.upper()}` | {_default(name, field)} | {MEANINGS[name]} |")
    return "\n".join(rows)


def page(text: str) -> str:
    """``text`` (the page) with the table between its markers written anew."""
    pattern = re.compile(rf"{re.escape(BEGIN)}\n.*?{re.escape(END)}", re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{DOC}: no settings table markers")
    return pattern.sub(lambda _: f"{BEGIN}\n{render()}\n{END}", text)


if __name__ == "__main__":
    DOC.write_text(page(DOC.read_text()))
    print(DOC)
