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
import math
import os
from functools import lru_cache

import numpy as np

from .. import config
from ..dtypes import ascend_name
from .store import (FolderWriter, GoldenWriteError, check_collisions, checked_before, mask_sha256, safe_component,
                    sha256_of, write_folder)

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


def write_point(result, directory: str, at: tuple | None = None) -> None:
    """:func:`write_result` as a batch writes a point: the same folder, byte for byte, without building the
    manifest's dicts (nothing reads them: the file's text is made without them), by the layout of an earlier
    point of the same case when the program fits it (see :func:`_layout`). ``at``: the folder's absolute parent
    and its name, when the caller has them (see :func:`fastcopy.golden.store.write_folder`)."""
    write_folder(directory, point_files(result), at)


def point_files(result) -> list:
    """The files :func:`write_point` writes for ``result``, as ``(relative path, data)`` in writing order (the
    manifest's text last); nothing is written. Raises what writing the point raises before its first file."""
    result.check()
    prog = result.program
    key = (prog.name, prog.source_sha256)
    layouts = _LAYOUTS.get(key)
    if layouts:
        for fill in layouts:
            try:
                files = fill(prog, result)
            except Exception:  # noqa: BLE001 - anything unusual: written piece by piece (which raises its errors)
                files = None
            if files is not None:
                return files
    files, _ = _folder(result, False)
    if type(layouts) is not tuple:  # (a tuple: no more layouts are made for this case)
        _new_layout(key, prog, result, files)
    return files


def _write_result(result, directory: str, allow_empty: bool, want: bool):
    """The folder of ``result`` (:func:`_folder`) written; its manifest returned when ``want``."""
    if not allow_empty:
        result.check()
    files, manifest = _folder(result, want)
    write_folder(directory, files)
    return manifest


def _folder(result, want: bool) -> tuple:
    """``(files, manifest)``: every file of the folder of ``result`` as ``(relative path, data)``, the manifest's
    text last, made piece by piece (the text :func:`manifest_text` makes of the manifest, without its dicts: see
    :func:`_text`); ``manifest``: the manifest's dicts when ``want``, else None. Nothing is written here: a
    folder is written whole once all of it is known."""
    prog = result.program
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
    if not want:
        return data, None
    case = {"name": prog.name, "file": os.path.basename(prog.file), "sha256": prog.source_sha256,
            "point": prog.index, "values": prog.values}
    return data, {"format": MANIFEST_FORMAT, **_versions(), "case": case, "description": head[0],
                  "product": head[1], "product_name": _product_name(head[1]), "seed": head[2],
                  "seed_source": head[3], "poison": head[4], **extras, "buffers": entries,
                  "ops": [_op_record(op, w) for op, w in ops], **({"warnings": notes} if notes else {}),
                  "files": files}


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


# --------------------------------------------------------------------------------------------- point layouts
# The points of a sweep differ in a few values (shapes, sizes, hashes, parameters, the point's values); the rest
# of their manifests is the same text. A *layout* is a function written (as source, compiled once) from one
# point's program: it checks that another point's program has the same structure, reads the values that change,
# hashes the files and returns the folder's files with the manifest's text, made by one f-string.
#
# What it checks: every object a constant piece of text comes from is the very same object as at the first
# point (``is``: strings, numbers, Refs, tuples, dtypes and the outputs' specs are immutable, so the same object
# gives the same text; a sweep's point template shares them between points), the program's tuples have the same
# lengths, the result holds the same inputs, and the dicts that hold changing values (the point's values, a
# struct's fields) have the same keys in the same order. Mutable things (init tables, the values themselves,
# warnings) are read and written at every point. A program that fails a check, or on which anything raises, is
# written piece by piece (:func:`_folder`), which raises its own errors. A layout is made from a point written
# piece by piece and kept only when it writes that point's files exactly (tests/test_batch_stages.py writes every
# example point both ways).
# A case's first config.LAYOUT_POINTS points are written piece by piece (making a layout pays after ~100
# points); it makes at most _MAX_LAYOUTS (a case whose programs share nothing stops making them), and none for a
# program of more than config.LAYOUT_PARTS buffers and ops.
_MAX_LAYOUTS = 4
_LAYOUTS: dict = {}  # (case name, case sha256) -> [layout functions], or () when no more are made
_PIECEWISE: dict = {}  # (case name, case sha256) -> points written piece by piece


