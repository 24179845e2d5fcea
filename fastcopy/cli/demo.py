"""``fastcopy demo``: the main job on a built-in case: ND2NZ of a small matrix (basic DataCopy if ND2NZ is not
available in this build), run through the case engine into a folder, then a look at what was written."""

from __future__ import annotations

import os
import tempfile

import numpy as np

from .cases import DEMO_DATACOPY, DEMO_ND2NZ


def _run(text: str, out_dir: str):
    from ..golden import load_case_text, run_program, write_result

    case = load_case_text(text, file="<fastcopy demo>")
    return write_result(run_program(case.point(0)), out_dir)


def _show(values: np.ndarray, mask: np.ndarray) -> str:
    """The array with undefined elements shown as ``--``."""
    shown = np.where(mask.astype(bool), values.astype(np.float64), np.nan)
    text = np.array2string(shown, threshold=200, edgeitems=3, max_line_width=110,
                           formatter={"float_kind": lambda v: "  --" if np.isnan(v) else f"{v:4.0f}"})
    return text


def run_demo(output: str | None = None) -> int:
    """Run the demo case into ``output`` (kept), or into a temporary folder removed at the end."""
    if output is not None:
        return _demo(output, keep=True)
    with tempfile.TemporaryDirectory(prefix="fastcopy-demo-") as tmp:
        return _demo(os.path.join(tmp, "demo"), keep=False)


def _demo(out_dir: str, keep: bool) -> int:
    from ..golden import CaseRunError
    from .run import describe_files

    note = ""
    try:
        manifest = _run(DEMO_ND2NZ, out_dir)
    except CaseRunError as exc:
        if not isinstance(exc.cause, NotImplementedError):
            raise
        note = "(ND2NZ is not available in this build: showing basic DataCopy instead)"
        manifest = _run(DEMO_DATACOPY, out_dir)
    print(f"fastcopy demo: {manifest['description']} on {manifest['product_name']}")
    if note:
        print(note)
    print(f"\nwrote {out_dir}:")
    print("\n".join(describe_files(out_dir, manifest)))
    for b in manifest["buffers"]:
        if "file" not in b:
            continue
        data = np.fromfile(os.path.join(out_dir, b["file"]), np.dtype(b["numpy_dtype"])).reshape(b["shape"])
        if b["role"] == "input":
            print(f"\n{b['file']} ({b['name']}, {b['dtype']}{b['shape']}):")
            print(_show(data, np.ones(data.shape, np.uint8)))
        else:
            mask = np.fromfile(os.path.join(out_dir, b["mask"]), np.uint8).reshape(b["shape"])
            print(f"\n{b['file']} ({b['name']}, {b['dtype']}{b['shape']}; -- = undefined, "
                  f"{b['elements'] - b['defined']} of {b['elements']} elements):")
            print(_show(data, mask))
    if keep:
        print(f"\ncompare a kernel's output with: fastcopy verify <output.bin> {out_dir}")
    else:
        print("\n(the folder was temporary and is removed now: fastcopy demo -o DIR keeps it; then compare a "
              "kernel's output with: fastcopy verify <output.bin> DIR)")
    return 0
