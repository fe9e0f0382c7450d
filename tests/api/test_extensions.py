"""``OVREDUCE_EXTENSIONS``: loaded in the server's process at its start and in every worker process before its
first job; one that cannot be loaded stops the start; a request can never name one."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openvino_tokenizers
import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from api.config import Settings
from api.main import create_app
from api.workers import IsolatedPool, WorkerContext
from ovreduce import _openvino
from ovreduce.errors import BackendError
from tests.api.conftest import files
from tests.ir.extension_ops import LLAMA, python

LIBRARY = Path(str(openvino_tokenizers._ext_path))


def _loaded(_context: WorkerContext) -> list[str]:
    """A job: the extensions its worker process has loaded, by the names they were given."""
    return [e.name for e in _openvino.loaded_extensions()]


def _run(pool: IsolatedPool, func: Callable[..., Any]) -> Any:
    async def go() -> Any:
        try:
            return await pool.run("the probe", func)
        finally:
            pool.shutdown()

    return asyncio.run(go())


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """openvino-tokenizers' library under another path: an extension that is loaded only when it is named."""
    target = tmp_path / "libcopy.so"
    shutil.copyfile(LIBRARY, target)
    return target


def test_the_setting_is_a_comma_separated_list(make_settings: Callable[..., Settings], copy: Path) -> None:
    settings = make_settings(extensions=f" openvino_tokenizers , {copy},")
    assert settings.extension_names() == ("openvino_tokenizers", str(copy))
    assert make_settings().extension_names() == ()


def test_a_setting_that_names_nothing_is_refused(make_settings: Callable[..., Settings]) -> None:
    with pytest.raises(ValidationError, match=r"missing/libcustom\.so: no such file; expected an OpenVINO extension"):
        make_settings(extensions="missing/libcustom.so")


def test_every_worker_loads_them_before_its_first_job(make_settings: Callable[..., Settings], copy: Path) -> None:
    settings = make_settings(extensions=str(copy))
    assert _run(IsolatedPool(1, 60.0, settings), _loaded) == ["openvino_tokenizers", str(copy)]


def test_a_worker_that_cannot_load_them_answers_every_job_503(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    fake = tmp_path / "libfake.so"
    fake.write_bytes(b"not a shared library")
    with pytest.raises(BackendError) as caught:
        _run(IsolatedPool(1, 60.0, make_settings(extensions=str(fake))), _loaded)
    assert caught.value.message == (
        "the service's OpenVINO extensions (OVREDUCE_EXTENSIONS) could not be loaded; the server's log says why"
    )


def test_the_service_does_not_start_without_them(make_settings: Callable[..., Settings], tmp_path: Path) -> None:
    fake = tmp_path / "libfake.so"
    fake.write_bytes(b"not a shared library")
    client = TestClient(create_app(make_settings(extensions=str(fake))), base_url="http://127.0.0.1")
    with pytest.raises(BackendError, match="OVREDUCE_EXTENSIONS"), client:
        pass


def test_the_server_process_loads_them_at_its_start(tmp_path: Path, copy: Path) -> None:
    """Stored models are checked in the server's own process: it has them from the start. (In a fresh
    interpreter: an extension stays loaded in a process, and would change what later tests' messages say.)"""
    code = (
        "from fastapi.testclient import TestClient\nfrom api.config import Settings\nfrom api.main import create_app\n"
        "from ovreduce import _openvino\n"
        f"settings = Settings(store={str(tmp_path / 'store')!r}, extensions={str(copy)!r})\n"
        "with TestClient(create_app(settings), base_url='http://127.0.0.1'):\n"
        "    print([e.name for e in _openvino.loaded_extensions()])\n"
    )
    done = python(code, without_tokenizers=False)
    assert done.stdout.strip() == repr(["openvino_tokenizers", str(copy)]), done.stderr


def test_a_tokenizer_ir_checks_clean_on_openvino(client: TestClient) -> None:
    xml = (LLAMA / "openvino_tokenizer.xml").read_bytes()
    bin_data = (LLAMA / "openvino_tokenizer.bin").read_bytes()
    response = client.post("/v1/check?engine=openvino", files=files(xml, bin_data, name="openvino_tokenizer.xml"))
    assert response.status_code == 200, response.text
    [model] = response.json()["models"]
    assert (model["ok"], model["findings"]) == (True, [])


def test_no_request_can_name_an_extension(client: TestClient) -> None:
    """No parameter of any operation, and no field of any schema (request bodies' included), is about
    extensions: the setting is the only way to load one."""
    spec = client.get("/openapi.json").json()
    names = []
    for path in spec["paths"].values():
        for operation in path.values():
            names += [p["name"] for p in operation.get("parameters", [])]
    for schema in spec["components"]["schemas"].values():
        names += list(schema.get("properties", {}))
    assert len(names) > 50  # the whole schema was read
    assert [n for n in names if "extension" in n.lower()] == []
