"""Deterministic tar.gz archives of run folders, and their safe extraction.

Creating: every directory and file below the run folder, sorted, stored under one top
folder named after the run folder; mtime 0, uid/gid 0, empty user/group names,
mode 0755 for directories and 0644 for files, PAX format; gzip level 9 with header
mtime 0 and no file name. Archiving the same run twice gives byte-identical files.

Extracting: every member is checked before anything is written. Absolute paths,
``..`` components, symbolic and hard links, devices, fifos, duplicate names and
oversized archives are refused; files are then written with ``O_EXCL | O_NOFOLLOW``
below the destination folder only.
"""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import zlib
from pathlib import Path, PurePosixPath

from generator.evidence.canonical import read_json
from generator.evidence.manifest import MANIFEST_NAME, ManifestError, build_manifest

ARCHIVE_MTIME = 0
GZIP_LEVEL = 9
FILE_MODE = 0o644
DIR_MODE = 0o755
# Upper bounds on what extraction accepts: far above any run (a run is a few MB),
# low enough that a decompression bomb cannot fill the disk.
MAX_MEMBERS = 100_000
MAX_TOTAL_BYTES = 4 * 1024**3
_COPY_CHUNK = 1 << 20


class ArchiveError(ValueError):
    """The archive cannot be read (corrupt, truncated, not a gzip'd tar)."""


class UnsafeArchiveError(ValueError):
    """The archive holds an entry that could write outside the destination or is not a file.

    Attributes:
        member: the offending entry's name as stored.
        reason: why it is refused.
    """

    def __init__(self, member: str, reason: str):
        self.member = member
        self.reason = reason
        super().__init__(f"unsafe archive entry {member!r}: {reason}")


def create_archive(run_dir: Path, out_file: Path) -> Path:
    """Write a deterministic ``.tar.gz`` of ``run_dir`` to ``out_file``.

    Args:
        run_dir: run or demo folder.
        out_file: archive to write (replaced atomically if it exists; must not be
            inside ``run_dir``).

    Raises:
        ManifestError: the folder holds a link or a special file, has no manifest, or its
            manifest does not describe its files (only complete, manifested runs are
            archived, as only they are signed).
        ValueError: ``out_file`` lies inside ``run_dir``.
    """
    run_dir, out_file = Path(run_dir), Path(out_file)
    if out_file.resolve().is_relative_to(run_dir.resolve()):
        raise ValueError(f"the archive {out_file} must not be written inside {run_dir}")
    manifest_path = run_dir / MANIFEST_NAME
    if not manifest_path.is_file():
        raise ManifestError(f"{run_dir} has no {MANIFEST_NAME}: not a complete run folder")
    if read_json(manifest_path) != build_manifest(run_dir):
        raise ManifestError(f"{run_dir}: {MANIFEST_NAME} does not match the files; refusing "
                            "to archive a run that would not verify")
    top = run_dir.resolve().name
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(_dir_info(top))
        for rel, is_dir in _walk_sorted(run_dir):
            name = f"{top}/{rel}"
            if is_dir:
                tar.addfile(_dir_info(name))
                continue
            data = (run_dir / rel).read_bytes()
            info = _file_info(name, len(data))
            tar.addfile(info, io.BytesIO(data))
    tmp = out_file.with_name(f".{out_file.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw,
                                               compresslevel=GZIP_LEVEL,
                                               mtime=ARCHIVE_MTIME) as gz:
        gz.write(buffer.getvalue())
    os.replace(tmp, out_file)
    return out_file


