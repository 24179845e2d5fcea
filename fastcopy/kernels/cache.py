"""Kernels that work where no numba cache can be written.

numba refuses to even define a ``cache=True`` function when it finds no writable cache location (a read-only
package folder, a read-only HOME, an unwritable ``NUMBA_CACHE_DIR``): ``RuntimeError: cannot cache function
...: no locator available``. :func:`ensure_cache` runs when ``fastcopy.kernels`` is first imported, before any
kernel module: it probes once, and without a usable location points numba's cache at a fresh temporary folder for this
process; if no temporary folder can be made either, ``cache=True`` functions compile in memory. One
FastCopyWarning either way; nothing changes where a cache can be written.

numba keeps a compiled function while *its own* source file is unchanged, but a kernel that calls kernels of
other files (``crew.run_chunk`` runs the layout, strided and element kernels) bakes their code in: after an
upgrade that changes only ``layout.py``, the cached ``run_chunk`` would still run the old layout code.
:func:`stamp_kernel_sources` therefore makes the stamp of every function defined in this folder the stamp numba
would use plus one digest of all the folder's sources: any change to any kernel file recompiles every kernel.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import warnings

from numba import njit
from numba.core import config


def _cacheable() -> bool:
    def probe():  # pragma: no cover - never called, only decorated
        return 0

    try:
        njit(cache=True)(probe)
    except RuntimeError as exc:
        if "cannot cache" not in str(exc):
            raise
        return False
    return True


def sources_digest(folder: str) -> str:
    """One digest of the contents of every ``.py`` file in ``folder`` (names sorted)."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            h.update(name.encode() + b"\0")
            with open(os.path.join(folder, name), "rb") as f:
                h.update(f.read())
            h.update(b"\0")
    return h.hexdigest()


def stamp_kernel_sources(folder: str) -> None:
    """Functions defined in ``folder`` are cached under numba's own source stamp *and* a digest of every source
    file in ``folder`` (see the module docstring). Installed once per folder, as locator classes ahead of numba's
    own in its search order; a ``NUMBA_CACHE_LOCATOR_CLASSES`` setting of the user's is left alone."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # (renamed in numba 0.62)
    folder = os.path.realpath(folder)
    if folder in getattr(impl, "_fastcopy_folders", ()) or not os.path.isdir(folder):
        return  # (installed already; or the package runs from a zip file: numba's own stamps)
    mixin = getattr(caching, "_SourceFileBackedLocatorMixin", None)
    digest = sources_digest(folder)
    salted = []
    for base in impl._locator_classes:
        if mixin is None or not issubclass(base, mixin):
            continue

        def from_function(cls, py_func, py_file, _base=base):
            if os.path.dirname(os.path.realpath(py_file)) != folder:
                return None
            return super(cls, cls).from_function.__func__(cls, py_func, py_file)

        def get_source_stamp(self, _base=base):
            return (_base.get_source_stamp(self), digest)

        salted.append(type(f"KernelFolder{base.__name__.lstrip('_')}", (base,),
                           {"from_function": classmethod(from_function), "get_source_stamp": get_source_stamp}))
    impl._locator_classes = salted + list(impl._locator_classes)
    impl._fastcopy_folders = getattr(impl, "_fastcopy_folders", ()) + (folder,)


def ensure_cache() -> None:
    """Make ``njit(cache=True)`` usable in this process (see the module docstring)."""
    stamp_kernel_sources(os.path.dirname(os.path.abspath(__file__)))
    if _cacheable():
        return
    try:
        config.CACHE_DIR = tempfile.mkdtemp(prefix="fastcopy-numba-")
    except OSError:
        config.CACHE_DIR = ""
    if config.CACHE_DIR and _cacheable():
        how = f"kernels are cached in {config.CACHE_DIR} for this process only"
    else:
        _compile_in_memory()
        how = "kernels are compiled in memory in every process"
    # FastCopyWarning, looked up rather than imported (kernels import nothing above them; fastcopy.errors is
    # always loaded before any kernel is)
    category = getattr(sys.modules.get("fastcopy.errors"), "FastCopyWarning", UserWarning)
    warnings.warn(f"fastcopy: no writable numba cache directory (package folder, HOME or NUMBA_CACHE_DIR); {how}. "
                  "Set NUMBA_CACHE_DIR to a writable folder to keep compiled kernels.", category, stacklevel=3)


def _compile_in_memory() -> None:
    """Last resort: nothing is writable, so ``cache=True`` means "no cache" (instead of an import error)."""
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.enable_caching
    if getattr(original, "_fastcopy", False):
        return

    def enable_caching(self):
        try:
            original(self)
        except RuntimeError as exc:
            if "cannot cache" not in str(exc):
                raise

    enable_caching._fastcopy = True
    Dispatcher.enable_caching = enable_caching
