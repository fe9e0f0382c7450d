"""Parsing JSON as strictly as JavaScript's ``JSON.parse``: no ``NaN``, ``Infinity`` or ``-Infinity`` tokens.

:func:`loads` is Python's parser refusing those tokens; :func:`node_loads` is Node's own ``JSON.parse`` (when
``node`` is installed: :data:`NODE`), for the documents a browser or a JavaScript client reads.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

NODE = shutil.which("node")

# Reads a JSON array of texts on stdin and writes back the array of what JSON.parse makes of each.
_NODE_SCRIPT = """
let input = "";
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  process.stdout.write(JSON.stringify(JSON.parse(input).map((text) => JSON.parse(text))));
});
"""


def _refuse(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def loads(text: str | bytes) -> Any:
    """``json.loads``, refusing ``NaN`` and the infinities as every strict parser does."""
    return json.loads(text, parse_constant=_refuse)


def node_loads(*texts: str) -> list[Any]:
    """Each text parsed by Node's ``JSON.parse`` (the values as Node writes them back); raises AssertionError
    with Node's message when one does not parse."""
    assert NODE is not None
    done = subprocess.run([NODE, "-e", _NODE_SCRIPT], input=json.dumps(list(texts)), capture_output=True,
                          text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    values: list[Any] = json.loads(done.stdout)
    return values
