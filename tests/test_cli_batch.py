"""``fastcopy batch``: several cases per process, one bad case never stops the others, summary and exit status."""

from __future__ import annotations

import io
import json
import pathlib

import pytest

from fastcopy.cli import main
from fastcopy.cli.progress import TqdmProgress
from fastcopy.golden.batch import run_batch

ROOT = pathlib.Path(__file__).resolve().parents[1]
GOOD = ROOT / "examples" / "slice_rows.toml"
SWEEP = ROOT / "examples" / "matmul_a_nd2nz_sweep.toml"

RUNTIME_BROKEN = (ROOT / "examples" / "datacopy_tiles.toml").read_text().replace(
    "params = {count = 64}", "params = {count = 6400}")  # reads past zLocal: OutOfBoundsError
MALFORMED = (ROOT / "examples" / "slice_rows.toml").read_text().replace('api = "DataCopy"', 'api = "DataCopyy"', 1)


@pytest.fixture
def cases(tmp_path):
    broken = tmp_path / "broken_run.toml"
    broken.write_text(RUNTIME_BROKEN)
    malformed = tmp_path / "malformed.toml"
    malformed.write_text(MALFORMED)
    return [str(GOOD), str(broken), str(SWEEP), str(malformed), str(tmp_path / "missing.toml")]


def _folder_files(folder: pathlib.Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "summary.json"}


@pytest.mark.parametrize("jobs", [1, 2])
def test_batch_runs_the_good_cases_and_reports_the_bad(tmp_path, capsys, cases, jobs):
    out = tmp_path / f"out{jobs}"
    rc = main(["batch", *cases, "-o", str(out), "--jobs", str(jobs)])
    captured = capsys.readouterr()
    text, err = captured.out, captured.err
    assert rc == 1
    # the good ones ran
    assert (out / "slice_rows" / "output" / "golden.bin").is_file()
    assert len(list((out / "matmul_a_nd2nz_sweep").glob("*/manifest.json"))) == 18
    # the bad ones are listed with their reasons
    # the bad ones are listed with their reasons, on stderr
    assert "3 failures:" in err and "failures" not in text
    assert "broken_run.toml: ops[7] DataCopy(zGm, zLocal): OutOfBoundsError" in err
    assert "malformed.toml: ops[0].api: unknown op 'DataCopyy'" in err
    assert "missing.toml: cannot read the case file" in err
    assert not (out / "datacopy_tiles").exists()  # the broken case (named so inside) wrote nothing
    # summary table: one row per case file, and the total
    rows = {ln.split()[0]: ln.split()[1:] for ln in text.splitlines() if ln and not ln.startswith("-")}
    assert rows[str(SWEEP)][:3] == ["18", "18", "0"]
    assert rows["total"][:3] == ["22", "19", "3"]
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["ok"], summary["points"], summary["failed"]) == (False, 22, 3)
    assert summary["jobs"] == jobs


def test_jobs_1_and_2_write_identical_folders(tmp_path, cases):
    r1 = run_batch(cases[:3], str(tmp_path / "a"), jobs=1)
    r2 = run_batch(cases[:3], str(tmp_path / "b"), jobs=2)
    assert len(r1.failed) == len(r2.failed) == 1
    assert _folder_files(tmp_path / "a") == _folder_files(tmp_path / "b")


def test_all_good_batch_exits_0_and_names_do_not_clash(tmp_path, capsys):
    other = tmp_path / "x" / "slice_rows.toml"
    other.parent.mkdir()
    other.write_text(GOOD.read_text())
    assert main(["batch", str(GOOD), str(other), "-o", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "slice_rows" / "manifest.json").is_file()
    assert (tmp_path / "out" / "slice_rows-2" / "manifest.json").is_file()
    assert "failure" not in capsys.readouterr().out


def test_seed_override_and_strict(tmp_path):
    rep = run_batch([str(GOOD)], str(tmp_path / "s"), seed=7)
    m = json.loads((tmp_path / "s" / "slice_rows" / "manifest.json").read_text())
    assert rep.ok and (m["seed"], m["seed_source"]) == (7, "command line")
    warn = tmp_path / "warn.toml"
    warn.write_text((ROOT / "examples" / "datacopy_tiles.toml").read_text().replace(
        "params = {count = 64}", "params = {count = 60}"))  # rounds down: a FastCopyWarning
    rep = run_batch([str(warn)], str(tmp_path / "w"))
    assert rep.ok and rep.outcomes[0].warnings and "rounded down" in rep.outcomes[0].warnings[0]
    rep = run_batch([str(warn)], str(tmp_path / "w2"), strict=True)
    assert not rep.ok and "--strict" in rep.failed[0].error


def test_progress_bar_draws_rate_and_eta_on_a_stream():
    buf = io.StringIO()
    bar = TqdmProgress("points", buf)
    bar(0, 4, 0)
    bar(2, 4, 0)
    bar(4, 4, 1)
    bar.close()
    text = buf.getvalue()
    assert "4/4" in text and "1 failed" in text and "points/s" in text and "<" in text  # rate and ETA


def test_no_progress_bar_when_not_a_terminal(tmp_path, capsys):
    assert main(["batch", str(GOOD), "-o", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "points/s" not in err and "%|" not in err


def test_bad_jobs_value(tmp_path, capsys):
    assert main(["batch", str(GOOD), "-o", str(tmp_path), "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err


def test_quiet_and_verbose(tmp_path, capsys):
    assert main(["batch", str(SWEEP), "-o", str(tmp_path / "q"), "-q"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert main(["batch", str(SWEEP), "-o", str(tmp_path / "v"), "-v"]) == 0
    assert "total" in capsys.readouterr().out


def test_progress_only_on_a_terminal(monkeypatch):
    import argparse

    from fastcopy.cli.progress import progress_for

    class Tty(io.StringIO):
        def isatty(self):
            return True

    args = argparse.Namespace(quiet=False, no_progress=False)
    assert progress_for(args, stream=io.StringIO()) is None
    bar = progress_for(args, stream=Tty())
    assert bar is not None
    bar.close()
    assert progress_for(argparse.Namespace(quiet=True, no_progress=False), stream=Tty()) is None
    assert progress_for(argparse.Namespace(quiet=False, no_progress=True), stream=Tty()) is None
