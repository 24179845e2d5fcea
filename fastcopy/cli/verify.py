"""``fastcopy verify OUTPUT GOLDEN --dtype T [--mask MASK] [--shape ...]``: a drop-in for ``verify_result.py``."""

from __future__ import annotations

import json
import os
import sys

import numpy as np


def find_manifest_entry(golden: str):
    """(manifest folder, buffer entry) of a fastcopy golden folder that wrote ``golden``, or (None, None)."""
    path = os.path.abspath(golden)
    folder = os.path.dirname(path)
    for _ in range(3):
        mf = os.path.join(folder, "manifest.json")
        if os.path.isfile(mf):
            try:
                with open(mf, encoding="utf-8") as fh:
                    manifest = json.load(fh)
            except (OSError, ValueError):
                return None, None
            rel = os.path.relpath(path, folder).replace(os.sep, "/")
            for b in manifest.get("buffers", []):
                if b.get("file") == rel:
                    return folder, b
            return None, None
        folder = os.path.dirname(folder)
    return None, None


def _shape(tokens):
    dims = [t for tok in tokens for t in tok.replace("x", ",").split(",") if t.strip()]
    return tuple(int(d) for d in dims)


def main_verify(args) -> int:
    from ..dtypes import as_dtype, ascend_name
    from ..errors import FastCopyError
    from ..golden.verify import compare, report

    def fail(msg):
        print(f"fastcopy verify: FAIL: {msg}", file=sys.stderr)
        return 1

    folder, entry = find_manifest_entry(args.golden)
    try:
        if args.dtype is not None:
            dt = as_dtype(args.dtype)
        elif entry is not None:
            dt = as_dtype(entry["dtype"])
        else:
            return fail("give --dtype (no manifest.json of a fastcopy golden folder describes the golden file)")
    except FastCopyError as exc:
        return fail(str(exc))
    try:
        shape = _shape(args.shape) if args.shape else (tuple(entry["shape"]) if entry is not None and args.dtype
                                                      is None else None)
    except ValueError:
        return fail(f"--shape {' '.join(args.shape)}: expected integers")
    mask_path = None
    if args.mask:
        mask_path = args.mask
    elif not args.no_mask:
        if entry is not None and entry.get("mask"):
            mask_path = os.path.join(folder, entry["mask"])
        else:
            stem, ext = os.path.splitext(args.golden)
            if os.path.isfile(f"{stem}.mask{ext}"):
                mask_path = f"{stem}.mask{ext}"
    try:
        actual = np.fromfile(args.output, np.uint8)
        expected = np.fromfile(args.golden, np.uint8)
        mask = np.fromfile(mask_path, np.uint8) if mask_path else None
    except OSError as exc:
        return fail(f"cannot read {exc.filename}: {exc.strerror}")
    cmp = compare(actual, expected, dt, mask, shape, args.max_report)
    where = f"{args.output} vs {args.golden} ({ascend_name(dt)}"
    where += f", shape {shape}" if shape else ""
    where += f", mask {mask_path})" if mask_path else ", no mask)"
    print(f"fastcopy verify: {where}")
    print(report(cmp, args.max_report))
    return 0 if cmp.ok else 1
