"""How long the service takes to serve a large check document, against the library making it in-process.

    python bench/api_document_bench.py [--blocks 500] [--repeat 5]

The generated decoder of ``bench/check_bench.py`` (500 blocks: 28,513 layers) is checked by the library in
this process (``parse_ir`` + ``check_model`` + ``check_document``, the document's JSON included) and posted to
``POST /v1/check`` of an ``ovreduce serve`` on 127.0.0.1 (one worker; each post with a new model name, so
that none is answered from the cache), the two alternated. Medians of ``--repeat`` runs each, after one of each
to warm up. Target: served in at most 1.2 times the library's time. It prints PASS or FAIL; it never asserts.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx
from api_bench import _multipart, _start
from check_bench import decoder_xml

TARGET = 1.2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--blocks", type=int, default=500, help="decoder blocks (500: 28,513 layers)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each side (5)")
    args = parser.parse_args(argv)
    from ovreduce.check import check_document, check_model
    from ovreduce.ir.parser import parse_ir
    from ovreduce.ir.weights import Weights
    from ovreduce.reports.common import dumps

    with tempfile.TemporaryDirectory(prefix="ovreduce-docbench.") as tmp:
        xml_path = decoder_xml(args.blocks, Path(tmp), rebuild=False)
        xml, bin_data = xml_path.read_bytes(), xml_path.with_suffix(".bin").read_bytes()

        def library() -> int:  # the document as the CLI writes it (and as the service's worker does)
            model = parse_ir(xml, Weights(bin_data, name="model.bin"), source="model.xml")
            return len(dumps(check_document([check_model(model, path="model.xml")]), indent=False))

        local: list[float] = []
        served: list[float] = []
        proc, url = _start(1, Path(tmp) / "store")
        try:
            with httpx.Client(base_url=url, timeout=300) as client:
                for i in range(args.repeat + 1):  # alternated, so that both see the machine as it is; first: warm-up
                    start = time.perf_counter()
                    size = library()
                    local.append(time.perf_counter() - start)
                    new = xml.replace(b'<net name="', b'<net name="%d-' % i, 1)  # new bytes (not cached), read as fast
                    body, content_type = _multipart(new, bin_data)
                    start = time.perf_counter()
                    response = client.post("/v1/check", content=body, headers={"content-type": content_type})
                    served.append(time.perf_counter() - start)
                    assert response.status_code == 200, response.text[:300]
        finally:
            proc.terminate()
            proc.wait(30)
    lib, api = statistics.median(local[1:]), statistics.median(served[1:])
    print(f"{len(xml) / 1e6:.1f} MB of XML, a {size / 1e6:.1f} MB document")
    print("library runs (ms):", [round(t * 1000) for t in local], " served (ms):", [round(t * 1000) for t in served])
    print(f"library: {lib * 1000:.0f} ms   served: {api * 1000:.0f} ms   ratio {api / lib:.2f}x "
          f"(target <= {TARGET}x): {'PASS' if api / lib <= TARGET else 'FAIL'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
