"""Writing golden folders safely: one path component per name, no symlinks, atomic files, whole-folder swaps.

A golden folder is complete exactly when its ``manifest.json`` exists and every file the manifest lists matches
its sha256. The writer keeps that true whatever happens (an error, Ctrl-C, ``kill -9``):

- a folder is built in a fresh hidden sibling (``.NAME.fastcopy-new-<pid>-<random>``), every file written with
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` (never through a symlink, never over an existing file), the manifest last;
- the finished sibling then replaces the folder: the old folder is renamed away, the new one renamed in, the old
  one removed. At any moment the folder is either the old complete folder, absent, or the new complete folder;
- leftovers of an interrupted write (hidden siblings whose process is gone) are removed by the next write;
- a folder is only ever replaced when it is empty or a fastcopy golden folder (only ``input/``, ``output/``,
  ``manifest.json``, and the ``NNNN/`` golden folders of an earlier sweep): fastcopy never deletes a folder of
  yours.

Single files (``summary.json``) are written to a temporary name and renamed over the target.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat

import numpy as np

from ..errors import FastCopyError

#: What a golden folder may contain at its top level (anything else: not ours, never replaced).
GOLDEN_ENTRIES = frozenset({"input", "output", "manifest.json"})
_TMP_TAG = ".fastcopy-"
_CHUNK = 1 << 24  # bytes hashed / written per step (no whole-buffer copies)


class GoldenWriteError(FastCopyError):
    """A golden folder or file that fastcopy refuses to write (symlink, not a golden folder, collision)."""


def safe_component(name: str, default: str = "case") -> str:
    """``name`` as one safe path component: letters, digits, ``- _ .`` kept, everything else ``_``; no leading
    dots (so never ``.``/``..`` or hidden); never empty."""
    out = "".join(ch if (ch.isascii() and ch.isalnum()) or ch in "-_." else "_" for ch in str(name))
    out = out.lstrip(".")[:200]
    return out or default


def check_relative(rel: str, what: str = "file") -> None:
    """``rel`` is a relative path of plain components inside a golden folder (no ``..``, no absolute path)."""
    parts = rel.split("/")
    if os.path.isabs(rel) or not parts or any(p in ("", ".", "..") or not re.match(r"^[\w.-]+$", p)
                                              for p in parts):
        raise GoldenWriteError(f"{what} {rel!r} is not a plain relative path inside the golden folder")


def check_collisions(paths, where: str = "") -> None:
    """Every file a case writes is distinct (also on a case-insensitive file system), and no file is another's
    folder. Raised before anything is written. (A list that passed is remembered: a sweep's points share it.)"""
    key = tuple(paths)
    if key in _NO_COLLISION:
        return
    _check_collisions(key, where)
    if len(_NO_COLLISION) >= 1024:
        _NO_COLLISION.clear()
    _NO_COLLISION.add(key)


_NO_COLLISION: set = set()  # file lists that passed check_collisions


def checked_before(paths) -> bool:
    """Whether the file list ``paths`` passed :func:`check_collisions` already (in this order)."""
    return tuple(paths) in _NO_COLLISION


def _check_collisions(paths: tuple, where: str) -> None:
    seen: dict = {}
    for p in paths:
        check_relative(p)
        key = p.lower()
        if key in seen:
            same = "the same file" if seen[key] == p else f"the same file on a case-insensitive disk ({seen[key]!r})"
            raise GoldenWriteError(f"{where}two files would be written to {p!r} ({same}); give the outputs / "
                                   "inputs distinct file names")
        seen[key] = p
    folders = {"/".join(p.lower().split("/")[:k]) for p in seen for k in range(1, p.count("/") + 1)}
    clash = folders & set(seen)
    if clash:
        raise GoldenWriteError(f"{where}{seen[sorted(clash)[0]]!r} would be both a file and a folder")


def byte_view(arr: np.ndarray) -> memoryview:
    """The bytes of an array in C order (no copy when it is C-contiguous)."""
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
    return memoryview(arr.reshape(-1).view(np.uint8))


def sha256_of(arr) -> str:
    """The sha256 of the bytes of ``arr`` (an array: in C order; or bytes-like)."""
    if type(arr) is np.ndarray and arr.flags.c_contiguous and arr.nbytes <= _CHUNK:  # (most: read as it is)
        return hashlib.sha256(arr).hexdigest()
    data, n = _flat(arr)
    if n <= _CHUNK:
        return hashlib.sha256(data).hexdigest()
    view = _bytes(data)
    h = hashlib.sha256()
    for i in range(0, n, _CHUNK):
        h.update(view[i:i + _CHUNK])
    return h.hexdigest()


def mask_sha256(mask: np.ndarray, defined: int) -> str:
    """:func:`sha256_of` a definedness mask (uint8, 1 = defined) with ``defined`` elements defined. A mask of all
    ones (a fully defined output: most) is compared byte for byte with ones of its size, whose digest is kept
    (so ~0.1 us, not a hash of its bytes); any other mask is hashed."""
    n = mask.nbytes
    if defined == mask.size and n <= _ONES_BYTES:
        kept = _ONES.get(n)
        if kept is None:
            if len(_ONES) >= 256:
                _ONES.clear()
            ones = b"\x01" * n
            kept = _ONES[n] = (ones, hashlib.sha256(ones).hexdigest())
        if mask.tobytes() == kept[0]:  # (the C-order bytes sha256_of hashes)
            return kept[1]
    return sha256_of(mask)


_ONES: dict = {}  # size in bytes -> (that many bytes of 1, their sha256)
_ONES_BYTES = 1 << 16  # (larger masks are hashed)


def _flat(data) -> tuple:
    """``(data, its size in bytes)``: a C-contiguous array as it is (what ``os.write`` and ``hashlib`` read whole,
    without the cost of a view), any other array as :func:`byte_view`, anything else as a memoryview."""
    if type(data) is np.ndarray:
        if data.flags.c_contiguous:
            return data, data.nbytes
        data = byte_view(data)
    elif type(data) is not bytes:
        data = memoryview(data)
    return data, data.nbytes if type(data) is not bytes else len(data)


def _bytes(data) -> memoryview:
    """A flat byte memoryview of what :func:`_flat` returned (slicing it takes bytes, whatever the dtype)."""
    if isinstance(data, np.ndarray):
        return byte_view(data)
    return memoryview(data).cast("B")


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def atomic_write(path: str, data) -> None:
    """Write ``data`` (bytes or an array) to ``path`` through a temporary name and a rename. A symlink at
    ``path`` is replaced by the file, never followed."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}{_TMP_TAG}{os.getpid()}-{os.urandom(4).hex()}")
    try:
        _write_new(tmp, data)
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            import shutil  # (only to remove a folder: a batch that writes imports none of its ~2 ms)

            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    try:  # a killed writer not yet reaped (a zombie) still has its pid, but writes nothing any more
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


_LEFTOVERS: dict = {}  # parent folder -> {base name: [(hidden temporary, pid)]}, from one scan per process
_LISTED: dict = {}  # parent folder -> the names it held at that scan


def _clean_leftovers(parent: str, base: str, absolute: bool = False) -> None:
    """Remove hidden temporary siblings of ``base`` left by writers that no longer run.

    The parent folder is listed once per process and its temporaries indexed by base name: a batch writes
    thousands of point folders into one parent, and listing it for every write would cost O(points) each
    (O(points^2) in all). Leftovers of a writer that dies later are hidden and removed by the next process that
    writes the same folder. (``absolute``: ``parent`` is already an absolute path.)"""
    key = parent if absolute else os.path.abspath(parent)
    found = _LEFTOVERS.get(key)
    if found is None:
        try:
            names = os.listdir(parent)
        except OSError:
            return
        found = _LEFTOVERS[key] = {}
        _LISTED[key] = frozenset(names)
        for n in names:
            m = re.match(rf"^\.(.+?){re.escape(_TMP_TAG)}(?:new|old)-(\d+)-", n)
            if m:
                found.setdefault(m.group(1), []).append((n, int(m.group(2))))
    for n, pid in found.pop(base, ()):
        if not _pid_alive(pid):
            _remove(os.path.join(parent, n))


def check_replaceable(directory: str) -> bool:
    """Raise unless ``directory`` is absent, empty, or a fastcopy golden folder (which may be replaced); return
    whether it exists (one ``lstat`` when it does not)."""
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode):
        raise GoldenWriteError(f"{directory} is a symbolic link; fastcopy never writes through a symlink (give "
                               "the real folder, or remove the link)")
    if not stat.S_ISDIR(st.st_mode):
        raise GoldenWriteError(f"{directory} exists and is not a folder")
    extra = sorted(n for n in set(os.listdir(directory)) - GOLDEN_ENTRIES if not _is_point_folder(directory, n))
    if extra:
        raise GoldenWriteError(f"{directory} exists and is not a fastcopy golden folder (it holds {extra[0]!r}"
                               f"{' and more' if len(extra) > 1 else ''}); fastcopy replaces a golden folder as a "
                               "whole, so give a new or empty folder")
    return True


def _is_point_folder(directory: str, name: str) -> bool:
    """``NNNN/`` of an earlier sweep run into the same folder: itself a complete fastcopy golden folder."""
    path = os.path.join(directory, name)
    if not name.isdigit() or os.path.islink(path) or not os.path.isfile(os.path.join(path, "manifest.json")):
        return False
    return set(os.listdir(path)) <= GOLDEN_ENTRIES


class FolderWriter:
    """Build a golden folder in a hidden sibling, then swap it in: ``with FolderWriter(d) as w: w.write(rel,
    data); ...; w.write("manifest.json", text)``. On an exception nothing changes at ``d``.

    Few system calls per folder (a batch writes thousands of small ones): one ``lstat`` of the target before and
    one after (none when the parent's listing, made once per process, did not hold the name, and none after when
    it was absent before: the rename in then fails over anything but an empty folder, and only then is the target
    checked), the hidden sibling made with ``mkdir`` (the umask applies, as for any new folder), each sub-folder
    made once, each file one ``open(O_CREAT | O_EXCL | O_NOFOLLOW)``, its writes and a close, then the renames.
    Temporary names end in a random token made once per process and a counter (no random bytes per folder).
    No fsync: the guarantee is atomicity (a reader sees the old folder, none, or the new complete one), not
    durability across a power cut."""

    def __init__(self, directory: str):
        self.directory = os.path.abspath(directory)
        self.parent, self.base = os.path.split(self.directory)
        self.tmp = None
        self.existed = True  # (until __enter__ has seen the target absent)
        self._dirs: set = set()

    def __enter__(self):
        self.tmp, self.existed = _begin(self.parent, self.base)
        return self

    def write(self, rel: str, data) -> None:
        """Write ``data`` (bytes-like, or an array: its bytes in C order) to the new file ``rel``."""
        _write_files(self.tmp, ((rel, data),), self._dirs)

    def write_all(self, files) -> None:
        """:meth:`write` each ``(rel, data)`` of ``files``, in order (one call for a whole folder: a batch point's
        files cost their system calls and little more)."""
        _write_files(self.tmp, files, self._dirs)

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                _swap(self.parent, self.base, self.tmp, self.existed)
                return False
        except BaseException:
            _remove(self.tmp)
            raise
        _remove(self.tmp)
        return False


def write_folder(directory: str, files, at: tuple | None = None) -> None:
    """Write the folder ``directory`` whole, as a :class:`FolderWriter` does: ``files`` is a list of ``(relative
    path, data)``, written in order (the manifest last). ``at``: ``os.path.split(os.path.abspath(directory))``
    when the caller has it already (a batch computes its case folder's absolute path once per chunk)."""
    parent, base = at if at is not None else os.path.split(os.path.abspath(directory))
    tmp, existed = _begin(parent, base)
    try:
        _write_files(tmp, files, set())
        _swap(parent, base, tmp, existed)
    except BaseException:
        _remove(tmp)
        raise


def _begin(parent: str, base: str) -> tuple:
    """``(the hidden sibling made for the folder base in parent, whether the target existed)``, the target checked
    (:func:`check_replaceable`) when it may exist; ``parent`` is absolute and normalised."""
    # A name the parent did not hold when this process listed it (a batch's new point folders) is taken as
    # absent, without an lstat: if it exists by now (written since, or made by someone else), the swap's
    # rename fails and the full check decides there, as for anything that appears while we write.
    listed = _LISTED.get(parent) if _RENAME_KEEPS_FULL_FOLDERS else None
    existed = listed is None or base in listed
    if existed:
        existed = check_replaceable(os.path.join(parent, base))
    if parent not in _PARENTS:
        os.makedirs(parent, exist_ok=True)
    found = _LEFTOVERS.get(parent)
    if found is None or found:  # (the parent not yet listed, or leftovers in it)
        _clean_leftovers(parent, base, absolute=True)
    prefix = f"{parent}{os.sep}.{base}{_TMP_TAG}new-{os.getpid()}-"  # (os.path.join's result)
    tmp = None
    try:  # (an interrupt at any point here, even between the mkdir and the next line, leaves nothing)
        for _ in range(100):
            tmp = prefix + _unique()
            try:
                os.mkdir(tmp, 0o777)  # never an existing folder; mode 0o777 less the umask
                break
            except FileExistsError:
                tmp = None
            except FileNotFoundError:  # the parent went away since we saw it
                tmp = None
                _PARENTS.discard(parent)
                os.makedirs(parent, exist_ok=True)
        else:
            raise GoldenWriteError(f"cannot make a temporary folder in {parent}")
        _PARENTS.add(parent)
    except BaseException:
        if tmp is not None and os.path.lexists(tmp):
            _remove(tmp)
        raise
    return tmp, existed


def _write_files(tmp: str, files, dirs: set) -> None:
    """Write each ``(rel, data)`` of ``files`` into the hidden folder ``tmp``, making the sub-folders not in
    ``dirs`` (which records those made)."""
    tmp += os.sep  # (tmp never ends in a separator)
    for rel, data in files:
        local, subs = _CHECKED.get(rel) or _checked(rel)
        for sub in subs:
            if sub not in dirs:
                try:
                    os.mkdir(tmp + sub)
                except FileExistsError:
                    pass
                dirs.add(sub)
        _write_new(tmp + local, data)


def _swap(parent: str, base: str, tmp: str, existed: bool) -> None:
    """Put the finished hidden folder ``tmp`` in the place of ``parent/base`` (see :class:`FolderWriter`)."""
    directory = parent + base if parent.endswith(os.sep) else f"{parent}{os.sep}{base}"  # (os.path.join's)
    if not existed and _RENAME_KEEPS_FULL_FOLDERS:
        # Absent when we began (the usual case in a batch): rename straight in, no second lstat. The rename
        # only succeeds when the target is still absent or an empty folder (both replaceable); over anything
        # else (a non-empty folder, a file, a symlink) it fails, and the full check below decides.
        try:
            os.rename(tmp, directory)
            return
        except OSError:
            pass
    exists = check_replaceable(directory)  # again: it may have changed while we computed
    old = None
    if exists:
        old = os.path.join(parent, f".{base}{_TMP_TAG}old-{os.getpid()}-{_unique()}")
        os.rename(directory, old)
    try:
        os.rename(tmp, directory)
    except BaseException:
        if old is not None and not os.path.lexists(directory):
            os.rename(old, directory)
        raise
    if old is not None:
        _remove(old)


#: POSIX: renaming a folder over a non-empty folder, a file or a symlink fails (only an empty folder is replaced)
_RENAME_KEEPS_FULL_FOLDERS = os.name == "posix"
_NAMES = [0, 0]  # (random token, counter) of this process's temporary names


def _new_token() -> None:
    _NAMES[:] = [int.from_bytes(os.urandom(4), "little"), 0]


def _unique() -> str:
    """A fresh suffix for a temporary name: a random token made once per process (again in a forked child) and a
    counter, so a folder costs no call for random bytes (a clash with a live name only retries the mkdir)."""
    names = _NAMES
    names[1] += 1
    return f"{names[0]:08x}{names[1]:x}"


_new_token()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_token)


_PARENTS: set = set()  # parent folders this process made or found (a sweep writes thousands of folders into one)
#: relative file paths already checked by check_relative -> (the path in this OS's spelling, its folders)
_CHECKED: dict = {}
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def _checked(rel: str) -> tuple:
    """``rel`` checked (:func:`check_relative`): its path in this OS's spelling and its folders, kept."""
    check_relative(rel)
    parts = rel.split("/")
    if len(_CHECKED) >= 4096:
        _CHECKED.clear()
    checked = _CHECKED[rel] = (os.path.join(*parts), tuple(os.path.join(*parts[:k]) for k in range(1, len(parts))))
    return checked


def _write_new(path: str, data) -> None:
    """Write ``data`` to the new file ``path`` (never through a symlink, never over an existing file). ``data``:
    bytes-like, or an array (its bytes in C order; a small C-contiguous one is written as it is, without a view)."""
    if type(data) is bytes:
        n = len(data)
    elif type(data) is np.ndarray and data.flags.c_contiguous:
        n = data.nbytes
    else:
        data, n = _flat(data)
    fd = os.open(path, _NEW_FILE, 0o666)
    try:
        done = os.write(fd, data) if n <= _CHUNK else 0  # (a small file: one write, unless it comes back short)
        if done < n:
            view = _bytes(data)
            while done < n:
                done += os.write(fd, view[done:done + _CHUNK])
    finally:
        os.close(fd)
