"""``--resume``: is a sweep point's golden folder already complete, for this case text and this point?

A folder counts as done when its ``manifest.json`` parses, names the same case text (sha256 of the case file), the
same point number and parameter values, the same seed source (a ``--seed`` override must match), and every file
it lists exists with the size it records. The writer puts the manifest in last (and swaps whole folders in), so a
manifest is only ever present beside complete files; the size check also catches files changed by hand
afterwards. Contents are not re-hashed (that would cost as much as writing them); ``fastcopy verify`` does that.
"""

from __future__ import annotations

import json
import os

from .files import MANIFEST_FORMAT


def expected_case_record(case, index: int) -> dict:
    """What ``manifest["case"]`` holds for point ``index`` of ``case`` (without compiling the point)."""
    return {"sha256": case.sha256, "point": index if case.is_sweep else None,
            "values": case.values(index) if case.is_sweep else {}}


def is_complete(directory: str, case, index: int) -> bool:
    """True when ``directory`` holds the finished golden folder of point ``index`` of ``case``."""
    try:
        with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT or not case.sha256:
        return False
    got = manifest.get("case") or {}
    want = expected_case_record(case, index)
    if any(got.get(k) != v for k, v in want.items()):
        return False
    if case.seed is not None:
        if (manifest.get("seed"), manifest.get("seed_source")) != (case.seed, "command line"):
            return False
    elif manifest.get("seed_source") == "command line":
        return False
    sizes = {}
    for b in manifest.get("buffers", ()):
        if isinstance(b, dict) and "file" in b:
            sizes[b["file"]] = b.get("bytes")
            if "mask" in b:
                sizes[b["mask"]] = b.get("elements")  # one uint8 per element
    for rel in manifest.get("files", ()):
        if not isinstance(rel, str) or os.path.isabs(rel) or ".." in rel.split("/"):
            return False
        try:
            size = os.stat(os.path.join(directory, *rel.split("/"))).st_size
        except OSError:
            return False
        if sizes.get(rel) is not None and size != sizes[rel]:
            return False
    return True
