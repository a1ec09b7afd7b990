"""Manifest: every evidence file in a run folder with its SHA-256 digest and size.

``manifest.json`` lists every regular file below the folder (relative POSIX paths,
sorted), except the manifest itself and the signature envelope at the top of that
folder. Files of nested run folders (the demo's ``iteration-N/``), including their own
manifests and signatures, are listed like any other file. A symlink or any other
non-regular file inside a run folder is an error: evidence is plain files only.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.evidence.canonical import write_json

MANIFEST_NAME = "manifest.json"
SIGNATURE_NAME = "signature.dsse.json"
MANIFEST_SCHEMA = "workcell-evidence/manifest/v1"
# Files at the top of a run folder that the manifest never lists (they describe it).
NOT_LISTED = frozenset({MANIFEST_NAME, SIGNATURE_NAME})
_CHUNK_BYTES = 1 << 20


class ManifestError(ValueError):
    """A run folder holds something that cannot be evidence (link, device, fifo...)."""


@dataclass(frozen=True)
class FileEntry:
    """One evidence file.

    Attributes:
        path: relative POSIX path inside the run folder.
        sha256: lowercase hex SHA-256 of the file's bytes.
        size: size in [bytes].
    """

    path: str
    sha256: str
    size: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "size": self.size}


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's contents, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class FolderScan:
    """What a run folder holds.

    Attributes:
        files: relative POSIX paths of regular evidence files, sorted (manifest and
            signature at the top excluded).
        irregular: ``(path, reason)`` for every symlink or special file, sorted.
    """

    files: tuple[str, ...]
    irregular: tuple[tuple[str, str], ...]


def scan_folder(run_dir: Path) -> FolderScan:
    """List every regular evidence file below ``run_dir`` and every entry that is not one.

    Symbolic links are reported, never followed.
    """
    run_dir = Path(run_dir)
    files: list[str] = []
    irregular: list[tuple[str, str]] = []
    for root, dirs, names in os.walk(run_dir, followlinks=False):
        for name in dirs + names:
            full = Path(root, name)
            rel = full.relative_to(run_dir).as_posix()
            mode = os.lstat(full).st_mode
            if stat.S_ISLNK(mode):
                irregular.append((rel, "symbolic link"))
            elif stat.S_ISREG(mode):
                if rel not in NOT_LISTED:
                    files.append(rel)
            elif not stat.S_ISDIR(mode):
                irregular.append((rel, "special file (device, fifo or socket)"))
    return FolderScan(tuple(sorted(files)), tuple(sorted(irregular)))


def iter_evidence_files(run_dir: Path) -> Iterator[str]:
    """Yield the relative POSIX path of every evidence file below ``run_dir``, sorted.

    Raises:
        ManifestError: a symlink or a non-regular, non-directory entry is found.
    """
    scan = scan_folder(run_dir)
    if scan.irregular:
        rel, reason = scan.irregular[0]
        raise ManifestError(f"{rel}: {reason}; a run folder holds regular files only")
    yield from scan.files


def build_manifest(run_dir: Path) -> dict[str, Any]:
    """Hash every evidence file below ``run_dir`` and return the manifest dict."""
    run_dir = Path(run_dir)
    entries = [
        FileEntry(rel, sha256_file(run_dir / rel), (run_dir / rel).stat().st_size).to_dict()
        for rel in iter_evidence_files(run_dir)
    ]
    return {"schema": MANIFEST_SCHEMA, "algorithm": "sha256", "files": entries}


def write_manifest(run_dir: Path) -> dict[str, Any]:
    """Build the manifest of ``run_dir`` and write it (canonical JSON) as manifest.json."""
    manifest = build_manifest(run_dir)
    write_json(Path(run_dir) / MANIFEST_NAME, manifest)
    return manifest


def manifest_entries(manifest: Mapping[str, Any]) -> dict[str, FileEntry]:
    """Parse a manifest dict into ``{path: FileEntry}``.

    Raises:
        ManifestError: the manifest is not shaped like ``build_manifest``'s output.
    """
    if not isinstance(manifest, Mapping) or manifest.get("schema") != MANIFEST_SCHEMA:
        raise ManifestError(f"{MANIFEST_NAME}: not a {MANIFEST_SCHEMA} document")
    files = manifest.get("files")
    if not isinstance(files, list):
        raise ManifestError(f"{MANIFEST_NAME}: 'files' must be a list")
    entries: dict[str, FileEntry] = {}
    for i, item in enumerate(files):
        try:
            entry = FileEntry(str(item["path"]), str(item["sha256"]), int(item["size"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ManifestError(f"{MANIFEST_NAME}: files[{i}] is malformed ({exc})") from exc
        if entry.path in entries:
            raise ManifestError(f"{MANIFEST_NAME}: {entry.path} is listed twice")
        entries[entry.path] = entry
    return entries
