"""The golden-data folder, in the layout of the Ascend C examples::

    DIR/input/<name>.bin           every GM buffer with an input (raw ``tofile`` bytes, C order)
    DIR/output/golden.bin          the output, when the case has one
    DIR/output/golden.mask.bin     one uint8 per element: 1 = defined, 0 = the hardware leaves it undefined
    DIR/output/<name>.bin          (+ <name>.mask.bin) for each output, when the case has several
    DIR/manifest.json              versions, product, seed, every buffer's dtype/shape/sha256, the ops

Nothing time- or machine-dependent goes into the manifest: the same case and seed give byte-identical folders.
"""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np

from ..dtypes import ascend_name

MANIFEST_FORMAT = 1


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(path: str, data: bytes) -> None:
    try:
        fh = open(path, "wb")
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fh = open(path, "wb")
    with fh:
        fh.write(data)


def _versions() -> dict:
    import ml_dtypes

    from .. import __version__

    return {"fastcopy": __version__, "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__}


def _entry(name, role, arr: np.ndarray, file: str, data: bytes, **extra) -> dict:
    e = {"name": name, "role": role, "dtype": ascend_name(arr.dtype), "numpy_dtype": str(arr.dtype),
         "shape": list(arr.shape), "file": file, "bytes": len(data), "sha256": _sha256(data)}
    e.update(extra)
    return e


def write_result(result, directory: str) -> dict:
    """Write a :class:`fastcopy.golden.engine.Result` into ``directory``; return the manifest."""
    prog = result.program
    outs = {o.buffer: o for o in prog.outputs}
    for sub in ({"input"} if result.inputs else set()) | {os.path.dirname(o.file) for o in prog.outputs}:
        os.makedirs(os.path.join(directory, sub), exist_ok=True)
    entries, files = [], []
    for buf in prog.buffers:
        if buf.name in result.inputs:
            arr = result.inputs[buf.name]
            data = arr.tobytes()
            rel = f"input/{buf.file}.bin"
            _write(os.path.join(directory, rel), data)
            files.append(rel)
            entries.append(_entry(buf.name, "input", arr, rel, data, position="GM", init=_init_record(buf.init)))
        if buf.name in outs:
            o = outs[buf.name]
            arr, mask = result.outputs[buf.name]
            data, mbytes = arr.tobytes(), mask.tobytes()
            _write(os.path.join(directory, o.file), data)
            _write(os.path.join(directory, o.mask), mbytes)
            files += [o.file, o.mask]
            extra = {"position": buf.position, "mask": o.mask, "mask_sha256": _sha256(mbytes),
                     "elements": int(mask.size), "defined": int(np.count_nonzero(mask))}
            if not buf.gm:
                extra["buffer"], extra["addr"] = result.placement[buf.name]
            entries.append(_entry(buf.name, "output", arr, o.file, data, **extra))
        if not buf.gm and buf.name not in outs:
            phys, addr = result.placement[buf.name]
            entries.append({"name": buf.name, "role": "local", "dtype": buf.dtype,
                            "numpy_dtype": str(buf.np_dtype), "shape": list(buf.shape), "position": buf.position,
                            "buffer": phys, "addr": addr, **({"init": _init_record(buf.init)} if buf.init else {})})
        elif buf.gm and buf.name not in outs and buf.name not in result.inputs:
            entries.append({"name": buf.name, "role": "scratch", "dtype": buf.dtype,
                            "numpy_dtype": str(buf.np_dtype), "shape": list(buf.shape), "position": "GM"})
    manifest = {
        "format": MANIFEST_FORMAT,
        **_versions(),
        "case": {"name": prog.name, "file": os.path.basename(prog.file), "sha256": prog.source_sha256,
                 "point": prog.index, "values": prog.values},
        "description": prog.description,
        "product": prog.product,
        "product_name": _product_name(prog.product),
        "seed": prog.seed,
        "seed_source": prog.seed_source,
        "poison": prog.poison,
        "buffers": entries,
        "ops": [_op_record(op, result.warnings.get(op.index, [])) for op in prog.ops],
        "files": files + ["manifest.json"],
    }
    _write_manifest(directory, manifest)
    return manifest


def manifest_text(manifest: dict) -> str:
    """JSON with one top-level key per line and one buffer / op per line (readable, and fast to write)."""

    def dumps(v):
        return json.dumps(v, ensure_ascii=False, default=_json_default)

    lines = []
    for k, v in manifest.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            inner = ",\n".join(f"  {dumps(x)}" for x in v)
            lines.append(f" {dumps(k)}: [\n{inner}\n ]")
        else:
            lines.append(f" {dumps(k)}: {dumps(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _write_manifest(directory: str, manifest: dict) -> None:
    _write(os.path.join(directory, "manifest.json"), manifest_text(manifest).encode("utf-8"))


def _json_default(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    return str(v)


def _product_name(name: str) -> str:
    from ..products import Product

    return Product.get(name).display_name


def _init_record(init: dict | None):
    if init is None:
        return None
    rec = {k: v for k, v in init.items() if k != "path"}
    if "given" in rec:
        rec["path"] = rec.pop("given")
    return rec


def _op_record(op, warns) -> dict:
    rec = {"api": op.api}
    if op.dst is not None:
        rec["dst"], rec["src"] = str(op.dst), str(op.src)
    if op.dtype:
        rec["dtype"] = op.dtype
    rec["params"] = op.params_dict()
    if op.note:
        rec["note"] = op.note
    rec["warnings"] = list(warns)
    return rec


# --------------------------------------------------------------------------------------------- Python path
def write_golden(directory: str, inputs: dict, outputs: dict, *, product=None, seed=None, name: str = "golden",
                 description: str = "", ops=()) -> dict:
    """Write a golden folder from a program built in Python with the tensor API.

    ``inputs``: name -> array (written to ``input/<name>.bin``). ``outputs``: name -> GlobalTensor / LocalTensor
    (data and definedness taken from it) or ``(array, defined_mask)`` or a plain array (all defined). One output
    goes to ``output/golden.bin``, several to ``output/<name>.bin``; masks beside them. ``ops``: free-form
    records for the manifest (e.g. ``[{"api": "DataCopy", "params": {"count": 512}}]``). Returns the manifest.
    """
    from ..products import Product

    entries, files = [], []
    for nm, arr in inputs.items():
        arr = np.ascontiguousarray(arr)
        data = arr.tobytes()
        rel = f"input/{nm}.bin"
        _write(os.path.join(directory, rel), data)
        files.append(rel)
        entries.append(_entry(nm, "input", arr, rel, data, position="GM"))
    for nm, out in outputs.items():
        arr, mask = _output_arrays(out)
        base = "golden" if len(outputs) == 1 else nm
        rel, mrel = f"output/{base}.bin", f"output/{base}.mask.bin"
        data, mbytes = arr.tobytes(), mask.tobytes()
        _write(os.path.join(directory, rel), data)
        _write(os.path.join(directory, mrel), mbytes)
        files += [rel, mrel]
        entries.append(_entry(nm, "output", arr, rel, data, mask=mrel, mask_sha256=_sha256(mbytes),
                              elements=int(mask.size), defined=int(np.count_nonzero(mask))))
    prod = Product.get(product) if product is not None else None
    manifest = {
        "format": MANIFEST_FORMAT,
        **_versions(),
        "case": {"name": name, "file": None, "sha256": "", "point": None, "values": {}},
        "description": description,
        "product": prod.name if prod else None,
        "product_name": prod.display_name if prod else None,
        "seed": seed,
        "seed_source": "python" if seed is not None else None,
        "buffers": entries,
        "ops": list(ops),
        "files": files + ["manifest.json"],
    }
    _write_manifest(directory, manifest)
    return manifest


def _output_arrays(out):
    from ..memory import _Tensor

    if isinstance(out, _Tensor):
        data = np.array(out.numpy(), copy=True)
        return data, np.asarray(out.defined()).reshape(data.shape).astype(np.uint8)
    if isinstance(out, tuple):
        data, mask = np.ascontiguousarray(out[0]), np.asarray(out[1])
        if mask.size != data.size:
            raise ValueError(f"write_golden: mask has {mask.size} elements, the data {data.size}")
        return data, mask.reshape(data.shape).astype(np.uint8)
    data = np.ascontiguousarray(out)
    return data, np.ones(data.shape, np.uint8)
