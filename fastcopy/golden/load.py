"""Reading a golden file back: from a golden folder (its manifest gives dtype, shape, mask and tolerances, and the
sha256 every file must still have) or from a bare file (``--dtype``, sibling ``<name>.mask.bin``).

Used by ``fastcopy verify`` and :func:`fastcopy.testing.assert_golden_equal`, so both say the same things.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from ..errors import FastCopyError
from .store import sha256_file


class GoldenError(FastCopyError):
    """A golden that cannot be used: unreadable, no manifest entry, sha256 not matching its manifest, ..."""


@dataclass
class Golden:
    path: str  # the golden data file
    data: np.ndarray  # raw bytes (uint8)
    dtype: np.dtype | None
    shape: tuple | None
    mask: np.ndarray | None  # uint8, one per element
    mask_path: str | None
    entry: dict | None  # the output's manifest entry
    folder: str | None  # the golden folder (holding manifest.json)
    manifest: dict | None

    @property
    def tolerance(self) -> dict:
        """The case's ``rtol`` / ``atol`` / ``compare`` for this output (empty when bit-exact)."""
        e = self.entry or {}
        return {k: e[k] for k in ("rtol", "atol", "compare") if k in e}


def read_manifest(folder: str) -> dict:
    path = os.path.join(folder, "manifest.json")
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise GoldenError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise GoldenError(f"{path} is not valid JSON ({exc})") from None


def find_manifest_entry(golden: str):
    """(manifest folder, manifest, buffer entry) of a fastcopy golden folder that wrote the file ``golden``, or
    (None, None, None)."""
    path = os.path.abspath(golden)
    folder = os.path.dirname(path)
    for _ in range(3):
        if os.path.isfile(os.path.join(folder, "manifest.json")):
            manifest = read_manifest(folder)
            rel = os.path.relpath(path, folder).replace(os.sep, "/")
            for b in manifest.get("buffers", []):
                if b.get("file") == rel:
                    return folder, manifest, b
            return None, None, None
        folder = os.path.dirname(folder)
    return None, None, None


def outputs_of(manifest: dict) -> list:
    return [b for b in manifest.get("buffers", []) if b.get("role") == "output"]


def _entry_in_folder(folder: str, buffer: str | None):
    if not os.path.isfile(os.path.join(folder, "manifest.json")):
        raise GoldenError(f"{folder} is a folder without manifest.json: not a (complete) fastcopy golden folder; "
                          "give the golden file, or the folder of one sweep point (DIR/NNNN)")
    manifest = read_manifest(folder)
    outs = outputs_of(manifest)
    if buffer is not None:
        hit = [b for b in outs if b.get("name") == buffer]
        if not hit:
            raise GoldenError(f"{folder}: no output {buffer!r}; outputs: {', '.join(b['name'] for b in outs)}")
        return manifest, hit[0]
    if len(outs) != 1:
        names = ", ".join(b["name"] for b in outs) or "none"
        raise GoldenError(f"{folder} has {len(outs)} outputs ({names}); say which with --buffer NAME (or give the "
                          "golden file)")
    return manifest, outs[0]


def open_golden(golden, buffer: str | None = None, dtype=None, mask=None, use_mask: bool = True,
                check_sha256: bool = True) -> Golden:
    """The golden data of a file or a golden folder. With a manifest, every file used is checked against its
    sha256 there (a folder written by an interrupted or older run, or edited afterwards, is refused)."""
    from ..dtypes import as_dtype

    golden = os.fspath(golden)
    if os.path.isdir(golden):
        folder = golden
        manifest, entry = _entry_in_folder(folder, buffer)
        path = os.path.join(folder, *entry["file"].split("/"))
    else:
        path = golden
        folder, manifest, entry = find_manifest_entry(golden)
    try:
        data = np.fromfile(path, np.uint8)
    except OSError as exc:
        raise GoldenError(f"cannot read {path}: {exc.strerror}") from None
    if entry is not None and check_sha256 and entry.get("sha256"):
        if len(data) != entry.get("bytes", len(data)) or sha256_file(path) != entry["sha256"]:
            raise GoldenError(f"{path} does not match its manifest (sha256 or size differ): the golden folder was "
                              "changed after fastcopy wrote it; re-run the case")
    dt = as_dtype(dtype) if dtype is not None else (as_dtype(entry["numpy_dtype"]) if entry is not None else None)
    shape = tuple(entry["shape"]) if entry is not None and dtype is None else None
    mask_path = None
    if mask is not None:
        mask_path = os.fspath(mask)
    elif use_mask:
        if entry is not None and entry.get("mask"):
            mask_path = os.path.join(folder, *entry["mask"].split("/"))
        else:
            stem, ext = os.path.splitext(path)
            if os.path.isfile(f"{stem}.mask{ext}"):
                mask_path = f"{stem}.mask{ext}"
    m = None
    if mask_path is not None:
        try:
            m = np.fromfile(mask_path, np.uint8)
        except OSError as exc:
            raise GoldenError(f"cannot read {mask_path}: {exc.strerror}") from None
        if (mask is None and entry is not None and check_sha256 and entry.get("mask_sha256")
                and sha256_file(mask_path) != entry["mask_sha256"]):
            raise GoldenError(f"{mask_path} does not match its manifest (sha256 differs): the golden folder was "
                              "changed after fastcopy wrote it; re-run the case")
    return Golden(path, data, dt, shape, m, mask_path, entry, folder, manifest)
