"""Loading case files and expanding sweeps.

A case is TOML (``tomllib``) or JSON with the same keys. Sweeps: a ``[sweep]`` table of named lists (used through
``"=expr"`` strings), and any list given where one value is expected (a struct field, ``count``, a dtype, a
list of shapes, a list of SliceInfo lists, ...). A case has ``len(case)`` points, the product of all axes in
document order (named axes first, the last axis fastest); ``case.point(i)`` is the :class:`Program` of point i.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import tomllib

from . import holes
from .expr import FUNCTIONS
from .schema import BLOCK_NAMES, CaseError, Compiler, Program, default_max_bytes
from .template import TemplateCompiler

#: Largest number of points one case may expand into (a guard against typos in sweeps).
MAX_POINTS = 1_000_000
_REBUILD = "rebuild"  # Case._holes after unpickling: the point template is made again at the first point


class Case:
    """A loaded case file: the document, its sweep axes, and :meth:`point` to get each program."""

    def __init__(self, doc: dict, file: str, source: str = "", base_dir: str | None = None,
                 seed: int | None = None, max_bytes: int | None = None, allow_python: bool = False):
        if not isinstance(doc, dict):
            raise CaseError(file, "", f"expected a table at the top level, got {type(doc).__name__}")
        self.doc, self.file, self.source = doc, file, source
        self.base_dir = base_dir if base_dir is not None else os.path.dirname(os.path.abspath(file))
        self.seed = seed
        self.max_bytes = default_max_bytes() if max_bytes is None else int(max_bytes)
        self.allow_python = bool(allow_python)
        self.sha256 = hashlib.sha256(source.encode("utf-8")).hexdigest() if source else ""
        self.named = self._named_axes()
        self.implicit: dict[str, list] = {}
        self._memo: dict = {}  # the sections of the document compiled so far (fastcopy.golden.template)

        def discover(path, values):
            self.implicit.setdefault(path, values)
            return values[0]

        # one walk with the first value of everything finds the implicit axes (and validates point 0)
        first = self._compile({n: v[0] for n, v in self.named}, discover, 0, {})
        labels = _labels(list(self.implicit))
        self.axes = [(n, v) for n, v in self.named] + [(labels[p], v) for p, v in self.implicit.items()]
        self.size = math.prod(len(v) for _, v in self.axes)
        if self.size > MAX_POINTS:
            raise CaseError(file, "sweep", f"the sweeps expand into {self.size} points; at most {MAX_POINTS}")
        self._holes = holes.build(self, first)  # (None: every point compiled through the template memo)

    def __getstate__(self) -> dict:
        """Pickled (a spawned worker, a Dask task) without the template memo (its keys hold ids of this process's
        document objects) and without the point template (compiled expressions): both made again there."""
        state = dict(self.__dict__)
        state["_memo"] = {}
        state["_holes"] = _REBUILD
        return state

    @property
    def name(self) -> str:
        name = self.doc.get("name")
        return name if isinstance(name, str) else os.path.splitext(os.path.basename(self.file))[0]

    @property
    def is_sweep(self) -> bool:
        return bool(self.axes)

    def __len__(self) -> int:
        return self.size

    def coordinates(self, index: int) -> list:
        """The value of every axis at point ``index`` (last axis fastest)."""
        if not 0 <= index < self.size:
            raise IndexError(f"{self.file}: point {index} outside [0, {self.size})")
        out = []
        for _, values in reversed(self.axes):
            index, k = divmod(index, len(values))
            out.append(values[k])
        return out[::-1]

    def values(self, index: int) -> dict:
        """Axis label -> value at point ``index`` (what the manifest records as the point's parameters)."""
        return {label: _plain(c) for (label, _), c in zip(self.axes, self.coordinates(index))}

    def point(self, index: int = 0) -> Program:
        """The validated program of sweep point ``index``."""
        coords = self.coordinates(index)
        names = {n: c for (n, _), c in zip(self.named, coords)}
        values = {label: _plain(c) for (label, _), c in zip(self.axes, coords)}
        template = self._holes
        if isinstance(template, str):  # (_REBUILD)
            template = self._holes = holes.build(self, self._compile({n: v[0] for n, v in self.named},
                                                                     lambda path, values: values[0], 0, {}))
        if template is not None:
            prog = template.point(names, index, values)  # (None: compile it in full, below)
            if prog is not None:
                return prog
        chosen = dict(zip(self.implicit, coords[len(self.named):]))

        def choose(path, values):
            if path not in chosen:
                raise CaseError(self.file, path, "a list inside a swept value is not supported (sweep the inner "
                                                 "value with a named [sweep] variable instead)")
            return chosen[path]

        return self._compile(names, choose, index if self.is_sweep else None, values, self._memo)

    def points(self):
        for i in range(self.size):
            yield self.point(i)

    def _compile(self, names, choose, index, values, memo: dict | None = None) -> Program:
        """``memo``: compile through the sweep template (sections reused from earlier points)."""
        args = (self.doc, self.file, self.source, self.base_dir, names, choose, self.max_bytes)
        comp = Compiler(*args) if memo is None else TemplateCompiler(memo, *args)
        prog = comp.compile(index, values, self.seed)
        return _replace(prog, source_sha256=self.sha256, allow_python=self.allow_python)

    def _named_axes(self) -> list:
        raw = self.doc.get("sweep", {})
        if not isinstance(raw, dict):
            raise CaseError(self.file, "sweep", f"expected a table of name = [values], got {type(raw).__name__}")
        out = []
        for name, values in raw.items():
            if not name.isidentifier() or name in FUNCTIONS or name in BLOCK_NAMES:
                raise CaseError(self.file, f"sweep.{name}", "a sweep variable must be an identifier and not one "
                                                            f"of the functions {', '.join(FUNCTIONS)}")
            if not isinstance(values, list) or not values:
                raise CaseError(self.file, f"sweep.{name}", "expected a non-empty list of values")
            out.append((name, values))
        return out


def _replace(prog: Program, **kw) -> Program:
    """``prog`` (just compiled, not seen by anyone yet) with fields ``kw`` set: what ``dataclasses.replace`` would
    return, without building a second Program."""
    for k, v in kw.items():
        object.__setattr__(prog, k, v)
    return prog


def _plain(v):
    return v if isinstance(v, (int, float, str, bool)) else json.loads(json.dumps(v))


def _labels(paths: list) -> dict:
    """Short axis labels: the last key of each path, the whole path where two would clash."""
    short = {p: p.split(".")[-1] for p in paths}
    counts = {}
    for s in short.values():
        counts[s] = counts.get(s, 0) + 1
    return {p: (s if counts[s] == 1 else p) for p, s in short.items()}


def parse_text(text: str, file: str, fmt: str | None = None) -> dict:
    """Parse case text as TOML or JSON (``fmt`` or the file extension; TOML by default)."""
    fmt = fmt or ("json" if file.lower().endswith(".json") else "toml")
    if fmt == "json":
        try:
            return json.loads(text, object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as exc:
            raise CaseError(file, "", f"JSON syntax error: {exc.msg} (column {exc.colno})", exc.lineno) from None
        except _DuplicateKey as exc:
            raise CaseError(file, str(exc), "key given twice in one JSON object (JSON would silently keep the "
                                            "last one)") from None
        except (RecursionError, MemoryError):
            raise CaseError(file, "", "JSON nested too deeply") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CaseError(file, "", f"TOML syntax error: {exc}") from None
    except (RecursionError, MemoryError):
        raise CaseError(file, "", "TOML nested too deeply") from None


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def load_case(path, seed: int | None = None, max_bytes: int | None = None, allow_python: bool = False) -> Case:
    """Load a case file (``.toml`` or ``.json``). ``seed`` overrides the case's seed; ``max_bytes`` bounds each
    buffer's size (default: :func:`default_max_bytes`)."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise CaseError(path, "", f"cannot read the case file: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CaseError(path, "", "not a UTF-8 text file") from None
    return Case(parse_text(text, path), path, text, seed=seed, max_bytes=max_bytes, allow_python=allow_python)


def load_case_text(text: str, file: str = "<case>", fmt: str | None = None, base_dir: str | None = None,
                   seed: int | None = None, max_bytes: int | None = None, allow_python: bool = False) -> Case:
    """A case from text (``file`` is only used in messages and the manifest)."""
    return Case(parse_text(text, file, fmt), file, text, base_dir=base_dir or os.getcwd(), seed=seed,
                max_bytes=max_bytes, allow_python=allow_python)


def case_from_dict(doc: dict, name: str = "case", base_dir: str | None = None, seed: int | None = None,
                   max_bytes: int | None = None, allow_python: bool = False) -> Case:
    """A case built in Python: the same keys as a case file (``{"product": ..., "buffers": {...}, ...}``)."""
    doc = dict(doc)
    doc.setdefault("name", name)
    text = json.dumps(doc, sort_keys=False, default=str)
    return Case(doc, f"<{name}>", text, base_dir=base_dir or os.getcwd(), seed=seed, max_bytes=max_bytes,
                allow_python=allow_python)


def expand(cases) -> list:
    """(case, index) for every point of every case."""
    return list(itertools.chain.from_iterable(((c, i) for i in range(len(c))) for c in cases))
