"""The folder swap's fast path: a target absent when the writer began is renamed in without a second lstat, and
whatever appeared there meanwhile (a folder of yours, a file, a symlink, an earlier golden folder) is decided by
the full check, exactly as before."""

from __future__ import annotations

import os

import pytest

from fastcopy.golden import store
from fastcopy.golden.store import FolderWriter, GoldenWriteError


def _write(d, during=None):
    with FolderWriter(str(d)) as w:
        w.write("input/x.bin", b"new")
        if during is not None:
            during()
        w.write("manifest.json", b"{}\n")


def _no_temporaries(parent):
    return [n for n in os.listdir(parent) if n.startswith(".")] == []


def test_new_folders_cost_no_lstat_once_the_parent_is_listed(tmp_path, monkeypatch):
    calls = []
    real = os.lstat

    def counting(path, *a, **k):
        calls.append(os.fspath(path))
        return real(path, *a, **k)

    monkeypatch.setattr(store.os, "lstat", counting)
    fast = store._RENAME_KEEPS_FULL_FOLDERS
    d, e = tmp_path / "d", tmp_path / "e"
    _write(d)  # the parent's first folder: checked before (the parent not yet listed), renamed straight in
    assert calls.count(str(d)) == (1 if fast else 2)
    calls.clear()
    _write(e)  # a name the parent's listing did not hold: no lstat at all
    assert calls.count(str(e)) == (0 if fast else 2)
    calls.clear()
    _write(d)  # written since the listing: the rename fails, the full check replaces it whole
    assert calls.count(str(d)) == (1 if fast else 2)
    for f in (d, e):
        assert sorted(os.listdir(f)) == ["input", "manifest.json"] and (f / "input" / "x.bin").read_bytes() == b"new"
    assert _no_temporaries(tmp_path)


def _mine(d):
    d.mkdir()
    (d / "notes.txt").write_text("mine")


def _file(d):
    d.write_text("mine")


def _link(d):
    other = d.parent / "elsewhere"
    other.mkdir()
    os.symlink(other, d)


@pytest.mark.parametrize("listed", [False, True])
@pytest.mark.parametrize("appear", [_mine, _file, _link])
def test_something_of_yours_appearing_while_writing_is_never_replaced(tmp_path, appear, listed):
    if listed:  # (the parent listed first: "d" is then taken as absent without an lstat)
        _write(tmp_path / "first")
    d = tmp_path / "d"
    with pytest.raises(GoldenWriteError):
        _write(d, lambda: appear(d))
    if appear is _mine:
        assert sorted(os.listdir(d)) == ["notes.txt"]
    elif appear is _file:
        assert d.read_text() == "mine"
    else:
        assert d.is_symlink() and os.listdir(tmp_path / "elsewhere") == []
    assert not listed or (tmp_path / "first" / "manifest.json").exists()
    assert _no_temporaries(tmp_path)


@pytest.mark.parametrize("listed", [False, True])
def test_a_golden_or_empty_folder_appearing_while_writing_is_replaced(tmp_path, listed):
    if listed:
        _write(tmp_path / "first")
    d = tmp_path / "d"

    def golden():
        (d / "output").mkdir(parents=True)
        (d / "manifest.json").write_text("old")

    _write(d, golden)
    assert sorted(os.listdir(d)) == ["input", "manifest.json"] and (d / "manifest.json").read_text() == "{}\n"
    e = tmp_path / "e"
    _write(e, e.mkdir)
    assert (e / "manifest.json").exists()
    assert _no_temporaries(tmp_path)


def test_temporary_names_are_distinct_and_new_in_a_forked_child(tmp_path):
    names = {store._unique() for _ in range(1000)}
    assert len(names) == 1000
    if not hasattr(os, "fork"):
        return
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        os.close(r)
        os.write(w, store._unique().encode())
        os._exit(0)
    os.close(w)
    child = os.read(r, 100).decode()
    os.close(r)
    os.waitpid(pid, 0)
    assert child not in names and child[:8] != next(iter(names))[:8]
