"""Peak RSS of ``fastcopy run`` stays within 2 x the case's buffer bytes + 100 MB (issue 10 item 6, the golden
part): inputs are generated in chunks straight into their arrays, and files are written from the arrays
(no ``tobytes`` copies)."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np

from fastcopy.golden import inputs
from fastcopy.golden.schema import BufferSpec

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("golden_rss", ROOT / "bench" / "golden_rss.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_peak_rss_of_run_is_within_the_target():
    r = _bench().measure(48)  # 4 GM buffers of 48 MiB
    assert r["peak_rss"] <= r["target"], r


def test_chunked_generation_gives_the_same_bytes_as_one_draw(monkeypatch):
    monkeypatch.setattr(inputs, "KEEP_ELEMENTS", 0)  # every call draws (none is a copy of a kept draw)
    specs = [("half", {"kind": "uniform", "low": -2.0, "high": 2.0}), ("float", {"kind": "normal", "mean": 0.0,
             "std": 1.0}), ("int8_t", {"kind": "integers", "low": -128, "high": 128}), ("uint64_t", {
             "kind": "integers", "low": 0, "high": 2**64}), ("half", {"kind": "bits"}), ("int32_t", {
             "kind": "arange", "start": 3, "step": 2}), ("complex64", {"kind": "uniform", "low": 0.0, "high": 1.0}),
             ("bool", {"kind": "bits"})]
    for dt, init in specs:
        b = BufferSpec("x", dt, True, (1001,), "GM", None, init, "x")
        whole = inputs.generate(b, 7)
        monkeypatch.setattr(inputs, "CHUNK", 64)
        parts = inputs.generate(b, 7)
        monkeypatch.setattr(inputs, "CHUNK", 1 << 20)
        assert np.array_equal(whole.view(np.uint8), parts.view(np.uint8)), dt
