"""``fastcopy batch --dask`` / ``run_batch(client=)`` on a real ``LocalCluster`` of worker processes: the bytes of
``--jobs 1``, a killed worker's chunk retried, a raising point reported, ``--resume`` writing only what is
missing. One cluster (2 single-threaded worker processes) serves the whole module."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import sys

import pytest

distributed = pytest.importorskip("distributed")  # the test extra installs it; the skip only helps partial setups

import cloudpickle  # noqa: E402  (a dependency of distributed)

from fastcopy.cli import main  # noqa: E402
from fastcopy.golden import distributed as fcd  # noqa: E402
from fastcopy.golden.batch import run_batch  # noqa: E402

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the worker plugin below, sent by value

# 3 dtypes x 4 burst counts x 2 products = 24 points; bc = 5 reads past the 8-block source: those points raise
SWEEP = """
name = "multi"
product = ["ATLAS_A2", "ATLAS_TRAINING"]
seed = 5
outputs = ["yGm"]

[sweep]
dt = ["half", "float", "int8_t"]
bc = [1, 2, 3, BC]

[buffers.xGm]
dtype = "=dt"
shape = ["=4 * 2 * 32 // sizeof(dt)"]
init = {kind = "bits"}

[buffers.xLocal]
position = "VECIN"
dtype = "=dt"
count = "=bc * 32 // sizeof(dt)"

[buffers.yGm]
dtype = "=dt"
shape = ["=bc * 32 // sizeof(dt)"]

