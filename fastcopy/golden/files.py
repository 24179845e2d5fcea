"""The golden-data folder, in the layout of the Ascend C examples::

    DIR/input/<name>.bin           every GM buffer with an input (raw ``tofile`` bytes, C order)
    DIR/output/golden.bin          the output, when the case has one
    DIR/output/golden.mask.bin     one uint8 per element: 1 = defined, 0 = the hardware leaves it undefined
    DIR/output/<name>.bin          (+ <name>.mask.bin) for each output, when the case has several
    DIR/manifest.json              versions, product, seed, every buffer's dtype/shape/sha256, the ops

Nothing time- or machine-dependent goes into the manifest: the same case and seed give byte-identical folders.
"""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache

import numpy as np

from ..dtypes import ascend_name
from .store import (FolderWriter, GoldenWriteError, check_collisions, checked_before, safe_component, sha256_of,
                    write_folder)

MANIFEST_FORMAT = 1


@lru_cache(maxsize=None)
def _versions() -> dict:
    import ml_dtypes

    from .. import __version__

    return {"fastcopy": __version__, "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__}


@lru_cache(maxsize=None)
def _dtype_names(dt: np.dtype) -> tuple:
    return ascend_name(dt), str(dt)


def _entry(name, role, arr: np.ndarray, file: str, sha: str | None = None, **extra) -> dict:
    """A buffer's manifest entry (``sha``: the sha256 of its bytes, when already known)."""
    dtype, numpy_dtype = _dtype_names(arr.dtype)
    e = {"name": name, "role": role, "dtype": dtype, "numpy_dtype": numpy_dtype,
         "shape": list(arr.shape), "file": file, "bytes": int(arr.nbytes),
         "sha256": sha256_of(arr) if sha is None else sha}
    e.update(extra)
    return e


def result_files(prog) -> list:
    """Every file (relative path) a program writes, manifest included, in writing order."""
    files = [f"input/{b.file}.bin" for b in prog.buffers if b.gm and b.init is not None]
    for o in prog.outputs:
        files += [o.file, o.mask]
    return files + ["manifest.json"]


def write_result(result, directory: str, allow_empty: bool = False) -> dict:
    """Write a :class:`fastcopy.golden.engine.Result` as the golden folder ``directory`` (replacing it as a whole;
    see :mod:`fastcopy.golden.store`); return the manifest. An output with no defined element is an error
    (:class:`CaseRunError`) unless ``allow_empty``."""
    return _write_result(result, directory, allow_empty, True)


def write_point(result, directory: str) -> None:
    """:func:`write_result` as a batch writes a point: the same folder, byte for byte, without building the
    manifest's dicts (nothing reads them: the file's text is made without them)."""
    _write_result(result, directory, False, False)


def _write_result(result, directory: str, allow_empty: bool, want: bool):
    """The folder of ``result``: every file's bytes and sha256, and the manifest's text made piece by piece (the
    text :func:`manifest_text` makes of the manifest, without its dicts: see :func:`_text`); then the whole
    folder written in one go (nothing is written before all of it is known). Returns the manifest when ``want``."""
    prog = result.program
    if not allow_empty:
        result.check()
    outs = {o.buffer: o for o in prog.outputs}
    inputs, outputs, placement = result.inputs, result.outputs, result.placement
    data, files, texts, entries = [], [], [], [] if want else None
    for buf in prog.buffers:
        name = buf.name
        if name in inputs:
            arr = inputs[name]
            rel = f"input/{buf.file}.bin"
            sha = sha256_of(arr)
            data.append((rel, arr))
            files.append(rel)
            init = _init_record(buf.init)
            texts.append(f'{{"name": {_text(name)}, "role": "input", {_dtype_text(arr.dtype)}, "shape": '
                         f'{_shape_text(arr.shape)}, "file": {_text(rel)}, "bytes": {arr.nbytes}, "sha256": '
                         f'{_text(sha)}, "position": "GM", "init": {_text(init)}}}')
            if want:
                entries.append(_entry(name, "input", arr, rel, sha, position="GM", init=init))
        if name in outs:
            o = outs[name]
            arr, mask = outputs[name]
            sha, msha = sha256_of(arr), sha256_of(mask)
            data += [(o.file, arr), (o.mask, mask)]
            files += [o.file, o.mask]
            defined = result.defined.get(name)
            if defined is None:
                defined = int(np.count_nonzero(mask))
            extra = {"position": buf.position, "mask": o.mask, "mask_sha256": msha, "elements": int(mask.size),
                     "defined": defined}
            extra.update(o.record())
            if not buf.gm:
                extra["buffer"], extra["addr"] = placement[name]
            texts.append(f'{{"name": {_text(name)}, "role": "output", {_dtype_text(arr.dtype)}, "shape": '
                         f'{_shape_text(arr.shape)}, "file": {_text(o.file)}, "bytes": {arr.nbytes}, "sha256": '
                         f'{_text(sha)}, {_dumps(extra)[1:]}')
            if want:
                entries.append(_entry(name, "output", arr, o.file, sha, **extra))
        if not buf.gm and name not in outs:
            phys, addr = placement[name]
            numpy_dtype = _dtype_names(buf.np_dtype)[1]
            init = _init_record(buf.init) if buf.init else None
            texts.append(f'{{"name": {_text(name)}, "role": "local", "dtype": {_text(buf.dtype)}, "numpy_dtype": '
                         f'{_text(numpy_dtype)}, "shape": {_shape_text(buf.shape)}, "position": '
                         f'{_text(buf.position)}, "buffer": {_text(phys)}, "addr": {_text(addr)}'
                         + (f', "init": {_text(init)}}}' if buf.init else "}"))
            if want:
                entries.append({"name": name, "role": "local", "dtype": buf.dtype, "numpy_dtype": numpy_dtype,
                                "shape": list(buf.shape), "position": buf.position, "buffer": phys, "addr": addr,
                                **({"init": init} if buf.init else {})})
        elif buf.gm and name not in outs and name not in inputs:
            entry = {"name": name, "role": "scratch", "dtype": buf.dtype,
                     "numpy_dtype": _dtype_names(buf.np_dtype)[1], "shape": list(buf.shape), "position": "GM"}
            texts.append(_dumps(entry))
            if want:
                entries.append(entry)
    files.append("manifest.json")
    if not checked_before(files):  # (the files this point writes: checked once per distinct list)
        check_collisions(result_files(prog), f"{prog.file}: ")  # (the program's list first: its errors)
        check_collisions(files, f"{prog.file}: ")
    head = (prog.description, prog.product, prog.seed, prog.seed_source, prog.poison, type(prog.seed),
            type(prog.poison))  # (types too: a line for 1 is not a line for true)
    extras = program_extras(prog)
    warns = result.warnings
    ops = [(op, warns.get(op.index, [])) for op in prog.ops]
    notes = list(result.notes)
    # the text manifest_text(manifest) gives; its lines that are the same at every point of a case made once
    lines = [_HEAD_LINES[0] or _head_lines(0, {"format": MANIFEST_FORMAT, **_versions()}),
             _case_line(prog),
             _HEAD_LINES.get(head) or _head_lines(head, {"description": head[0], "product": head[1],
                                                         "product_name": _product_name(head[1]),
                                                         "seed": head[2], "seed_source": head[3],
                                                         "poison": head[4]})]
    lines += [_line(k, v) for k, v in extras.items()]
    lines.append(_list_line(' "buffers": [', texts))
    lines.append(_list_line(' "ops": [', [_op_text(op, w) for op, w in ops]))
    if notes:
        lines.append(_line("warnings", notes))
    lines.append(_line("files", files))
    data.append(("manifest.json", ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")))
    write_folder(directory, data)
    if not want:
        return None
    case = {"name": prog.name, "file": os.path.basename(prog.file), "sha256": prog.source_sha256,
            "point": prog.index, "values": prog.values}
    return {"format": MANIFEST_FORMAT, **_versions(), "case": case, "description": head[0],
            "product": head[1], "product_name": _product_name(head[1]), "seed": head[2],
            "seed_source": head[3], "poison": head[4], **extras, "buffers": entries,
            "ops": [_op_record(op, w) for op, w in ops], **({"warnings": notes} if notes else {}), "files": files}


# The manifest's text without its dicts: each piece is the text the JSON encoder (``_dumps``, as manifest_text
# uses it) writes for the same value; ints, strings and dicts of them are written here, anything else by the
# encoder (tests/test_batch_stages.py compares the two on every example and on values of every JSON type).
def _text(v) -> str:
    """``_dumps(v)``, for ints, strings and finite floats without the encoder's per-call cost."""
    t = type(v)
    if t is int:
        return int.__repr__(v)
    if t is str:
        return _encode_string(v)
    if t is float and math.isfinite(v):
        return float.__repr__(v)
    return _dumps(v)


def _list_line(head: str, texts: list) -> str:
    """A top-level line holding a list of objects, one a line (what :func:`_line` writes for ``buffers`` and
    ``ops``), from the objects' texts; ``head``: ``' "key": ['``."""
    if not texts:
        return head + "]"
    return head + "\n  " + ",\n  ".join(texts) + "\n ]"


@lru_cache(maxsize=256)
def _dtype_text(dt: np.dtype) -> str:
    """The ``"dtype": ..., "numpy_dtype": ...`` pair of a buffer entry of an array of ``dt``."""
    dtype, numpy_dtype = _dtype_names(dt)
    return f'"dtype": {_dumps(dtype)}, "numpy_dtype": {_dumps(numpy_dtype)}'


def _shape_text(shape: tuple) -> str:
    """``_dumps(list(shape))`` of an array's shape (kept: a sweep's shapes repeat)."""
    text = _SHAPES.get(shape)
    if text is None:
        if len(_SHAPES) >= 4096:
            _SHAPES.clear()
        text = _SHAPES[shape] = _dumps(list(shape))
    return text


_SHAPES: dict = {}


def _case_line(prog) -> str:
    """The manifest's ``"case"`` line (name, file, sha256 kept per case; point and values per point)."""
    key = (prog.name, prog.file, prog.source_sha256)
    head = _CASE_HEADS.get(key)
    if head is None:
        if len(_CASE_HEADS) >= 1024:
            _CASE_HEADS.clear()
        head = _CASE_HEADS[key] = _dumps({"name": prog.name, "file": os.path.basename(prog.file),
                                          "sha256": prog.source_sha256})[:-1]
    return f' "case": {head}, "point": {_text(prog.index)}, "values": {_text(prog.values)}}}'


_CASE_HEADS: dict = {}


def _op_text(op, warns) -> str:
    """``_dumps(_op_record(op, warns))``."""
    parts = [f'{{"api": {_text(op.api)}']
    if op.path and op.path != f"ops[{op.index}]":
        parts.append(f'"at": {_text(op.path)}')
    if op.env:
        parts.append(f'"env": {_dumps(dict(op.env))}')
    if op.dst is not None:
        parts.append(f'"dst": {_text(str(op.dst))}, "src": {_text(str(op.src))}')
    for key, ref, _ in getattr(op, "operands", ()):
        parts.append(f'{_text(key)}: {_text(str(ref))}')
    if op.dtype:
        parts.append(f'"dtype": {_text(op.dtype)}')
    parts.append(f'"params": {_dumps(op.params_dict())}')
    if op.note:
        parts.append(f'"note": {_text(op.note)}')
    parts.append(f'"warnings": {_dumps(list(warns)) if warns else "[]"}}}')
    return ", ".join(parts)


_HEAD_LINES: dict = {0: None}  # 0: the format and versions lines; (description, ..., poison): the case's lines


def _head_lines(key, part: dict) -> str:
    """The manifest lines of ``part`` (top-level keys whose values are the same at every point), joined, kept."""
    if len(_HEAD_LINES) >= 4096:
        _HEAD_LINES.clear()
        _HEAD_LINES[0] = None
    text = _HEAD_LINES[key] = ",\n".join(_line(k, v) for k, v in part.items())
    return text


def program_extras(prog) -> dict:
    """Manifest keys of the newer case features (only when used, so older manifests stay the same)."""
    out = {}
    if getattr(prog, "blocks", 1) > 1:
        out["blocks"] = prog.blocks
    return out


def manifest_text(manifest: dict) -> str:
    """JSON with one top-level key per line and one buffer / op per line (readable, and fast to write)."""

    return "{\n" + ",\n".join([_line(k, v) for k, v in manifest.items()]) + "\n}\n"


def _line(k: str, v) -> str:
    """The manifest line of top-level key ``k`` (see :func:`manifest_text`)."""
    t = type(v)
    if t is str or t is int or t is bool or v is None:  # (the same in every point of a case: kept)
        lk = (k, t, v)
    elif t is list and v and all(type(x) is str for x in v):  # (a file list: the same in every point, kept)
        lk = (k, tuple(v))
    else:
        lk = None
    dumps = _dumps
    if lk is not None:
        line = _LINES.get(lk)
        if line is None:
            if len(_LINES) >= 4096:
                _LINES.clear()
            line = _LINES[lk] = f" {dumps(k)}: {dumps(v)}"
        return line
    key = _KEYS.get(k) or _KEYS.setdefault(k, dumps(k))
    if t is list and v and all(type(x) is dict for x in v):
        inner = ",\n  ".join(map(dumps, v))
        return f" {key}: [\n  {inner}\n ]"
    return f" {key}: {dumps(v)}"


def _json_default(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return float(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    return str(v)


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_json_default)


def _c_dumps():
    """``_ENCODER.encode`` without its per-call set-up: the C encoder it builds on each call, built once (the
    same function, options and output; json's own Python encoder when the C one is missing)."""
    from json import encoder as je

    make = getattr(je, "c_make_encoder", None)
    if make is None:
        return _ENCODER.encode
    enc = make(None, _json_default, je.encode_basestring, None, ": ", ", ", False, False, True)

    def dumps(v) -> str:
        if isinstance(v, str):
            return je.encode_basestring(v)
        return "".join(enc(v, 0))

    return dumps


_dumps = _c_dumps()
_encode_string = json.encoder.encode_basestring  # (ensure_ascii=False: what the encoder writes for a str)
_KEYS: dict = {}  # top-level manifest key -> its JSON text
_LINES: dict = {}  # (top-level key, type, str / int / bool / None value) -> its line of the manifest


@lru_cache(maxsize=None)
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
    if op.path and op.path != f"ops[{op.index}]":
        rec["at"] = op.path  # inside a loop: where in the case file
    if op.env:
        rec["env"] = dict(op.env)  # the loop variables (and block_idx) at this op
    if op.dst is not None:
        rec["dst"], rec["src"] = str(op.dst), str(op.src)
    for key, ref, _ in getattr(op, "operands", ()):  # Mmad's b / bias, Fixpipe's workspace / dst1, ...
        rec[key] = str(ref)
    if op.dtype:
        rec["dtype"] = op.dtype
    rec["params"] = op.params_dict()
    if op.note:
        rec["note"] = op.note
    rec["warnings"] = list(warns)
    return rec


# --------------------------------------------------------------------------------------------- Python path
def write_golden(directory: str, inputs: dict, outputs: dict, *, product=None, seed=None, name: str = "golden",
                 description: str = "", ops=(), allow_undefined=False) -> dict:
    """Write a golden folder from a program built in Python with the tensor API.

    ``inputs``: name -> array (written to ``input/<name>.bin``). ``outputs``: name -> GlobalTensor / LocalTensor
    (data and definedness taken from it) or ``(array, defined_mask)`` or a plain array (all defined). One output
    goes to ``output/golden.bin``, several to ``output/<name>.bin``; masks beside them. ``ops``: free-form
    records for the manifest (e.g. ``[{"api": "DataCopy", "params": {"count": 512}}]``). Returns the manifest.

    An output with no defined element is an error (a CopyOut forgotten, or values written through ``.numpy()``
    without :meth:`set_defined`; write computed values with ``tensor[...] = values``, which marks them defined).
    An output with some undefined elements gives a :class:`FastCopyWarning` unless ``allow_undefined`` is True
    (or a collection of the output names that may have them). The folder is replaced as a whole, atomically.
    """
    from ..errors import warn
    from ..products import Product

    for nm in list(inputs) + list(outputs):
        if not isinstance(nm, str) or safe_component(nm) != nm:
            raise GoldenWriteError(f"write_golden: {nm!r} is not a plain file name (letters, digits, _ . -)")
    rels = [f"input/{nm}.bin" for nm in inputs]
    bases = {nm: ("golden" if len(outputs) == 1 else nm) for nm in outputs}
    for nm in outputs:
        rels += [f"output/{bases[nm]}.bin", f"output/{bases[nm]}.mask.bin"]
    check_collisions(rels + ["manifest.json"], "write_golden: ")
    arrays = {}
    for nm, out in outputs.items():
        arr, mask = _output_arrays(out)
        defined = int(np.count_nonzero(mask))
        if mask.size and not defined:
            raise GoldenWriteError(f"write_golden: output {nm!r} has no defined element (was it never written? "
                                   "values written through .numpy() are not marked defined: write them with "
                                   "tensor[...] = values, or call set_defined())")
        allowed = allow_undefined is True or (not isinstance(allow_undefined, bool) and nm in allow_undefined)
        if defined < mask.size and not allowed:
            warn(f"write_golden: output {nm!r} has {mask.size - defined} undefined of {mask.size} elements "
                 "(pass allow_undefined=True when the kernel leaves them unwritten on purpose)")
        arrays[nm] = (arr, mask, defined)
    entries, files = [], []
    with FolderWriter(directory) as w:
        for nm, arr in inputs.items():
            arr = np.ascontiguousarray(arr)
            rel = f"input/{nm}.bin"
            w.write(rel, arr)
            files.append(rel)
            entries.append(_entry(nm, "input", arr, rel, position="GM"))
        for nm, (arr, mask, defined) in arrays.items():
            rel, mrel = f"output/{bases[nm]}.bin", f"output/{bases[nm]}.mask.bin"
            w.write(rel, arr)
            w.write(mrel, mask)
            files += [rel, mrel]
            entries.append(_entry(nm, "output", arr, rel, mask=mrel, mask_sha256=sha256_of(mask),
                                  elements=int(mask.size), defined=defined))
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
        w.write("manifest.json", manifest_text(manifest).encode("utf-8"))
    return manifest


def _output_arrays(out):
    from ..memory import _Tensor

    if isinstance(out, _Tensor):
        data = np.ascontiguousarray(out.numpy())
        return data, _mask_u8(out.defined()).reshape(data.shape)
    if isinstance(out, tuple):
        data, mask = np.ascontiguousarray(out[0]), np.asarray(out[1])
        if mask.size != data.size:
            raise ValueError(f"write_golden: mask has {mask.size} elements, the data {data.size}")
        return data, _mask_u8(mask).reshape(data.shape)
    data = np.ascontiguousarray(out)
    return data, np.ones(data.shape, np.uint8)


def _mask_u8(mask) -> np.ndarray:
    """A definedness mask as uint8 0/1 (a bool mask is viewed, not copied)."""
    m = np.ascontiguousarray(mask)
    if m.dtype == np.bool_:
        return m.view(np.uint8)
    return (m != 0).view(np.uint8)
