"""numba keeps a cached function while its own source file is unchanged, even when a function it calls (from
another file) changed: fastcopy's kernels call each other across files, so their cache stamp includes a digest of
every kernel source (fastcopy.kernels.cache.stamp_kernel_sources). Tested on a throwaway kernel folder, in fresh
processes sharing one numba cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from fastcopy.kernels import cache, crew  # (fastcopy.kernels installs the stamp for fastcopy's own folder)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CALLER = textwrap.dedent("""
    from numba import njit
    from callee import g

    @njit(cache=True)
    def f():
        return g()
""")
CALLEE = "from numba import njit\n\n@njit(cache=True)\ndef g():\n    return {}\n"
RUN = textwrap.dedent("""
    import sys
    sys.path.insert(0, {kern!r})
    if {stamp}:
        from fastcopy.kernels.cache import stamp_kernel_sources
        stamp_kernel_sources({kern!r})
    import caller
    print(caller.f())
""")


def _run(kern, cache_dir, stamp):
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "PYTHONPATH": ROOT}
    out = subprocess.run([sys.executable, "-c", RUN.format(kern=str(kern), stamp=stamp)], env=env,
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def test_a_changed_callee_recompiles_its_cached_caller(tmp_path):
    kern = tmp_path / "kern"
    kern.mkdir()
    (kern / "caller.py").write_text(CALLER)
    (kern / "callee.py").write_text(CALLEE.format(1))
    cache_dir = str(tmp_path / "numba-cache")
    assert _run(kern, cache_dir, True) == 1  # compiled and cached
    (kern / "callee.py").write_text(CALLEE.format(2))  # the caller's own file is unchanged
    assert _run(kern, cache_dir, True) == 2


def test_fastcopy_kernels_carry_the_folder_digest():
    locator = crew.run_chunk._cache._impl.locator
    folder = os.path.dirname(os.path.abspath(cache.__file__))
    assert locator.get_source_stamp()[-1] == cache.sources_digest(folder)


def test_the_digest_follows_every_source_file(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 1\n")
    (tmp_path / "notes.txt").write_text("not a source\n")
    d0 = cache.sources_digest(str(tmp_path))
    (tmp_path / "notes.txt").write_text("changed\n")
    assert cache.sources_digest(str(tmp_path)) == d0
    (tmp_path / "b.py").write_text("y = 2\n")
    assert cache.sources_digest(str(tmp_path)) != d0
