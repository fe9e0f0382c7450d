"""The corpus of real models, fetched and converted once per cache (see corpus.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.models.corpus import CORPUS, CorpusModel, ir_path


@pytest.fixture(scope="session", params=CORPUS, ids=[m.id for m in CORPUS])
def corpus_model(request: pytest.FixtureRequest) -> tuple[CorpusModel, Path]:
    """Each corpus model with its IR ``.xml`` (a failed download fails the test with pip's message)."""
    model: CorpusModel = request.param
    return model, ir_path(model)
