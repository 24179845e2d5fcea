"""The environment of a fresh process as a user has one: Python's bytecode cache written and read.

An installed package has its ``.pyc`` files (pip compiles them; a checkout writes ``__pycache__`` on its first
import). With ``PYTHONDONTWRITEBYTECODE`` set (as on the development VM) every start of ``fastcopy`` compiles its
whole source again (0.1 s and more), while numpy, from site-packages, loads its compiled files: the start-up
measurements then compare compile time with load time. :func:`warm_env` gives the measured commands a private
bytecode folder (``PYTHONPYCACHEPREFIX``; the checkout is not touched) that the untimed warm-up run fills.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

_PREFIX: list = []


def warm_env(**more) -> dict:
    """``os.environ`` with the bytecode cache on, in a folder kept for this process's runs (removed at exit)."""
    if not _PREFIX:
        _PREFIX.append(tempfile.mkdtemp(prefix="fastcopy-pyc-"))
        atexit.register(shutil.rmtree, _PREFIX[0], True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = _PREFIX[0]
    env.update(more)
    return env


def cold_env(**more) -> dict:
    """``os.environ`` with no bytecode cache at all (every module compiled from source at each start)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(more)
    return env
