"""Kernels that work where no numba cache can be written.

numba refuses to even define a ``cache=True`` function when it finds no writable cache location (a read-only
package folder, a read-only HOME, an unwritable ``NUMBA_CACHE_DIR``): ``RuntimeError: cannot cache function
...: no locator available``. :func:`ensure_cache` runs when ``fastcopy.kernels`` is first imported, before any
kernel module: it probes once, and without a usable location points numba's cache at a fresh temporary folder for this
process; if no temporary folder can be made either, ``cache=True`` functions compile in memory. One
FastCopyWarning either way; nothing changes where a cache can be written.
"""

from __future__ import annotations

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


def ensure_cache() -> None:
    """Make ``njit(cache=True)`` usable in this process (see the module docstring)."""
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