def _new_layout(key, prog, result, files) -> None:
    """Count a point of ``prog``'s case written piece by piece (as ``files``); from the config.LAYOUT_POINTS-th,
    make a layout from it and keep it when it writes exactly ``files``."""
    if len(_PIECEWISE) >= 256:
        _PIECEWISE.clear()
        _LAYOUTS.clear()
    n = _PIECEWISE[key] = _PIECEWISE.get(key, 0) + 1
    if n < config.LAYOUT_POINTS:
        return
    layouts = _LAYOUTS.setdefault(key, [])
    if type(layouts) is not list:
        return
    if len(prog.buffers) + len(prog.ops) > config.LAYOUT_PARTS:
        _LAYOUTS[key] = tuple(layouts)
        return
    try:
        fill = _layout(prog, result)
        same = fill is not None and _same_files(fill(prog, result), files)
    except Exception:  # noqa: BLE001 - a program the layouts do not handle: piece by piece
        same = False
    if same:
        layouts.insert(0, fill)
    if not same or len(layouts) >= _MAX_LAYOUTS:  # (no more are made for this case: those made stay in use)
        _LAYOUTS[key] = tuple(layouts)


def _same_files(got, want) -> bool:
    return got is not None and len(got) == len(want) and all(
        g[0] == w[0] and (g[1] is w[1] or g[1] == w[1]) for g, w in zip(got, want))


class _Source:
    """The source of a layout function being written: checks, reads, and the manifest's text pieces."""

    def __init__(self):
        self.consts: dict = {}  # name in the function's namespace -> object
        self.body: list = []  # lines of the function's body
        self.text: list = []  # names whose values, joined, are the manifest's text (constants and variables)
        self._lit: list = []  # constant text not yet added
        self.n = 0

    def const(self, obj) -> str:
        name = f"_k{len(self.consts)}"
        self.consts[name] = obj
        return name

    def var(self, expr: str) -> str:
        """A new local variable holding ``expr``."""
        self.n += 1
        self.body.append(f"v{self.n} = {expr}")
        return f"v{self.n}"

    def check(self, cond: str) -> None:
        self.body.append(f"if not ({cond}): return None")

    def same(self, expr: str, obj) -> None:
        """``expr`` must be ``obj`` itself."""
        self.body.append(f"if {expr} is not {self.const(obj)}: return None")

    def lit(self, text: str) -> None:
        self._lit.append(text)

    def put(self, expr: str) -> None:
        """The text of ``expr`` (already JSON text) next in the manifest."""
        if self._lit:
            self.text.append(self.const("".join(self._lit)))
            self._lit = []
        self.text.append(expr)

    def shape(self, expr: str) -> None:
        """The JSON text of the shape ``expr`` (read once; :func:`_shape_text`, its kept text looked up inline)."""
        v = self.var(expr)
        self.put(f"(_SHAPES.get({v}) or _shape_text({v}))")

    def init(self, expr: str, like) -> None:
        """The JSON text of the init table ``expr`` (:func:`_init_text`). When ``like`` (the table at the first
        point) is a table of plain values (strings, numbers, booleans, None) that names no file, its text is
        kept and used while the table has the same keys in the same order and the very same value objects (a
        sweep's points share the table: a value changed in place is another object)."""
        v = self.var(expr)
        if (type(like) is not dict or "path" in like or "given" in like
                or not all(type(k) is str and type(x) in _PLAIN for k, x in like.items())):
            self.put(f"_init_text({v})")
            return
        same = "".join(f" and {v}[{self.const(k)}] is {self.const(x)}" for k, x in like.items())
        self.put(f"({self.const(_init_text(like))} if type({v}) is dict and tuple({v}) == {self.const(tuple(like))}"
                 f"{same} else _init_text({v}))")

    def value(self, expr: str) -> None:
        """The JSON text of the value of ``expr`` (read once) next in the manifest."""
        v = self.var(expr)
        self.put(f"({v} if type({v}) is int else _text({v}))")

    def fields(self, expr: str, like) -> None:
        """The JSON text of the value of ``expr``: when ``like`` (its value at the first point) is a dict with
        string keys, a dict with the same keys in the same order (checked), each value read; else as it is."""
        if type(like) is not dict or not all(type(k) is str for k in like):
            self.put(f"_text({expr})")
            return
        v = self.var(expr)
        self.check(f"type({v}) is dict and tuple({v}) == {self.const(tuple(like))}")
        self.lit("{")
        for i, k in enumerate(like):
            self.lit(("" if i == 0 else ", ") + _encode_string(k) + ": ")
            self.value(f"{v}[{self.const(k)}]")
        self.lit("}")

    def function(self):
        if self._lit:
            self.text.append(self.const("".join(self._lit)))
        code = "\n    ".join(self.body)
        pieces = "".join("{" + t + "}" for t in self.text)
        src = (f"def fill(p, r):\n    {code}\n    text = f'{pieces}'\n"
               f"    return files + [('manifest.json', text.encode('utf-8'))]\n")
        ns = {"_text": _text, "_dumps": _dumps, "_shape_text": _shape_text, "_SHAPES": _SHAPES,
              "_init_text": _init_text, "sha256": hashlib.sha256, "mask_sha256": mask_sha256,
              "count_nonzero": np.count_nonzero, "_notes_line": _notes_line, "_warnings_text": _warnings_text,
              "_record_text": _record_text, **self.consts}
        exec(compile(src, "<fastcopy manifest layout>", "exec"), ns)  # noqa: S102 - our own source, constants by name
        return ns["fill"]


