"""CLI: keygen, sign, verify, archive, with their exit codes (real files, real keys)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from generator.cli import main
from generator.evidence.manifest import SIGNATURE_NAME
from generator.evidence.sign import KeyPair


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def test_keygen_writes_private_key_mode_0600(tmp_path: Path) -> None:
    old = os.umask(0)  # even with a permissive umask
    try:
        code, out = _invoke("keygen", "--out", tmp_path / "keys")
    finally:
        os.umask(old)
    assert code == 0, out
    private = tmp_path / "keys" / "signing-key.pem"
    public = tmp_path / "keys" / "signing-key.pub.pem"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    assert "key id:" in out


def test_keygen_never_overwrites(tmp_path: Path) -> None:
    assert _invoke("keygen", "--out", tmp_path)[0] == 0
    before = (tmp_path / "signing-key.pem").read_bytes()
    code, out = _invoke("keygen", "--out", tmp_path)
    assert code == 2
    assert "already exists" in out
    assert (tmp_path / "signing-key.pem").read_bytes() == before


def test_keygen_named_pair(tmp_path: Path) -> None:
    assert _invoke("keygen", "--out", tmp_path, "--name", "demo-signing-key")[0] == 0
    assert (tmp_path / "demo-signing-key.pem").is_file()
    assert (tmp_path / "demo-signing-key.pub.pem").is_file()


def test_verify_exit_codes(run_dir: Path, trusted_pair: KeyPair,
                           untrusted_pair: KeyPair) -> None:
    code, out = _invoke("verify", run_dir, "--trusted-key", trusted_pair.public_key)
    assert code == 0, out
    assert out.startswith("VERIFIED")
    # signed by an untrusted key
    assert _invoke("sign", run_dir, "--key", untrusted_pair.private_key)[0] == 0
    code, out = _invoke("verify", run_dir, "--trusted-key", trusted_pair.public_key)
    assert code == 3, out
    # either key trusted
    code, _ = _invoke("verify", run_dir, "--trusted-key", trusted_pair.public_key,
                      "--trusted-key", untrusted_pair.public_key)
    assert code == 0
    # re-signed with the trusted key, then tampered
    assert _invoke("sign", run_dir, "--key", trusted_pair.private_key)[0] == 0
    (run_dir / "reference" / "scene.xml").write_text("<mujoco/>\n", encoding="utf-8")
    code, out = _invoke("verify", run_dir, "--trusted-key", trusted_pair.public_key)
    assert code == 1
    assert "reference/scene.xml" in out and "digest-mismatch" in out
    # signature removed
    (run_dir / SIGNATURE_NAME).unlink()
    assert _invoke("verify", run_dir, "--trusted-key", trusted_pair.public_key)[0] == 1


def test_verify_unsigned_run_exits_3(run_dir: Path, trusted_pair: KeyPair) -> None:
    (run_dir / SIGNATURE_NAME).unlink()
    code, out = _invoke("verify", run_dir, "--trusted-key", trusted_pair.public_key)
    assert code == 3
    assert "NOT signed" in out


def test_verify_bad_usage_exits_2(run_dir: Path, tmp_path: Path, trusted_pair: KeyPair) -> None:
    assert _invoke("verify", tmp_path / "missing", "--trusted-key",
                   trusted_pair.public_key)[0] == 2
    assert _invoke("verify", run_dir, "--trusted-key", tmp_path / "no-key.pem")[0] == 2
    not_a_key = tmp_path / "not-a-key.pem"
    not_a_key.write_text("hello\n", encoding="utf-8")
    code, out = _invoke("verify", run_dir, "--trusted-key", not_a_key)
    assert code == 2 and "cannot read public key" in out  # "hello" is read as a key path
    # a private key is not a trusted public key
    assert _invoke("verify", run_dir, "--trusted-key", trusted_pair.private_key)[0] == 2
    assert _invoke("verify")[0] == 2


def test_verify_json_report(run_dir: Path, trusted_pair: KeyPair) -> None:
    (run_dir / "candidate" / "tool.stl").write_bytes(b"\0")
    code, out = _invoke("verify", run_dir, "--trusted-key", trusted_pair.public_key, "--json")
    assert code == 1
    report = json.loads(out)
    assert report["status"] == "tampered" and report["exitCode"] == 1
    (finding,) = [f for f in report["findings"] if f["code"] == "digest-mismatch"]
    assert finding["file"] == "candidate/tool.stl"
    assert len(finding["expected"]) == len(finding["actual"]) == 64


def test_trusted_key_file_with_several_keys(run_dir: Path, tmp_path: Path,
                                            trusted_pair: KeyPair,
                                            untrusted_pair: KeyPair) -> None:
    bundle = tmp_path / "trusted-keys.txt"
    bundle.write_bytes(untrusted_pair.public_key.read_bytes() +
                       trusted_pair.public_key.read_bytes())
    assert _invoke("verify", run_dir, "--trusted-key", bundle)[0] == 0


def test_sign_refuses_stale_manifest(run_dir: Path, trusted_pair: KeyPair) -> None:
    (run_dir / "extra.txt").write_text("x", encoding="utf-8")
    code, out = _invoke("sign", run_dir, "--key", trusted_pair.private_key)
    assert code == 2
    assert "does not match" in out


def test_archive_command_and_verify_archive(run_dir: Path, tmp_path: Path,
                                            trusted_pair: KeyPair) -> None:
    a, b = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    assert _invoke("archive", run_dir, "--out", a)[0] == 0
    assert _invoke("archive", run_dir, "--out", b)[0] == 0
    assert a.read_bytes() == b.read_bytes()
    code, out = _invoke("verify", a, "--trusted-key", trusted_pair.public_key)
    assert code == 0, out


def test_console_script_verify_in_subprocess(run_dir: Path, trusted_pair: KeyPair) -> None:
    entry = subprocess.run(
        [sys.executable, "-c", "from generator.cli import main; main()", "verify", str(run_dir),
         "--trusted-key", str(trusted_pair.public_key)],
        capture_output=True, text=True, check=False)
    assert entry.returncode == 0, entry.stdout + entry.stderr
    (run_dir / SIGNATURE_NAME).unlink()
    unsigned = subprocess.run(
        [sys.executable, "-c", "from generator.cli import main; main()", "verify", str(run_dir),
         "--trusted-key", str(trusted_pair.public_key), "--json"],
        capture_output=True, text=True, check=False)
    assert unsigned.returncode == 3
    assert json.loads(unsigned.stdout)["status"] == "untrusted"
