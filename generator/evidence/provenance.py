"""Provenance (install receipt): what produced a run, recorded so it can be compared later.

``collect()`` returns a JSON-ready dict, written into run.json as ``provenance``::

    {
      "schema": "workcell-evidence/provenance/v1",
      "python": "3.11.7", "implementation": "CPython",
      "system": "Linux", "machine": "x86_64", "platform": "Linux-...-x86_64-with-glibc2.36",
      "packages": {"numpy": "2.2.1", ...},          # distributions the run imported
      "lockFile": {"path": "requirements.lock", "sha256": "..." | null, "note": "..."},
      "source": {"revision": "<git commit>" | "unknown", "dirty": bool | null,
                 "packageSha256": "..."}             # content hash of generator/**.py
    }

No machine paths are recorded: the lock file path is relative to the repository root.
``compare(recorded, current)`` lists every field that differs; ``verify`` shows them
as warnings, ``reproduce`` prints them before comparing trials.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import generator

PROVENANCE_SCHEMA = "workcell-evidence/provenance/v1"
LOCK_FILE_NAME = "requirements.lock"
UNKNOWN_REVISION = "unknown"
PACKAGE_DIR = Path(generator.__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
# A git call that takes longer than this is treated as "not a checkout" [s].
GIT_TIMEOUT_S = 10.0
_EDITABLE_FINDER = "__editable__"  # an editable install's import hook, not a package
_STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()
_PURELIB = Path(sysconfig.get_paths()["purelib"]).resolve()


@dataclass(frozen=True)
class ProvenanceDifference:
    """One field whose recorded value differs from the current environment.

    Attributes:
        field: dotted field name, e.g. ``packages.numpy`` or ``lockFile.sha256``.
        recorded: value stored in the run (None when absent).
        current: value in this environment (None when absent).
    """

    field: str
    recorded: Any
    current: Any

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "recorded": self.recorded, "current": self.current}

    def __str__(self) -> str:
        return f"{self.field}: recorded {self.recorded!r}, current {self.current!r}"


def collect(repo_root: Path | None = None,
            packages: Mapping[str, str | None] | None = None) -> dict[str, Any]:
    """Describe the current interpreter, imported distributions, lock file and source.

    Args:
        repo_root: repository root holding requirements.lock and the generator package
            (defaults to the folder above the installed ``generator`` package).
        packages: distribution versions to record instead of
            :func:`imported_distributions` (which scans every installed distribution).
    """
    root = Path(repo_root) if repo_root is not None else REPO_ROOT
    return {
        "schema": PROVENANCE_SCHEMA,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "system": platform.system(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "packages": dict(packages) if packages is not None else imported_distributions(),
        "lockFile": lock_file_record(root),
        "source": source_revision(root),
    }


def current_for(recorded: Mapping[str, Any] | None,
                repo_root: Path | None = None) -> dict[str, Any]:
    """This environment described for comparison with ``recorded``.

    Like :func:`collect`, except that ``packages`` holds the installed version (or None)
    of every distribution the recorded run imported, whether or not this process has
    imported it: verifying a run must not warn that mujoco "disappeared" merely because
    ``verify`` never imports it.
    """
    names = recorded.get("packages") if isinstance(recorded, Mapping) else None
    if isinstance(names, Mapping):
        return collect(repo_root, packages=installed_versions(names))
    return collect(repo_root)


def installed_versions(names: Iterable[str]) -> dict[str, str | None]:
    """``{distribution: installed version or None when not installed}``."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def imported_distributions(module_names: Iterable[str] | None = None) -> dict[str, str]:
    """Exact versions of the installed distributions that provide imported modules.

    Args:
        module_names: module names to map (defaults to ``sys.modules``); only the
            top-level name of each is used.

    Returns:
        ``{distribution name: version}``, sorted by name.
    """
    names = sys.modules if module_names is None else module_names
    top_level = {name.partition(".")[0] for name in list(names)}
    by_module = importlib.metadata.packages_distributions()
    versions: dict[str, str] = {}
    unmapped = []
    for module in top_level:
        if module not in by_module:
            unmapped.append(module)
        for dist in by_module.get(module, ()):
            try:
                versions[dist] = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                continue
    versions |= _distributions_by_file(unmapped, set(versions))
    return dict(sorted(versions.items(), key=lambda item: item[0].lower()))


