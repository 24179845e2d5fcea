"""The ``fastcopy`` command as a process: ``python -m fastcopy`` and the console script run :func:`fastcopy.cli.entry`,
which leaves the objects alive at the end out of the collector's exit passes (``gc.freeze``) and ends the process
without the interpreter's teardown (:func:`fastcopy.cli.end_process`), and changes nothing else a user sees (exit
status, output, files, threads, exit handlers)."""

from __future__ import annotations

import configparser
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOOD = ROOT / "examples" / "slice_rows.toml"

# an exit handler registered before the command: it sees what the interpreter's exit will see
PROBE = ("import atexit, gc, sys\n"
         "atexit.register(lambda: sys.stderr.write(f'frozen={gc.get_freeze_count() > 0}\\n'))\n")


def _run(code: str, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONUNBUFFERED", None)  # (set, Python's and the C library's stdout are unbuffered: nothing to lose)
    return subprocess.run([sys.executable, "-c", PROBE + code, *args], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=300)


def test_python_m_fastcopy_freezes_before_exit_and_keeps_status_and_files(tmp_path):
    out = tmp_path / "out"
    code = ("import runpy, sys\n"
            "class Noisy:\n    def __del__(self):\n        sys.stderr.write('teardown\\n')\n"
            "keep = Noisy()  # (freed by the interpreter's teardown, which end_process leaves out)\n"
            "sys.argv = ['fastcopy', 'batch', sys.argv[1], '-o', sys.argv[2], '--no-progress']\n"
            "runpy.run_module('fastcopy', run_name='__main__')\n")
    p = _run(code, str(GOOD), str(out))
    assert p.returncode == 0, p.stderr
    assert "frozen=True" in p.stderr and "teardown" not in p.stderr
    assert (out / "slice_rows" / "manifest.json").is_file()
    assert "slice_rows" in p.stdout  # (the summary table, flushed before the process ended)


def test_entry_keeps_a_failing_commands_status(tmp_path):
    code = ("import sys\nfrom fastcopy.cli import entry\n"
            "sys.argv = ['fastcopy', 'batch', sys.argv[1], '-o', sys.argv[2], '--no-progress']\n"
            "sys.exit(entry())\n")
    p = _run(code, str(tmp_path / "missing.toml"), str(tmp_path / "out"))
    assert p.returncode == 1, p.stderr
    assert "frozen=True" in p.stderr
    p = _run("import sys\nfrom fastcopy.cli import entry\nsys.argv = ['fastcopy', '--no-such-option']\n"
             "sys.exit(entry())\n")
    assert p.returncode == 2  # (argparse's usage error)
    assert "frozen=True" in p.stderr


_END = """
import atexit, ctypes, sys, threading, time
from fastcopy.cli import end_process

class Noisy:
    def __del__(self):
        sys.stdout.write("teardown\\n")

keep = Noisy()  # (freed by the interpreter's teardown)

def late():
    time.sleep(0.05)
    sys.stdout.write("thread\\n")

threading.Thread(target=late).start()
atexit.register(lambda: sys.stdout.write("atexit\\n"))
sys.stdout.write("buffered ")  # (stdout is a pipe: held in Python's buffer)
ctypes.CDLL(None).printf(b"c-level\\n")  # (held in the C library's buffer)
"""


def test_end_process_runs_the_exit_steps_anyone_sees_and_skips_the_teardown():
    lost = _run(_END + "import os\nos._exit(3)\n")  # (the buffers are real: os._exit alone loses them)
    assert lost.returncode == 3 and sorted(lost.stdout.split()) == []
    fast = _run(_END + "end_process(3)\n")
    assert fast.returncode == 3, fast.stderr
    assert sorted(fast.stdout.split()) == ["atexit", "buffered", "c-level", "thread"]
    assert "frozen=True" in fast.stderr  # (PROBE: an exit handler registered before, run after the freeze)
    # the interpreter's own exit prints the same and, in its teardown, the finalizer's line
    plain = _run(_END + "sys.exit(3)\n")
    assert plain.returncode == 3 and sorted(plain.stdout.split()) == ["atexit", "buffered", "c-level", "teardown",
                                                                       "thread"]


def test_a_failed_flush_leaves_through_the_interpreters_exit():
    code = ("import io, sys\nfrom fastcopy.cli import end_process\n"
            "class Broken(io.StringIO):\n    def flush(self):\n        raise BrokenPipeError(32, 'Broken pipe')\n"
            "sys.stdout = Broken()\nsys.exit(end_process(0))\n")
    p = _run(code)
    assert p.returncode == 120  # (the interpreter's status for a flush that fails at exit)
    assert p.stderr.count("frozen=True") == 1  # (the exit handlers ran once)
    assert "BrokenPipeError" in p.stderr


def test_main_alone_does_not_freeze():
    """A program that calls main() goes on: its objects stay collectable."""
    p = _run("import sys\nfrom fastcopy.cli import main\nmain(['batch', '--help'])\n")
    assert "frozen=False" in p.stderr


def test_console_script_is_entry():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    scripts = cfg["options.entry_points"]["console_scripts"]
    assert "fastcopy = fastcopy.cli:entry" in [s.strip() for s in scripts.strip().splitlines()]
