"""Atomic run folders: write into a hidden sibling, manifest and sign, then rename.

Usage by the pipeline::

    with staged_run(out_dir, sign_key=key_path) as tmp:
        ...write run.json, reference/..., candidate/... into tmp...
    # here out_dir exists, complete, with manifest.json (and signature.dsse.json)

The staging folder is ``.<name>.partial-<pid>`` next to ``out_dir``. If the block
raises, the staging folder is removed and nothing appears at ``out_dir``. If the process
dies, only the staging folder is left: it has no manifest (or, if it died after
manifesting but before the rename, a ``.partial-`` name), and ``verify`` rejects both.
Nested run folders (the demo's iterations) are completed inside the staging folder
with :func:`finalize_run` before the outer block ends.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from generator.evidence.manifest import write_manifest
from generator.evidence.sign import load_private_key, sign_run

PARTIAL_MARKER = ".partial-"


class RunExistsError(FileExistsError):
    """The output folder exists and is not empty, and overwriting was not requested."""


def staging_dir(out_dir: Path) -> Path:
    """The hidden sibling folder a run is written into before it is renamed into place."""
    out_dir = Path(out_dir)
    return out_dir.parent / f".{out_dir.name}{PARTIAL_MARKER}{os.getpid()}"


def is_partial_name(name: str) -> bool:
    """True for a staging folder's name (an interrupted or unfinished run)."""
    return name.startswith(".") and PARTIAL_MARKER in name


def finalize_run(run_dir: Path, sign_key: Path | Ed25519PrivateKey | None = None) -> None:
    """Write manifest.json for a complete folder and, with a key, signature.dsse.json."""
    write_manifest(run_dir)
    if sign_key is not None:
        sign_run(run_dir, sign_key)


@contextmanager
def staged_run(out_dir: Path, sign_key: Path | Ed25519PrivateKey | None = None,
               overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder; on success manifest, sign and rename it to ``out_dir``.

    Args:
        out_dir: final run folder.
        sign_key: private key (or PEM path) to sign with; None leaves the run unsigned.
        overwrite: replace an existing non-empty ``out_dir`` (only after the new run is
            complete; the old folder is removed after the rename).

    Raises:
        RunExistsError: ``out_dir`` is not empty and ``overwrite`` is False (raised
            before the block runs, so no work is wasted).
        SigningError: the key cannot be read (also raised before the block runs).
    """
    out_dir = Path(out_dir)
    _check_target(out_dir, overwrite)
    key = load_private_key(sign_key) if isinstance(sign_key, (str, Path)) else sign_key
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = staging_dir(out_dir)
    if tmp.exists():  # left by an earlier process that had our pid
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        yield tmp
        finalize_run(tmp, key)
        _check_target(out_dir, overwrite)
        _move_into_place(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _check_target(out_dir: Path, overwrite: bool) -> None:
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise RunExistsError(f"{out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise RunExistsError(
            f"{out_dir} exists and is not empty; choose another --out or pass --overwrite")


def _move_into_place(tmp: Path, out_dir: Path) -> None:
    if not out_dir.exists():
        os.rename(tmp, out_dir)
        return
    if not any(out_dir.iterdir()):
        os.rmdir(out_dir)
        os.rename(tmp, out_dir)
        return
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    os.rename(out_dir, old)
    os.rename(tmp, out_dir)
    shutil.rmtree(old)
