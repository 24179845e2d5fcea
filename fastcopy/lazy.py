"""Imports deferred to first use, so ``import fastcopy`` loads only what a first ``DataCopy`` needs.

- :func:`package_getattr`: a package's PEP 562 ``__getattr__`` / ``__dir__`` over a table of public name ->
  submodule: the submodule is imported when the name is first read, and the name is then bound in the package
  (later reads are plain attribute reads). ``dir()``, ``from package import *`` and tab completion see every name.
- :class:`LazyModule`: a module-level stand-in for ``from . import module as _m`` in a module whose functions use
  ``_m.name``: the first attribute read imports the module and rebinds ``_m`` to it.
- :func:`loaded`: ``module.name`` only if ``module`` is already imported (an instance of a class from a module
  nobody imported cannot exist, so a type test against it needs no import).
- :class:`paused_collector`: ``with paused_collector():`` around imports, so the cyclic garbage collector does
  not walk the new modules' objects while they are made.

This module imports nothing from fastcopy.
"""

from __future__ import annotations

import gc
import sys


def load(name: str):
    """The module ``name`` (absolute), imported if it is not yet."""
    module = sys.modules.get(name)
    if module is None:
        __import__(name)
        module = sys.modules[name]
    return module


def loaded(module: str, name: str):
    """``module.name`` if ``module`` is imported, else None."""
    m = sys.modules.get(module)
    return None if m is None else getattr(m, name, None)


class LazyModule:
    """``_m = LazyModule("fastcopy.cube.fixpipe", globals(), "_m")``: the module, imported at the first attribute
    read, which also rebinds ``_m`` in ``namespace`` to the module itself."""

    __slots__ = ("_name", "_namespace", "_alias")

    def __init__(self, name: str, namespace: dict, alias: str):
        self._name, self._namespace, self._alias = name, namespace, alias

    def __getattr__(self, attr: str):
        module = load(self._name)
        if self._namespace.get(self._alias) is self:
            self._namespace[self._alias] = module
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<{self._name} (imported on first use)>"


class paused_collector:
    """``with paused_collector():`` the cyclic garbage collector does not run inside the block. For imports: a
    module's objects (functions, classes, tables) live as long as the process, yet while they are made every 700
    new objects start a pass of the young generation over them, and every tenth a pass of the middle one, which
    find nothing to free: ~50 passes and ~5 ms while numpy, ml_dtypes and fastcopy import.

    At the end of the block the collector is on again if it was on before (also when the block raises; a collector
    the caller turned off stays off, and nested blocks leave it to the outermost), and the objects made in the
    block join the oldest generation (``gc.freeze()`` then ``gc.unfreeze()``: two list moves), where they would
    have been after surviving two young passes. Left young, they would all be walked by the next young pass at
    once, costing more than the passes saved. They stay collectable: a full collection walks them as before. The
    process's young objects made before the block move with them (the freeze takes every generation): a cycle the
    caller dropped just before is freed by the next full collection rather than the next young pass.
    When the process has frozen objects of its own (``gc.get_freeze_count()``), nothing is moved (the unfreeze
    would release them too)."""

    __slots__ = ("_was_on",)

    def __enter__(self):
        self._was_on = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc) -> None:
        if self._was_on:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def package_getattr(package: str, namespace: dict, table: dict):
    """``(__getattr__, __dir__)`` for the package ``package`` (its ``globals()`` is ``namespace``): ``table`` maps
    each lazily loaded public name to the absolute name of the module that defines it (a name that is itself a
    module, e.g. a subpackage, maps to that module's name with a trailing ``":"``)."""

    def __getattr__(name: str):
        where = table.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = load(where[:-1]) if where.endswith(":") else getattr(load(where), name)
        namespace[name] = value
        return value

    def __dir__() -> list:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
