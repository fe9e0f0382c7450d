"""docs/service.md's settings table is the one written from ``Settings``: every setting, its real default."""

from __future__ import annotations

from .settings_doc import DOC, MEANINGS, page


def test_the_settings_table_is_current() -> None:
    text = DOC.read_text()
    assert text == page(text), "docs/service.md's settings table is out of date: python -m tests.api.settings_doc"


def test_every_meaning_is_of_a_setting() -> None:
    from api.config import Settings

    assert set(MEANINGS) == set(Settings.model_fields)
