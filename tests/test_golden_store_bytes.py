"""The folder writer's files and hashes are the bytes of the array in C order, whatever its layout or dtype: a
C-contiguous array is written and hashed as it is, any other through a byte view."""

from __future__ import annotations

import hashlib

import ml_dtypes
import numpy as np
import pytest

from fastcopy.golden import store
from fastcopy.golden.store import FolderWriter, sha256_of, write_folder


def _arrays():
    a = np.arange(24, dtype=np.float16).reshape(4, 6)
    return [a, a[:, ::2], np.asfortranarray(a), a.T, np.zeros((0, 3), np.int32), np.array(7, np.int64),
            np.arange(6).astype(ml_dtypes.bfloat16), np.arange(6).astype(ml_dtypes.int4).reshape(2, 3),
            np.arange(5, dtype=np.uint8)[::-1], np.ones(3, bool)]


@pytest.mark.parametrize("k", range(len(_arrays())))
def test_an_array_is_written_and_hashed_as_its_bytes_in_c_order(tmp_path, k):
    arr = _arrays()[k]
    want = arr.tobytes(order="C")
    assert sha256_of(arr) == hashlib.sha256(want).hexdigest()
    write_folder(str(tmp_path / "d"), [("input/a.bin", arr), ("output/b.bin", bytearray(want)),
                                      ("manifest.json", memoryview(want))])
    for rel in ("input/a.bin", "output/b.bin", "manifest.json"):
        assert (tmp_path / "d" / rel).read_bytes() == want


def test_large_files_are_written_and_hashed_in_steps(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "_CHUNK", 7)
    for arr in _arrays():
        want = arr.tobytes(order="C")
        assert sha256_of(arr) == hashlib.sha256(want).hexdigest()
        with FolderWriter(str(tmp_path / "d")) as w:
            w.write("input/a.bin", arr)
            w.write("manifest.json", want)
        assert (tmp_path / "d" / "input" / "a.bin").read_bytes() == want
        assert (tmp_path / "d" / "manifest.json").read_bytes() == want
