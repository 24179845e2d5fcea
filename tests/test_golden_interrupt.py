"""``fastcopy run`` / ``batch`` interrupted by SIGINT or SIGKILL at random moments: every folder that has a
manifest.json matches it exactly (every listed file with its sha256, nothing else), and Ctrl-C ends with one
line and a summary, never a traceback."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SLOW_SWEEP = """
name = "slow"
product = "ATLAS_A2"
outputs = ["yGm", "xGm"]

[sweep]
k = [{points}]

[buffers.xGm]
dtype = "float"
shape = [262144]
init = {{kind = "uniform", low = -1.0, high = "=1.0 + k"}}

[buffers.yGm]
dtype = "float"
shape = [262144]

[buffers.u]
position = "VECIN"
dtype = "float"
count = 16384

[[ops]]
api = "DataCopy"
dst = "u"
src = "xGm"
params = {{count = 16384}}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "u"
params = {{count = 16384}}

[[ops]]
api = "DataCopy"
dst = "u"
src = "xGm[16384]"
params = {{count = 16384}}

[[ops]]
api = "DataCopy"
dst = "yGm[245760]"
src = "u"
params = {{count = 16384}}
"""


def _sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        h.update(fh.read())
    return h.hexdigest()


def check_tree(root) -> int:
    """Every folder with a manifest.json matches it; returns how many complete folders there are."""
    complete = 0
    for folder, dirs, files in os.walk(root):
        if "manifest.json" not in files:
            continue
        with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as fh:
            manifest = json.load(fh)
        listed = set(manifest["files"])
        present = set()
        for sub, _, fs in os.walk(folder):
            rel = os.path.relpath(sub, folder)
            if rel != "." and rel.split(os.sep)[0] not in ("input", "output"):
                continue  # a sweep point folder below (checked on its own)
            present |= {os.path.normpath(os.path.join(rel, f)).replace(os.sep, "/") for f in fs}
        assert present == listed, (folder, present ^ listed)
        for b in manifest["buffers"]:
            if "file" in b:
                assert _sha(os.path.join(folder, b["file"])) == b["sha256"], (folder, b["file"])
            if "mask" in b:
                assert _sha(os.path.join(folder, b["mask"])) == b["mask_sha256"], (folder, b["mask"])
        dirs[:] = [d for d in dirs if d not in ("input", "output")]
        complete += 1
    return complete


def _launch(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "fastcopy", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_default_sigint)


def _default_sigint():
    # a test run started in the background of a non-interactive shell inherits SIGINT ignored (POSIX shells do
    # that to background jobs), and Python keeps an ignored SIGINT ignored: give the child the default, like a
    # terminal's Ctrl-C would find
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _manifests(root) -> set:
    """(folder, manifest mtime) of every manifest under ``root`` now. The batch runs meanwhile: a hidden folder
    listed by the walk may be renamed into place before its manifest is stat'ed; it is then seen under its final
    name at the next look."""
    found = set()
    for f, _, files in os.walk(root):
        if "manifest.json" in files:
            try:
                found.add((f, os.stat(os.path.join(f, "manifest.json")).st_mtime_ns))
            except FileNotFoundError:
                continue
    return found


def _wait_for_new_folder(root, proc, limit=60.0):
    """Wait until the process has written a folder (so it is past start-up and in the middle of its work)."""
    before = _manifests(root)
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and proc.poll() is None:
        if _manifests(root) - before:
            return
        time.sleep(0.02)


#: Enough points that no run finishes in the 0.6 s the test waits before interrupting it (an interrupted run
#: costs the same whatever the number)
POINTS = 400


@pytest.mark.parametrize("trial", range(4))
def test_interrupted_batch_and_run_leave_only_complete_folders(tmp_path, trial):
    rng = random.Random(1000 + trial)
    case = tmp_path / "slow.toml"
    case.write_text(SLOW_SWEEP.format(points=", ".join(str(i) for i in range(POINTS))))
    out = tmp_path / "out"
    # a first complete run into part of the folder, so interrupted re-runs replace existing folders too
    if trial % 2:
        first = _launch(["run", str(case), "-o", str(out / "slow"), "--point", "3", "-q"], tmp_path)
        assert first.wait(120) == 0, first.stderr.read()
    sig = signal.SIGINT if trial < 2 else signal.SIGKILL
    cmd = (["batch", str(case), "-o", str(out), "--jobs", "2"] if trial in (0, 2)
           else ["run", str(case), "-o", str(out / "slow")])
    proc = _launch(cmd, tmp_path)
    _wait_for_new_folder(out, proc)
    time.sleep(rng.uniform(0.0, 0.6))
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
    _, err = proc.communicate(timeout=120)
    if sig == signal.SIGKILL:
        time.sleep(0.2)  # the killed process group is gone
    assert check_tree(out) >= 1
    if sig == signal.SIGINT and proc.returncode == 0:
        # the signal landed after the last point (during interpreter shutdown): then the run must be complete
        assert "Traceback" not in err, err
        if cmd[0] == "batch":
            summary = json.loads((out / "summary.json").read_text())
            assert summary["ok"] is True and summary["points"] == summary["total"] == 60
    elif sig == signal.SIGINT:
        assert proc.returncode == 130, err
        assert "Traceback" not in err, err
        lines = [ln for ln in err.splitlines() if "interrupted" in ln]
        assert len(lines) == 1 and "written" in lines[0], err
        hidden = [n for n in os.listdir(out / "slow") if n.startswith(".")]
        assert hidden == [], hidden
        if cmd[0] == "batch":
            summary = json.loads((out / "summary.json").read_text())
            assert summary["interrupted"] is True and summary["ok"] is False
            assert summary["total"] == POINTS and summary["points"] == len(summary["outcomes"])
            # every point folder on disk is in the summary (workers' finished points are reported too)
            on_disk = {int(n) for n in os.listdir(out / "slow") if n.isdigit()}
            assert on_disk == {o["index"] for o in summary["outcomes"] if o["ok"]}
    # a complete re-run afterwards cleans up whatever the interruption left and is whole
    again = _launch(["run", str(case), "-o", str(out / "slow"), "-q", "--point", "5"], tmp_path)
    assert again.wait(120) == 0, again.stderr.read()
    assert not [n for n in os.listdir(out / "slow") if n.startswith(".0005")]
    assert check_tree(out) >= 1