def _walk_sorted(run_dir: Path) -> list[tuple[str, bool]]:
    entries: list[tuple[str, bool]] = []
    for root, dirs, files in os.walk(run_dir, followlinks=False):
        for name in dirs + files:
            full = Path(root, name)
            mode = os.lstat(full).st_mode
            rel = full.relative_to(run_dir).as_posix()
            if stat.S_ISLNK(mode) or not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise ManifestError(f"{rel}: links and special files cannot be archived")
            entries.append((rel, stat.S_ISDIR(mode)))
    return sorted(entries)


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime = ARCHIVE_MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _dir_info(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = DIR_MODE
    return _normalised(info)


def _file_info(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.REGTYPE
    info.mode = FILE_MODE
    info.size = size
    return _normalised(info)


def is_archive(path: Path) -> bool:
    """True for a regular file whose name ends in .tar.gz or .tgz."""
    path = Path(path)
    return path.is_file() and (path.name.endswith(".tar.gz") or path.name.endswith(".tgz"))


def safe_extract(archive: Path, dest_dir: Path, max_total_bytes: int = MAX_TOTAL_BYTES) -> Path:
    """Extract an archive made by :func:`create_archive` into an empty ``dest_dir``.

    Every member is checked first; nothing is written when any member is unsafe.

    Args:
        archive: the .tar.gz file.
        dest_dir: existing, empty folder to extract into (a temporary folder).
        max_total_bytes: refuse archives whose files add up to more [bytes].

    Returns:
        The extracted run folder: the single top folder when all entries share one,
        otherwise ``dest_dir`` itself.

    Raises:
        ArchiveError: the file is not a readable gzip'd tar.
        UnsafeArchiveError: an absolute path, ``..``, link, device, fifo, duplicate or
            oversized content.
    """
    dest_dir = Path(dest_dir)
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members = tar.getmembers()  # reads the whole archive: truncation shows here
            names = _check_members(members, max_total_bytes)
            for member, parts in zip(members, names, strict=True):
                _extract_member(tar, member, parts, dest_dir)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ArchiveError(f"{Path(archive).name}: not a readable .tar.gz ({exc})") from exc
    tops = {parts[0] for parts in names}
    if len(tops) == 1 and (dest_dir / next(iter(tops))).is_dir():
        return dest_dir / next(iter(tops))
    return dest_dir


def _check_members(members: list[tarfile.TarInfo],
                   max_total_bytes: int) -> list[tuple[str, ...]]:
    if len(members) > MAX_MEMBERS:
        raise UnsafeArchiveError("(archive)", f"more than {MAX_MEMBERS} entries")
    total = 0
    seen: set[tuple[str, ...]] = set()
    checked = []
    for member in members:
        parts = _safe_parts(member)
        if member.issym() or member.islnk():
            raise UnsafeArchiveError(member.name, f"links are not allowed ({member.linkname!r})")
        if not (member.isreg() or member.isdir()):
            raise UnsafeArchiveError(member.name, "device, fifo or other special entry")
        if parts in seen:
            raise UnsafeArchiveError(member.name, "entry appears twice")
        seen.add(parts)
        total += member.size
        if total > max_total_bytes:
            raise UnsafeArchiveError(member.name, f"content exceeds {max_total_bytes} bytes")
        checked.append(parts)
    return checked


def _safe_parts(member: tarfile.TarInfo) -> tuple[str, ...]:
    name = member.name
    if not name or "\x00" in name or "\\" in name:
        raise UnsafeArchiveError(name, "empty name, NUL or backslash in the path")
    path = PurePosixPath(name)
    if path.is_absolute() or (len(name) > 1 and name[1] == ":"):
        raise UnsafeArchiveError(name, "absolute path")
    parts = tuple(p for p in path.parts if p != ".")
    if not parts or ".." in parts:
        raise UnsafeArchiveError(name, "path leaves the destination ('..')")
    return parts


def _extract_member(tar: tarfile.TarFile, member: tarfile.TarInfo, parts: tuple[str, ...],
                    dest_dir: Path) -> None:
    target = dest_dir.joinpath(*parts)
    folder = target if member.isdir() else target.parent
    folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    # Links are refused above, so this holds by construction; checked anyway.
    if not folder.resolve().is_relative_to(dest_dir.resolve()):
        raise UnsafeArchiveError(member.name, "resolves outside the destination")
    if member.isdir():
        return
    source = tar.extractfile(member)
    if source is None:
        raise UnsafeArchiveError(member.name, "no file content")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 FILE_MODE)
    with os.fdopen(fd, "wb") as out:
        for chunk in iter(lambda: source.read(_COPY_CHUNK), b""):
            out.write(chunk)