[[ops]]
api = "DataCopy"
dst = "xLocal"
src = "xGm"
params.DataCopyParams = {blockCount = "=bc", blockLen = 1, srcGap = 1, dstGap = 0}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "xLocal"
params = {count = "=bc * 32 // sizeof(dt)"}
"""


@pytest.fixture(scope="module")
def client():
    import dask

    # one task at a time per worker thread, so a killed worker takes exactly its own task down
    saturation = {"distributed.scheduler.worker-saturation": 1.0}
    with dask.config.set(saturation), distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                                               dashboard_address=":0", silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _case(tmp_path, bc_last=4, name="multi.toml"):
    p = tmp_path / name
    p.write_text(SWEEP.replace("BC", str(bc_last)))
    return str(p)


def _files(root: pathlib.Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "summary.json"}


def test_same_bytes_as_jobs_1_and_jobs_2(tmp_path, client):
    case = _case(tmp_path)
    ref = run_batch([case], str(tmp_path / "one"), jobs=1)
    assert ref.ok and len(ref.outcomes) == 24
    two = run_batch([case], str(tmp_path / "two"), jobs=2)
    rep = run_batch([case], str(tmp_path / "dask"), client=client, chunk_size=5)  # chunks across products/dtypes
    assert rep.ok and rep.dask == client.scheduler.address and rep.jobs == 2
    one = _files(tmp_path / "one")
    assert len(one) == 24 * 4 and one == _files(tmp_path / "two") == _files(tmp_path / "dask")
    assert two.ok
    summary = json.loads((tmp_path / "dask" / "summary.json").read_text())
    assert summary["dask"] == client.scheduler.address and summary["points"] == 24 and summary["ok"]


def test_a_raising_point_is_reported_and_the_others_complete(tmp_path, client, capsys):
    case = _case(tmp_path, bc_last=5)  # bc = 5: the gather reads past xGm (6 points)
    out = tmp_path / "out"
    rc = main(["batch", case, "-o", str(out), "--dask", client.scheduler.address, "--chunk-size", "4"])
    captured = capsys.readouterr()
    text, err = captured.out, captured.err
    assert rc == 1
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["ok"], summary["points"], summary["failed"]) == (False, 24, 6)
    bad = [o for o in summary["outcomes"] if not o["ok"]]
    # axes: dt, bc (named), then product (implicit, fastest)
    assert {o["index"] // 2 % 4 for o in bad} == {3} and all("OutOfBoundsError" in o["error"] for o in bad)
    assert len(list(out.glob("multi/*/manifest.json"))) == 18
    assert "6 failures:" in err and "on the Dask cluster" in text  # failures go to stderr


class KillPoint(distributed.WorkerPlugin):
    """SIGKILL the worker when it is about to write sweep point ``point`` (so mid-chunk: the chunk's earlier
    points are written), at most ``times`` times over the cluster (counted in the file ``log``)."""

    def __init__(self, log: str, point: int, times: int):
        self.log, self.point, self.times = log, point, times

    def setup(self, worker):
        from fastcopy.golden import work

        self.work, self.original = work, work.write_folder
        plugin = self

        def write_folder(directory, files, at=None):
            if os.path.basename(directory) == f"{plugin.point:04d}":
                with open(plugin.log, "a+") as fh:
                    fh.seek(0)
                    if len(fh.read().splitlines()) < plugin.times:
                        fh.write(f"killed at point {plugin.point}\n")
                        fh.flush()
                        os.kill(os.getpid(), signal.SIGKILL)
            return plugin.original(directory, files, at)

        work.write_folder = write_folder

    def teardown(self, worker):
        self.work.write_folder = self.original


def _with_plugin(client, plugin, name):
    client.register_plugin(plugin, name=name)
    return name


def test_a_killed_workers_chunk_is_retried_and_completes(tmp_path, client):
    case = _case(tmp_path)
    ref = run_batch([case], str(tmp_path / "ref"), jobs=1)
    log = tmp_path / "kills.txt"
    name = _with_plugin(client, KillPoint(str(log), point=9, times=1), "kill-once")
    try:
        rep = run_batch([case], str(tmp_path / "dask"), client=client, chunk_size=6)
    finally:
        client.unregister_worker_plugin(name)
    assert log.read_text().count("killed") == 1  # a worker died in the middle of the chunk of points 6-11
    assert rep.ok and len(rep.outcomes) == 24
    assert _files(tmp_path / "dask") == _files(tmp_path / "ref")
    assert ref.ok
    client.wait_for_workers(2, timeout=60)


def test_a_point_that_keeps_killing_workers_is_reported_not_lost(tmp_path, client):
    case = _case(tmp_path)
    log = tmp_path / "kills.txt"
    sched = client.cluster.scheduler
    allowed, sched.allowed_failures = sched.allowed_failures, 0  # fail after the first death (a faster test)
    name = _with_plugin(client, KillPoint(str(log), point=13, times=99), "kill-always")
    try:
        rep = run_batch([case], str(tmp_path / "dask"), client=client, chunk_size=4)
    finally:
        client.unregister_worker_plugin(name)
        sched.allowed_failures = allowed
    assert len(rep.outcomes) == 24
    assert [o.index for o in rep.failed] == [13]  # its chunk (12-15) was split; 12, 14, 15 completed
    assert "died while running it" in rep.failed[0].error and "multi.toml: point 13" in rep.failed[0].error
    assert len(list((tmp_path / "dask").glob("multi/*/manifest.json"))) == 23
    client.wait_for_workers(2, timeout=60)


def test_resume_writes_only_the_missing_points(tmp_path, client):
    case = _case(tmp_path)
    out = tmp_path / "out"
    assert run_batch([case], str(out), jobs=1).ok
    full = _files(out)
    # an interrupted run: two folders never written, one without its manifest, one with a file cut short
    import shutil

    points = sorted((out / "multi").iterdir())
    for p in points[3], points[17]:
        shutil.rmtree(p)
    (points[5] / "manifest.json").unlink()
    with open(points[20] / "output" / "golden.bin", "r+b") as fh:
        fh.truncate(2)
    stamp = {p.name: (p / "manifest.json").stat().st_mtime_ns for p in points if (p / "manifest.json").exists()}
    rep = run_batch([case], str(out), client=client, resume=True, chunk_size=4)
    assert rep.ok and len(rep.skipped) == 20
    assert sorted(o.index for o in rep.outcomes if not o.skipped) == [3, 5, 17, 20]
    assert _files(out) == full
    for p in points:
        if p.name in stamp and int(p.name) not in (20,):
            assert (p / "manifest.json").stat().st_mtime_ns == stamp[p.name]  # untouched
    # local runs resume too; a different --seed is a different point: everything is written again
    assert len(run_batch([case], str(out), jobs=1, resume=True).skipped) == 24
    assert not run_batch([case], str(out), jobs=2, seed=9, resume=True).skipped


def test_resume_rejects_a_changed_case_file(tmp_path):
    case = _case(tmp_path)
    out = tmp_path / "out"
    assert run_batch([case], str(out), jobs=1).ok
    pathlib.Path(case).write_text(SWEEP.replace("BC", "4").replace("seed = 5", "seed = 6"))
    rep = run_batch([case], str(out), jobs=1, resume=True)
    assert rep.ok and not rep.skipped


def test_chunk_size_and_local_spec():
    assert fcd.chunk_size(10_000, 2) == fcd.MAX_CHUNK
    assert fcd.chunk_size(24, 2) == 1 and fcd.chunk_size(160, 2) == 10
    assert fcd.parse_local("local:3") == 3 and fcd.parse_local("tcp://h:8786") is None
    assert fcd.parse_local("local") == (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="local:N"):
        fcd.parse_local("local:0")


def test_without_dask_the_flag_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    assert main(["batch", _case(tmp_path), "-o", str(tmp_path / "o"), "--dask", "local:2"]) == 2
    err = capsys.readouterr().err
    assert "not installed" in err and 'pip install "fastcopy-ascend[dask]"' in err
