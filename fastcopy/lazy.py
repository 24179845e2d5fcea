"""Imports deferred to first use, so ``import fastcopy`` loads only what a first ``DataCopy`` needs.

- :func:`package_getattr`: a package's PEP 562 ``__getattr__`` / ``__dir__`` over a table of public name ->
  submodule: the submodule is imported when the name is first read, and the name is then bound in the package
  (later reads are plain attribute reads). ``dir()``, ``from package import *`` and tab completion see every name.
- :class:`LazyModule`: a module-level stand-in for ``from . import module as _m`` in a module whose functions use
  ``_m.name``: the first attribute read imports the module and rebinds ``_m`` to it.
- :func:`loaded`: ``module.name`` only if ``module`` is already imported (an instance of a class from a module
  nobody imported cannot exist, so a type test against it needs no import).

This module imports nothing from fastcopy.
"""

from __future__ import annotations

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
