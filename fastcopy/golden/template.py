"""A sweep compiled once: the parts of a case that do not change between points are compiled for the first point
and reused, so a point costs only the parts that read its values.

:class:`TemplateCompiler` is the case :class:`~fastcopy.golden.schema.Compiler` with a memo around each buffer
table, each op and the outputs list (the *sections*). While a section compiles, every value it reads from
outside its own table is recorded: sweep and loop variables (``names``), swept lists (``choose``) and the
buffers an op or the outputs look up. A later point reuses the section's result when all of those read the same
values again (compared strictly: ``1``, ``1.0`` and ``True`` differ), so what it returns is exactly what
compiling would return: the compiler is deterministic, and its reads are the only way a point's values reach a
section. The compiler's own attributes (the product being compiled for, loop variables in force, ...) are part of
the key as well (compared by value when they are plain data, by identity otherwise). A section that raises is never stored (the next point compiles it again and raises
the same error).

Every point still gets its own :class:`Program`; what points share are immutable specs (``BufferSpec``,
``OpSpec``, ``OutputSpec``).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from .schema import Compiler

#: distinct value sets kept per section (a sweep of more points compiles the section again for the rest)
MAX_ENTRIES = 4096
#: a section that missed this often, hitting less than once per 4 misses, is compiled without the memo (a swept
#: buffer or op whose values differ at every point: the memo would only cost)
GIVE_UP_AFTER = 16
_MISSING = object()
_CONSTANT = frozenset({"doc", "file", "source", "base_dir", "max_bytes", "names", "choose"})


class _Same:
    """A value as a memo key: equal only to the same object (specs the memo made), so ids are never reused."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __hash__(self):
        return id(self.obj)

    def __eq__(self, other):
        return isinstance(other, _Same) and other.obj is self.obj


def freeze(v):
    """``v`` as a hashable key that keeps types apart (``1``, ``1.0``, ``True`` are three keys)."""
    t = type(v)
    if t in _SCALARS:
        return (t, v)
    if t is _Same:
        return v
    if t is list or t is tuple:
        return (t, tuple([freeze(x) for x in v]))
    if t is dict:
        return (t, tuple([(k, freeze(x)) for k, x in v.items()]))
    if isinstance(v, Enum):
        return (t, v)
    return _Same(v)


_SCALARS = frozenset({str, int, float, bool, type(None)})


class _Names(dict):
    """The compiler's variables; reads are recorded in the open sections' logs."""

    __slots__ = ("owner",)

    def __getitem__(self, key):
        v = dict.__getitem__(self, key)
        self.owner.note(("name", key), v)
        return v

    def __contains__(self, key):
        v = dict.get(self, key, _MISSING)
        self.owner.note(("name", key), v)
        return v is not _MISSING

    def get(self, key, default=None):
        v = dict.get(self, key, _MISSING)
        self.owner.note(("name", key), v)
        return default if v is _MISSING else v

    # walking every variable (a copy, a listing) reads them all
    def _walked(self):
        self.owner.note(("names",), tuple(dict.items(self)))
        return self

    def __iter__(self):
        return dict.__iter__(self._walked())

    def keys(self):
        return dict.keys(self._walked())

    def items(self):
        return dict.items(self._walked())

    def values(self):
        return dict.values(self._walked())


class _Buffers(Mapping):
    """The buffers table as a section sees it: lookups recorded by name, anything that walks it as a whole."""

    def __init__(self, table: Mapping, owner):
        self.table, self.owner = table, owner

    def __getitem__(self, key):
        v = self.table[key]
        self.owner.note(("buffer", key), v)
        return v

    def __contains__(self, key):
        v = self.table.get(key, _MISSING)
        self.owner.note(("buffer", key), v)
        return v is not _MISSING

    def get(self, key, default=None):
        v = self.table.get(key, _MISSING)
        self.owner.note(("buffer", key), v)
        return default if v is _MISSING else v

    def __iter__(self):
        self.owner.note(("buffers",), _whole(self.table))
        return iter(self.table)

    def __len__(self):
        self.owner.note(("buffers",), _whole(self.table))
        return len(self.table)


