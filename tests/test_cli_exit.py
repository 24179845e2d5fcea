"""The ``fastcopy`` command as a process: ``python -m fastcopy`` and the console script run :func:`fastcopy.cli.entry`,
which leaves the objects alive at the end out of the collector's exit passes (``gc.freeze``), and changes nothing
else a user sees (exit status, output, files, exit handlers)."""

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
    return subprocess.run([sys.executable, "-c", PROBE + code, *args], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=300)


def test_python_m_fastcopy_freezes_before_exit_and_keeps_status_and_files(tmp_path):
    out = tmp_path / "out"
    code = ("import runpy, sys\n"
            "sys.argv = ['fastcopy', 'batch', sys.argv[1], '-o', sys.argv[2], '--no-progress']\n"
            "runpy.run_module('fastcopy', run_name='__main__')\n")
    p = _run(code, str(GOOD), str(out))
    assert p.returncode == 0, p.stderr
    assert "frozen=True" in p.stderr
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


def test_main_alone_does_not_freeze():
    """A program that calls main() goes on: its objects stay collectable."""
    p = _run("import sys\nfrom fastcopy.cli import main\nmain(['batch', '--help'])\n")
    assert "frozen=False" in p.stderr


def test_console_script_is_entry():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    scripts = cfg["options.entry_points"]["console_scripts"]
    assert "fastcopy = fastcopy.cli:entry" in [s.strip() for s in scripts.strip().splitlines()]
