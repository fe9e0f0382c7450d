"""The CLI's JSON writer writes what ``json.dumps(value, indent=2)`` writes, for any JSON value and for every
golden JSON document, and leaves what it does not handle to ``json.dumps``."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from ovreduce.cli.render import json_text
from ovreduce.cli.render.json_text import dumps

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "docs"
ODD = 'é\u2028\x00"\\/\t漢\U0001f600\x7f'


@pytest.mark.parametrize(
    "value",
    [
        {}, [], (), "", ODD, 0, -5, 2**70, -0.0, 0.1, 1e300, 1e-320, 1e16, math.nan, math.inf, -math.inf, True,
        False, None, {"a": [1, 2, 3], "b": {"c": [], "d": {}}, "e": [[], {}, [1], [True, 1]], ODD: ODD},
        [1.5, 2, None, "x", [1, [2, [3]]]], (1, 2), [(1, "a")], [True, False], [1, True],
    ],
)  # fmt: skip
def test_values_are_written_as_json_dumps_writes_them(value: Any) -> None:
    assert dumps(value) == json.dumps(value, indent=2)


def _random(rng: random.Random, depth: int) -> Any:
    r = rng.random()
    if depth > 4 or r < 0.3:
        text = "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(5)))
        return rng.choice([rng.randint(-(10**20), 10**20), rng.random() * 10 ** rng.randint(-30, 30), text, None,
                           True, False, math.nan, -math.inf])  # fmt: skip
    if r < 0.65:
        return [_random(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {"".join(chr(rng.randrange(0, 0x300)) for _ in range(rng.randrange(4))): _random(rng, depth + 1)
            for _ in range(rng.randrange(5))}  # fmt: skip


def test_random_values_are_written_as_json_dumps_writes_them() -> None:
    rng = random.Random(11)
    for _ in range(2000):
        value = _random(rng, 0)
        assert dumps(value) == json.dumps(value, indent=2)


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json.golden")), ids=lambda p: p.name)
def test_golden_documents_are_written_as_json_dumps_writes_them(path: Path) -> None:
    document = json.loads(path.read_text())
    assert dumps(document) == json.dumps(document, indent=2)


def test_what_it_does_not_handle_goes_to_json_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    plain = json.dumps

    def counting(value: Any, **kwargs: Any) -> str:
        calls.append(value)
        return plain(value, **kwargs)

    monkeypatch.setattr(json_text.json, "dumps", counting)
    assert dumps({"a": [1, {"b": 2.5}]}) == plain({"a": [1, {"b": 2.5}]}, indent=2)
    assert calls == []  # the usual values never reach json.dumps
    for unusual in ({1: "int key"}, {"k": {True: None}}):
        assert dumps(unusual) == plain(unusual, indent=2)
    assert calls == [{1: "int key"}, {"k": {True: None}}]
    circular: list[Any] = []
    circular.append(circular)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps(circular)
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"a": {1, 2}})
