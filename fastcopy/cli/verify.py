"""``fastcopy verify OUTPUT GOLDEN [--dtype T] [--rtol R --atol A]``: a drop-in for ``verify_result.py``.

Exit status like ``cmp``: 0 equal, 1 different, 2 trouble (unreadable file, unknown dtype, a golden that does not
match its manifest, nothing to compare).
"""

from __future__ import annotations

import sys

import numpy as np

PASS, DIFFERENT, TROUBLE = 0, 1, 2


def parse_shape(tokens) -> tuple:
    """``["32", "64"]``, ``["32x64"]`` or ``["32,64"]`` -> (32, 64); every dimension a positive integer."""
    dims = [t for tok in tokens for t in tok.replace("x", ",").split(",") if t.strip()]
    out = []
    for d in dims:
        try:
            v = int(d)
        except ValueError:
            raise ValueError(f"--shape {' '.join(tokens)}: {d!r} is not an integer") from None
        if v < 1:
            raise ValueError(f"--shape {' '.join(tokens)}: {v} is not a positive dimension")
        out.append(v)
    if not out:
        raise ValueError("--shape: no dimensions given")
    return tuple(out)


def dtype_of(name: str):
    """A dtype from a name, with a did-you-mean for near misses."""
    import difflib

    from ..dtypes import ASCEND_DTYPES, as_dtype
    from ..errors import FastCopyError

    try:
        return as_dtype(name)
    except FastCopyError:
        close = difflib.get_close_matches(name, list(ASCEND_DTYPES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown dtype {name!r}{hint}; expected an Ascend C type ({', '.join(ASCEND_DTYPES)}) "
                         "or a numpy name") from None


def main_verify(args) -> int:
    from ..dtypes import ascend_name
    from ..errors import FastCopyError
    from ..golden.load import open_golden
    from ..golden.verify import compare, report

    def trouble(msg):
        print(f"fastcopy verify: {msg}", file=sys.stderr)
        return TROUBLE

    try:
        dt = dtype_of(args.dtype) if args.dtype is not None else None
        shape = parse_shape(args.shape) if args.shape else None
    except ValueError as exc:
        return trouble(str(exc))
    try:
        g = open_golden(args.golden, buffer=args.buffer, dtype=dt, mask=args.mask, use_mask=not args.no_mask)
    except FastCopyError as exc:
        return trouble(str(exc))
    if g.dtype is None:
        return trouble("give --dtype (no manifest.json of a fastcopy golden folder describes the golden file)")
    shape = shape or g.shape
    from ..testing import tolerances

    rtol, atol, rule = tolerances(g.tolerance, args.rtol, args.atol, args.compare)
    try:
        actual = np.fromfile(args.output, np.uint8)
    except OSError as exc:
        return trouble(f"cannot read {args.output}: {exc.strerror}")
    context = {"entry": g.entry, "folder": g.folder, "manifest": g.manifest}
    try:
        cmp = compare(actual, g.data, g.dtype, g.mask, shape, args.max_report, rtol=rtol, atol=atol, rule=rule,
                      context=context)
    except FastCopyError as exc:
        return trouble(str(exc))
    where = f"{args.output} vs {g.path} ({ascend_name(g.dtype)}"
    where += f", shape {shape}" if shape else ""
    where += f", mask {g.mask_path})" if g.mask_path else ", no mask)"
    print(f"fastcopy verify: {where}")
    text = report(cmp, args.max_report)
    if cmp.trouble:  # not a verdict on the data: trouble goes to stderr
        print(f"fastcopy verify: {text}", file=sys.stderr)
        return TROUBLE
    print(text)  # the verdict (like cmp, on stdout)
    return PASS if cmp.ok else DIFFERENT
