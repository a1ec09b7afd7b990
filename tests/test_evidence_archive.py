"""Deterministic archives and safe extraction (malicious archives refused, nothing written)."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tarfile
from pathlib import Path

import pytest

from generator.evidence.archive import (
    ArchiveError,
    UnsafeArchiveError,
    create_archive,
    safe_extract,
)
from generator.evidence.manifest import ManifestError
from generator.evidence.sign import KeyPair, load_public_keys
from generator.evidence.verify import Code, verify


def _keys(pair: KeyPair) -> list:
    return load_public_keys(pair.public_key)


def test_archiving_twice_is_byte_identical(run_dir: Path, tmp_path: Path) -> None:
    first = create_archive(run_dir, tmp_path / "a.tar.gz").read_bytes()
    # Different mtimes and permissions on disk must not change the archive.
    for path in run_dir.rglob("*"):
        os.utime(path, (1_700_000_000, 1_700_000_000))
    (run_dir / "run.json").chmod(0o600)
    second = create_archive(run_dir, tmp_path / "b.tar.gz").read_bytes()
    assert first == second


def test_archive_copied_elsewhere_is_identical(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / run_dir.name
    shutil.copytree(run_dir, copy)
    assert create_archive(run_dir, tmp_path / "a.tar.gz").read_bytes() == \
        create_archive(copy, tmp_path / "b.tar.gz").read_bytes()


def test_archive_headers_are_normalised(run_dir: Path, tmp_path: Path) -> None:
    data = create_archive(run_dir, tmp_path / "run.tar.gz").read_bytes()
    assert data[:3] == b"\x1f\x8b\x08"
    assert data[3] == 0, "gzip FLG: no file name, no comment, no extra field"
    assert data[4:8] == b"\0\0\0\0", "gzip MTIME is zero"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names)
    assert all(n == "run" or n.startswith("run/") for n in names)
    for m in members:
        assert (m.mtime, m.uid, m.gid, m.uname, m.gname) == (0, 0, 0, "", "")
        assert m.mode == (0o755 if m.isdir() else 0o644)
        assert m.isdir() or m.isreg()
    files = {m.name for m in members if m.isreg()}
    assert {"run/run.json", "run/manifest.json", "run/signature.dsse.json",
            "run/reference/tool.stl"} <= files


def test_verify_archive_directly(run_dir: Path, tmp_path: Path, trusted_pair: KeyPair) -> None:
    archive = create_archive(run_dir, tmp_path / "run.tar.gz")
    report = verify(archive, _keys(trusted_pair))
    assert report.exit_code == 0, report.format_text()
    assert report.files_checked > 0


def test_verify_archive_of_tampered_run(run_dir: Path, tmp_path: Path,
                                        trusted_pair: KeyPair) -> None:
    (run_dir / "candidate" / "scene.xml").write_text("<mujoco/>", encoding="utf-8")
    with pytest.raises(ManifestError, match="does not match"):  # archive refuses it...
        create_archive(run_dir, tmp_path / "refused.tar.gz")
    archive = tmp_path / "run.tar.gz"  # ...so pack the tampered folder by hand
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(run_dir, arcname="run")
    report = verify(archive, _keys(trusted_pair))
    assert report.exit_code == 1
    assert any(f.file == "candidate/scene.xml" for f in report.findings)


def test_archive_refuses_an_unmanifested_folder(tmp_path: Path) -> None:
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "robot.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ManifestError, match="no manifest.json"):
        create_archive(tmp_path / "loose", tmp_path / "loose.tar.gz")


def test_verify_archive_of_demo(demo_dir: Path, tmp_path: Path, trusted_pair: KeyPair) -> None:
    report = verify(create_archive(demo_dir, tmp_path / "demo.tgz"), _keys(trusted_pair))
    assert report.exit_code == 0, report.format_text()
    assert report.folders == (".", "iteration-1", "iteration-2")


def test_archive_refuses_symlinks_in_run(run_dir: Path, tmp_path: Path) -> None:
    (run_dir / "link").symlink_to("run.json")
    with pytest.raises(ManifestError):
        create_archive(run_dir, tmp_path / "run.tar.gz")


def test_archive_refuses_output_inside_run(run_dir: Path) -> None:
    with pytest.raises(ValueError, match="inside"):
        create_archive(run_dir, run_dir / "self.tar.gz")


# --- malicious archives ------------------------------------------------------------------


def _tar_bytes(entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
        for info, data in entries:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return raw.getvalue()


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _special(name: str, kind: bytes, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info, None


MALICIOUS = {
    "dotdot": [_file("run/run.json"), _file("../escaped.txt")],
    "nested-dotdot": [_file("run/run.json"), _file("run/../../escaped.txt")],
    "absolute": [_file("run/run.json"), _file("/tmp/escaped-absolute.txt")],
    "symlink": [_special("run/link", tarfile.SYMTYPE, "../../escaped.txt"),
                _file("run/link", b"through the link")],
    "symlink-dir": [_special("run/dir", tarfile.SYMTYPE, ".."), _file("run/dir/escaped.txt")],
    "hardlink": [_file("run/run.json"), _special("run/hard", tarfile.LNKTYPE, "/etc/passwd")],
    "chardev": [_file("run/run.json"), _special("run/null", tarfile.CHRTYPE)],
    "blockdev": [_special("run/sda", tarfile.BLKTYPE)],
    "fifo": [_special("run/pipe", tarfile.FIFOTYPE)],
    "duplicate": [_file("run/run.json", b"a"), _file("run/run.json", b"b")],
    "backslash": [_file("run\\..\\..\\escaped.txt")],
}


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_malicious_archive_is_refused_and_writes_nothing(case: str, tmp_path: Path,
                                                         trusted_pair: KeyPair) -> None:
    work = tmp_path / "work"
    work.mkdir()
    archive = work / "evil.tar.gz"
    archive.write_bytes(_tar_bytes(MALICIOUS[case]))
    dest = work / "a" / "b" / "dest"
    dest.mkdir(parents=True)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(UnsafeArchiveError):
        safe_extract(archive, dest)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert not Path("/tmp/escaped-absolute.txt").exists()
    report = verify(archive, _keys(trusted_pair))
    assert report.exit_code == 1
    assert [f.code for f in report.findings] == [Code.UNSAFE_ARCHIVE]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_corrupt_archive_is_unreadable(run_dir: Path, tmp_path: Path,
                                       trusted_pair: KeyPair) -> None:
    data = create_archive(run_dir, tmp_path / "run.tar.gz").read_bytes()
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(data[: len(data) // 2])
    assert verify(truncated, _keys(trusted_pair)).exit_code == 2
    with pytest.raises(ArchiveError):
        safe_extract(truncated, tmp_path / "out")
    not_gzip = tmp_path / "plain.tar.gz"
    not_gzip.write_bytes(b"not an archive at all")
    assert verify(not_gzip, _keys(trusted_pair)).exit_code == 2


def test_size_limit_refuses_decompression_bombs(tmp_path: Path) -> None:
    path = tmp_path / "big.tar.gz"
    path.write_bytes(_tar_bytes([_file("run/big", b"\0" * 5000)]))
    with pytest.raises(UnsafeArchiveError, match="exceeds"):
        safe_extract(path, tmp_path, max_total_bytes=1000)
    assert not (tmp_path / "run").exists()


def test_safe_extract_round_trip(run_dir: Path, tmp_path: Path) -> None:
    archive = create_archive(run_dir, tmp_path / "run.tar.gz")
    out = tmp_path / "out"
    out.mkdir()
    root = safe_extract(archive, out)
    assert root == out / "run"
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert (root / path.relative_to(run_dir)).read_bytes() == path.read_bytes()


def test_gzip_module_matches_our_reader(run_dir: Path, tmp_path: Path) -> None:
    data = create_archive(run_dir, tmp_path / "run.tar.gz").read_bytes()
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
        assert tar.getnames()[0] == "run"