_PLAIN = frozenset({str, int, float, bool, type(None)})  # (immutable: the same object always has the same text)


def _record_text(o) -> str:
    """The keys an output's options add to its entry (``, "rtol": ...``), or nothing."""
    rec = o.record()
    return ", " + _dumps(rec)[1:-1] if rec else ""


def _notes_line(notes) -> str:
    return ",\n" + _line("warnings", list(notes)) if notes else ""


def _warnings_text(warns) -> str:
    return _dumps(list(warns)) if warns else "[]"


def _layout(prog, result):
    """The layout function of the structure of ``prog`` (and ``result``), or None when it has parts the layouts do
    not handle (compute steps, dicts with keys that are not strings, repeated parameter names)."""
    from .schema import Arg, OpSpec, Ref

    src = _Source()
    src.same("type(p)", type(prog))
    for attr in ("name", "file", "source_sha256", "description", "product", "seed", "seed_source", "poison",
                 "outputs", "blocks"):
        src.same(f"p.{attr}", getattr(prog, attr))
    extras = program_extras(prog)
    head = (prog.description, prog.product, prog.seed, prog.seed_source, prog.poison, type(prog.seed),
            type(prog.poison))
    src.lit("{\n" + (_HEAD_LINES[0] or _head_lines(0, {"format": MANIFEST_FORMAT, **_versions()})) + ",\n")
    src.lit(' "case": ' + _dumps({"name": prog.name, "file": os.path.basename(prog.file),
                                  "sha256": prog.source_sha256})[:-1] + ', "point": ')
    src.value("p.index")
    src.lit(', "values": ')
    src.fields("p.values", prog.values)
    src.lit("},\n" + (_HEAD_LINES.get(head) or _head_lines(head, {
        "description": head[0], "product": head[1], "product_name": _product_name(head[1]), "seed": head[2],
        "seed_source": head[3], "poison": head[4]})))
    for k, v in extras.items():
        src.lit(",\n" + _line(k, v))
    # buffers, in the order and with the entries of _folder
    src.lit(',\n "buffers": [')
    outs = {o.buffer: o for o in prog.outputs}
    inputs, rel_files, entries = result.inputs, [], 0
    src.body.append("bs = p.buffers")
    src.check(f"len(bs) == {len(prog.buffers)}")
    src.body.append("ins = r.inputs")
    src.check(f"len(ins) == {len(inputs)}")
    src.body.append("files = []")

    def entry():
        nonlocal entries
        src.lit(("\n  " if entries == 0 else ",\n  ") + '{"name": ' + _encode_string(buf.name) + ', "role": ')
        entries += 1

    for i, buf in enumerate(prog.buffers):
        if type(buf.name) is not str:
            return None
        b = src.var(f"bs[{i}]")
        src.same(f"type({b})", type(buf))
        for attr in ("name", "gm", "dtype", "position", "file"):
            src.same(f"{b}.{attr}", getattr(buf, attr))
        name = src.const(buf.name)
        if buf.name in inputs:
            arr = inputs[buf.name]
            rel = f"input/{buf.file}.bin"
            a = src.var(f"ins[{name}]")
            src.same(f"{a}.dtype", arr.dtype)
            sha = src.var(f"sha256({a}).hexdigest()")  # (an array that is not C-contiguous raises: piece by piece)
            src.body.append(f"files.append(({src.const(rel)}, {a}))")
            rel_files.append(rel)
            entry()
            src.lit('"input", ' + _dtype_text(arr.dtype) + ', "shape": ')
            src.shape(f"{a}.shape")
            src.lit(', "file": ' + _encode_string(rel) + ', "bytes": ')
            src.put(f"{a}.nbytes")  # (an int, written as _folder writes it)
            src.lit(', "sha256": "')
            src.put(sha)
            src.lit('", "position": "GM", "init": ')
            src.init(f"{b}.init", buf.init)
            src.lit("}")
        if buf.name in outs:
            o = outs[buf.name]
            arr, mask = result.outputs[buf.name]
            pair = src.var(f"r.outputs[{name}]")
            a, m = src.var(f"{pair}[0]"), src.var(f"{pair}[1]")
            src.check(f"len({pair}) == 2")
            src.same(f"{a}.dtype", arr.dtype)
            sha = src.var(f"sha256({a}).hexdigest()")
            src.body.append(f"files += [({src.const(o.file)}, {a}), ({src.const(o.mask)}, {m})]")
            rel_files += [o.file, o.mask]
            defined = src.var(f"r.defined.get({name})")
            src.body.append(f"if {defined} is None: {defined} = int(count_nonzero({m}))")
            msha = src.var(f"mask_sha256({m}, {defined})")
            entry()
            src.lit('"output", ' + _dtype_text(arr.dtype) + ', "shape": ')
            src.shape(f"{a}.shape")
            src.lit(', "file": ' + _encode_string(o.file) + ', "bytes": ')
            src.put(f"{a}.nbytes")  # (an int, written as _folder writes it)
            src.lit(', "sha256": "')
            src.put(sha)
            src.lit(f'", "position": {_dumps(buf.position)}, "mask": {_dumps(o.mask)}, "mask_sha256": "')
            src.put(msha)
            src.lit('", "elements": ')
            src.put(f"int({m}.size)")
            src.lit(', "defined": ')
            src.value(defined)
            if o.compare_options:  # (options are read at every point)
                src.put(f"_record_text({src.const(o)})")
            else:
                src.lit(_record_text(o))
            if not buf.gm:
                place = src.var(f"r.placement[{name}]")
                src.lit(', "buffer": ')
                src.put(f"_text({place}[0])")
                src.lit(', "addr": ')
                src.value(f"{place}[1]")
            src.lit("}")
        if not buf.gm and buf.name not in outs:
            src.same(f"{b}.np_dtype", buf.np_dtype)
            place = src.var(f"r.placement[{name}]")
            src.check(f"len({place}) == 2")
            entry()
            src.lit(f'"local", "dtype": {_dumps(buf.dtype)}, "numpy_dtype": '
                    f'{_dumps(_dtype_names(buf.np_dtype)[1])}, "shape": ')
            src.shape(f"{b}.shape")
            src.lit(f', "position": {_dumps(buf.position)}, "buffer": ')
            src.put(f"_text({place}[0])")
            src.lit(', "addr": ')
            src.value(f"{place}[1]")
            src.check(f"(not {b}.init) is {not buf.init}")
            if buf.init:
                src.lit(', "init": ')
                src.init(f"{b}.init", buf.init)
            src.lit("}")
        elif buf.gm and buf.name not in outs and buf.name not in inputs:
            src.same(f"{b}.np_dtype", buf.np_dtype)
            entry()
            src.lit(f'"scratch", "dtype": {_dumps(buf.dtype)}, "numpy_dtype": '
                    f'{_dumps(_dtype_names(buf.np_dtype)[1])}, "shape": ')
            src.shape(f"{b}.shape")
            src.lit(', "position": "GM"}')
    src.lit("\n ]" if entries else "]")
    # ops
    src.lit(',\n "ops": [')
    src.body.append("ops = p.ops")
    src.check(f"len(ops) == {len(prog.ops)}")
    src.body.append("warns = r.warnings")
    src.body.append("quiet = not warns")  # (most points: no op warned)
    for j, op in enumerate(prog.ops):
        if type(op) is not OpSpec:
            return None
        x = src.var(f"ops[{j}]")
        src.same(f"type({x})", OpSpec)
        for attr in ("api", "path", "index", "dtype", "note", "env", "operands"):
            src.same(f"{x}.{attr}", getattr(op, attr))
        for attr in ("dst", "src"):
            ref = getattr(op, attr)
            if ref is None:
                src.same(f"{x}.{attr}", None)
                continue
            if type(ref) is not Ref:
                return None
            r = src.var(f"{x}.{attr}")  # (the same Ref, as the sweep's points share it, or one of the same parts)
            src.check(f"{r} is {src.const(ref)} or (type({r}) is {src.const(Ref)} and {r}.name is "
                      f"{src.const(ref.name)} and {r}.offset is {src.const(ref.offset)})")
        full = _op_text(op, ())
        src.lit(("\n  " if j == 0 else ",\n  ") + full[:full.index(', "params": ')] + ', "params": {')
        args = [(f"{x}.args[{k}]", a) for k, a in enumerate(op.args)]
        args += [(f"{x}.kwargs[{k}][1]", a) for k, (_, a) in enumerate(op.kwargs)]
        src.check(f"len({x}.args) == {len(op.args)} and len({x}.kwargs) == {len(op.kwargs)}")
        keys = [a.key for _, a in args]
        if len(set(keys)) != len(keys) or not all(type(k) is str for k in keys):
            return None
        for k, (expr, arg) in enumerate(args):
            a = src.var(expr)
            src.same(f"type({a})", Arg)
            src.same(f"{a}.key", arg.key)
            src.lit(("" if k == 0 else ", ") + _encode_string(arg.key) + ": ")
            src.fields(f"{a}.value", arg.value)
        src.lit("}")
        if op.note:
            src.lit(f', "note": {_dumps(op.note)}')
        src.lit(', "warnings": ')
        src.put(f'("[]" if quiet else _warnings_text(warns.get({src.const(op.index)})))')
        src.lit("}")
    src.lit("\n ]" if prog.ops else "]")
    src.body.append("notes = r.notes")
    src.put('(_notes_line(notes) if notes else "")')
    rel_files.append("manifest.json")
    if not checked_before(rel_files):
        return None
    src.lit(",\n" + _line("files", rel_files) + "\n}\n")
    return src.function()


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


def _init_text(init) -> str:
    """``_text(_init_record(init))`` (a table that names no file is its own record)."""
    if type(init) is dict and "path" not in init and "given" not in init:
        return _dumps(init)
    return _text(_init_record(init))


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