def _distributions_by_file(modules: Iterable[str], known: set[str]) -> dict[str, str]:
    """Distributions owning the files of imported top-level ``modules`` that
    ``packages_distributions()`` does not map (cmeel wheels such as ``pin``, ``eigenpy`` and
    ``coal`` install their modules under ``cmeel.prefix/...``).

    Only modules imported from outside the standard library are looked up, and only the
    installed distributions not already ``known`` are read, each once.
    """
    files = {}
    for name in modules:
        path = _module_file(name)
        if path is not None:
            files[name] = path
    found: dict[str, str] = {}
    if not files:
        return found
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if not name or name in known or name in found:
            continue
        owned = _owned_files(dist, files.values())
        if owned:
            found[name] = dist.version
            files = {m: f for m, f in files.items() if f not in owned}
            if not files:
                break
    return found


def _module_file(name: str) -> Path | None:
    """The resolved ``__file__`` of an imported top-level module outside the standard
    library (None for built-in, namespace and standard-library modules)."""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names or \
            name.startswith(_EDITABLE_FINDER):
        return None
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return None
    path = Path(file).resolve()
    return None if path.is_relative_to(_STDLIB) and not path.is_relative_to(_PURELIB) \
        else path


def _owned_files(dist: importlib.metadata.Distribution, paths: Iterable[Path]) -> set[Path]:
    """The ``paths`` listed in ``dist``'s RECORD (read as text: parsing every entry into
    ``dist.files`` is an order of magnitude slower)."""
    root = Path(str(dist.locate_file(""))).resolve()
    relative = {p.relative_to(root).as_posix(): p for p in paths if p.is_relative_to(root)}
    if not relative:
        return set()
    record = dist.read_text("RECORD")
    if record is None:
        listed = {str(f).replace("\\", "/") for f in dist.files or ()}
    else:
        listed = {line.rpartition(",")[0].rpartition(",")[0] for line in record.splitlines()}
    return {path for rel, path in relative.items() if rel in listed}


def lock_file_record(repo_root: Path) -> dict[str, Any]:
    """SHA-256 of ``requirements.lock`` at the repository root, or null with a note."""
    lock = Path(repo_root) / LOCK_FILE_NAME
    if not lock.is_file():
        return {"path": LOCK_FILE_NAME, "sha256": None,
                "note": f"{LOCK_FILE_NAME} not found at the repository root; "
                        "installed versions are recorded under 'packages' only"}
    return {"path": LOCK_FILE_NAME, "sha256": hashlib.sha256(lock.read_bytes()).hexdigest(),
            "note": ""}


def source_revision(repo_root: Path) -> dict[str, Any]:
    """Git commit and dirty flag of the checkout, plus a content hash of the package.

    Outside a git checkout (or without git) the revision is ``"unknown"`` and
    ``dirty`` is null; ``packageSha256`` identifies the source either way.
    """
    root = Path(repo_root)
    commit = _git(root, "rev-parse", "HEAD")
    toplevel = _git(root, "rev-parse", "--show-toplevel")
    in_checkout = commit is not None and toplevel is not None and \
        Path(toplevel).resolve() == root.resolve()
    dirty = None
    if in_checkout:
        status = _git(root, "status", "--porcelain", "--untracked-files=no")
        dirty = None if status is None else bool(status.strip())
    return {
        "revision": commit if in_checkout else UNKNOWN_REVISION,
        "dirty": dirty,
        "packageSha256": package_content_hash(root / PACKAGE_DIR.name),
    }


def package_content_hash(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 over the sorted relative paths and bytes of every ``.py`` file in a package."""
    package_dir = Path(package_dir)
    digest = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py"), key=lambda p: p.relative_to(package_dir)
                       .as_posix()):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(package_dir).as_posix()
        content = path.read_bytes()
        digest.update(f"{rel}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.hexdigest()


def compare(recorded: Mapping[str, Any] | None,
            current: Mapping[str, Any]) -> list[ProvenanceDifference]:
    """List every provenance field whose recorded value differs from the current one.

    Nested tables (``packages``, ``lockFile``, ``source``) are compared field by field;
    a package present on one side only is a difference with None on the other.
    """
    if not isinstance(recorded, Mapping):
        return [ProvenanceDifference("provenance", recorded, "present")]
    diffs: list[ProvenanceDifference] = []
    _compare_into(recorded, current, "", diffs)
    return diffs


def _compare_into(recorded: Mapping[str, Any], current: Mapping[str, Any], prefix: str,
                  diffs: list[ProvenanceDifference]) -> None:
    for key in sorted(set(recorded) | set(current)):
        if key == "note":
            continue
        old, new = recorded.get(key), current.get(key)
        name = f"{prefix}{key}"
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            _compare_into(old, new, f"{name}.", diffs)
        elif old != new:
            diffs.append(ProvenanceDifference(name, old, new))


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