def _whole(table: Mapping) -> tuple:
    return tuple([(k, _Same(v)) for k, v in table.items()])


class TemplateCompiler(Compiler):
    """A :class:`Compiler` for one point that reuses the sections ``memo`` holds from earlier points of the same
    case (``memo``: a dict kept by the case)."""

    def __init__(self, memo: dict, *args, **kwargs):
        super().__init__(*args, **kwargs)
        names = _Names(self.names)
        names.owner = self
        self.names = names
        self._memo = memo
        self._logs: list = []
        self._choose = self.choose

        def choose(path, values):
            v = self._choose(path, values)
            self.note(("choose", path), v)
            return v

        self.choose = choose

    # -- recording ---------------------------------------------------------------------------------------
    def note(self, key, value) -> None:
        for log in self._logs:
            if key not in log:
                log[key] = value

    def _current(self, key, buffers):
        kind = key[0]
        if kind == "name":
            return dict.get(self.names, key[1], _MISSING)
        if kind == "choose":
            return self._choose(key[1], None)
        if kind == "buffer":
            return buffers.get(key[1], _MISSING)
        if kind == "names":
            return tuple(dict.items(self.names))
        return _whole(buffers)

    def _state(self) -> tuple:
        """The compiler's own attributes (the product being compiled for, the loop variables in force, anything
        a newer compiler keeps per point): part of every section's key."""
        return tuple([(k, freeze(v)) for k, v in self.__dict__.items() if k not in _CONSTANT and k[0] != "_"])

    def _section(self, static: tuple, buffers, compile_it):
        """The memoised result of ``compile_it()`` for the section ``static`` (a key of everything fixed)."""
        stats = self._memo.get(static)
        if stats is None:
            stats = self._memo[static] = [0, 0]  # hits, misses
        if stats[1] >= GIVE_UP_AFTER and stats[0] * 4 < stats[1]:  # rarely the same: just compile it
            return compile_it()
        static = static + self._state()
        tables = self._memo.get(static)
        if tables is None:
            tables = self._memo[static] = {}
        for keys, results in tables.items():  # one entry per set of keys read (usually one)
            try:
                values = tuple([freeze(self._current(k, buffers)) for k in keys])
            except Exception:  # noqa: BLE001 - e.g. a swept path this point does not choose: compile it
                continue
            hit = results.get(values)
            if hit is not None:
                stats[0] += 1
                for k, v in hit[1]:
                    self.note(k, v)
                return hit[0]
        stats[1] += 1
        log: dict = {}
        self._logs.append(log)
        try:
            result = compile_it()
        finally:
            self._logs.pop()
        for k, v in log.items():
            self.note(k, v)
        keys = tuple(log)
        results = tables.setdefault(keys, {})
        if len(results) >= MAX_ENTRIES:
            results.clear()
        results[tuple([freeze(v) for v in log.values()])] = (result, tuple(log.items()))
        return result

    # -- the sections ------------------------------------------------------------------------------------
    def buffer(self, name: str, spec, product):
        return self._section(("buffer", name, id(spec), product), None,
                             lambda: Compiler.buffer(self, name, spec, product))

    def op(self, i: int, table: dict, buffers: dict, path: str | None = None, block: int = 0):
        seen = _Buffers(buffers, self)
        return self._section(("op", i, id(table), path, block), buffers,
                             lambda: Compiler.op(self, i, table, seen, path, block))

    def outputs(self, raw, buffers: dict) -> list:
        seen = _Buffers(buffers, self)
        return list(self._section(("outputs", id(raw)), buffers,
                                  lambda: tuple(Compiler.outputs(self, raw, seen))))
