"""Ed25519 signing: a DSSE envelope around an in-toto Statement v1 for a run folder.

The statement's subjects are the manifest's files (name + sha256), so the signature
covers every evidence file; its predicate (type ``PREDICATE_TYPE``) repeats what a
reader wants to trust at a glance: spec digest, verdicts, package versions, lock-file
hash, source revision and the manifest's own digest. The envelope is written as
``signature.dsse.json`` next to ``manifest.json``.

Key ids are the hex SHA-256 of the raw 32-byte Ed25519 public key.

References:
    DSSE: https://github.com/secure-systems-lab/dsse/blob/master/protocol.md
    in-toto Statement v1: https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from generator.evidence.canonical import dump_bytes, read_json, write_json
from generator.evidence.manifest import (
    MANIFEST_NAME,
    SIGNATURE_NAME,
    build_manifest,
    manifest_entries,
    sha256_file,
)

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://workcell-evidence.dev/run/v1"
PRIVATE_KEY_NAME = "signing-key.pem"
PUBLIC_KEY_NAME = "signing-key.pub.pem"
_PEM_PUBLIC = re.compile(
    rb"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----", re.DOTALL
)


class SigningError(ValueError):
    """A key cannot be read or written, or a folder cannot be signed as it is."""


class SignatureProblem(ValueError):
    """Base for envelope problems found during verification."""


class SignatureMissing(SignatureProblem):
    """No envelope, or an envelope without signatures."""


class UntrustedSignature(SignatureProblem):
    """Every signature was made by a key that is not in the trusted set."""


class InvalidEnvelope(SignatureProblem):
    """Malformed envelope, or a trusted key id whose signature does not verify."""


@dataclass(frozen=True)
class KeyPair:
    """Paths of a key pair written by :func:`keygen`."""

    private_key: Path
    public_key: Path
    keyid: str


@dataclass(frozen=True)
class VerifiedEnvelope:
    """An envelope whose signature verified with a trusted key."""

    keyid: str
    statement: dict[str, Any]


# --- keys -------------------------------------------------------------------------------


def key_id(public_key: Ed25519PublicKey) -> str:
    """Hex SHA-256 fingerprint of the raw 32-byte public key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def keygen(out_dir: Path, name: str = "signing-key") -> KeyPair:
    """Write a new Ed25519 key pair: ``NAME.pem`` (private, mode 0600) and ``NAME.pub.pem``.

    The private key file is created with mode 0600 in one ``open`` call (never
    readable by others, not even briefly) and existing files are never overwritten.

    Raises:
        SigningError: a key file already exists or cannot be written.
    """
    if not name or Path(name).name != name or name in (".", "..") or "\\" in name:
        raise SigningError(f"key name {name!r} must be a plain file name stem (no path)")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    private_path = out_dir / f"{name}.pem"
    public_path = out_dir / f"{name}.pub.pem"
    for path in (private_path, public_path):
        if path.exists() or path.is_symlink():
            raise SigningError(f"{path} already exists; refusing to overwrite a key")
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    _write_new(private_path, private_pem, 0o600)
    _write_new(public_path, public_pem, 0o644)
    return KeyPair(private_path, public_path, key_id(key.public_key()))


def _write_new(path: Path, data: bytes, mode: int) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, mode)
    except OSError as exc:
        raise SigningError(f"cannot create {path}: {exc.strerror}") from exc
    try:
        os.fchmod(fd, mode)  # the umask may only have removed bits; make it exact
        os.write(fd, data)
    finally:
        os.close(fd)


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """Read an unencrypted PEM (PKCS#8) Ed25519 private key.

    Raises:
        SigningError: unreadable file or not an Ed25519 private key.
    """
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except OSError as exc:
        raise SigningError(f"cannot read private key {path}: {exc.strerror}") from exc
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path} is not an unencrypted PEM private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"{path} holds a {type(key).__name__}, expected an Ed25519 key")
    return key


def load_public_keys(path: Path) -> list[Ed25519PublicKey]:
    """Read every PEM Ed25519 public key in a file (one or several concatenated blocks).

    Raises:
        SigningError: unreadable file, no public key, or a key that is not Ed25519.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SigningError(f"cannot read public key {path}: {exc.strerror}") from exc
    blocks = _PEM_PUBLIC.findall(data)
    if not blocks:
        raise SigningError(f"{path} holds no PEM public key (-----BEGIN PUBLIC KEY-----)")
    keys = []
    for block in blocks:
        try:
            key = serialization.load_pem_public_key(block)
        except ValueError as exc:
            raise SigningError(f"{path}: unreadable public key: {exc}") from exc
        if not isinstance(key, Ed25519PublicKey):
            raise SigningError(f"{path} holds a {type(key).__name__}, expected Ed25519")
        keys.append(key)
    return keys


def load_key_list(path: Path) -> list[Ed25519PublicKey]:
    """Every Ed25519 public key in a PEM file or named by a trusted-keys list.

    A trusted-keys file may hold PEM blocks, and/or one public-key file path per line
    (relative to the file; ``#`` starts a comment). ``evidence verify --trusted-key`` and
    ``evidence site --trusted-keys`` both read it with this function.

    Raises:
        SigningError: unreadable file, a named key file missing or not a public key, or
            no key at all.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SigningError(f"cannot read trusted-keys file {path}: {exc}") from exc
    keys = load_public_keys(path) if "-----BEGIN" in text else []
    in_block = False
    for raw in text.splitlines():
        line = raw.strip()
        in_block = in_block or line.startswith("-----BEGIN")
        if not in_block and line and not line.startswith("#"):
            keys += load_public_keys(path.parent / line)
        if line.startswith("-----END"):
            in_block = False
    if not keys:
        raise SigningError(f"{path} holds or names no PEM public key")
    return keys


def load_trusted_keys(paths: Iterable[Path]) -> dict[str, Ed25519PublicKey]:
    """``{keyid: public key}`` for every key in the given PEM files."""
    return {key_id(k): k for path in paths for k in load_public_keys(Path(path))}


# --- DSSE -------------------------------------------------------------------------------


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE pre-authentication encoding: ``DSSEv1 SP len(type) SP type SP len(body) SP body``."""
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(type_bytes), type_bytes, len(payload), payload)


def make_envelope(statement: Mapping[str, Any], key: Ed25519PrivateKey) -> dict[str, Any]:
    """Sign a statement and return the DSSE envelope dict."""
    payload = dump_bytes(statement)
    signature = key.sign(pae(PAYLOAD_TYPE, payload))
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode("ascii"),
        "signatures": [{"keyid": key_id(key.public_key()),
                        "sig": base64.b64encode(signature).decode("ascii")}],
    }


def open_envelope(envelope: Any, trusted: Mapping[str, Ed25519PublicKey]) -> VerifiedEnvelope:
    """Check a DSSE envelope against trusted keys and return its decoded statement.

    The ``keyid`` of a signature is only a hint: every signature is tried with every
    trusted key, so an altered keyid is reported as tampering, not as an unknown key.

    Raises:
        SignatureMissing: the envelope's ``signatures`` list is empty.
        UntrustedSignature: no signature verifies with a trusted key, and every signature
            names a key that is not trusted.
        InvalidEnvelope: malformed envelope, or a signature naming a trusted key (or
            verifying with one under another keyid) that does not match the payload.
    """
    payload, signatures = _parse_envelope(envelope)
    if not signatures:
        raise SignatureMissing("the envelope carries no signatures")
    message = pae(PAYLOAD_TYPE, payload)
    named: list[str] = []
    for keyid, sig in signatures:
        named.append(keyid)
        for trusted_id, key in trusted.items():
            try:
                key.verify(sig, message)
            except InvalidSignature:
                continue
            if trusted_id != keyid:
                raise InvalidEnvelope(
                    f"signature verifies with trusted key {trusted_id} but names keyid "
                    f"{keyid!r}: the envelope was altered")
            return VerifiedEnvelope(keyid, _decode_statement(payload))
    bad = [k for k in named if k in trusted]
    if bad:
        raise InvalidEnvelope(
            f"the signature by trusted key {bad[0]} does not verify over this payload "
            "(payload or signature altered)")
    raise UntrustedSignature(
        f"signed by key(s) {', '.join(named)}; none is trusted "
        f"(trusted: {', '.join(sorted(trusted)) or 'none given'})")


def _parse_envelope(envelope: Any) -> tuple[bytes, list[tuple[str, bytes]]]:
    if not isinstance(envelope, Mapping) or set(envelope) != {"payloadType", "payload",
                                                              "signatures"}:
        raise InvalidEnvelope("not a DSSE envelope {payloadType, payload, signatures}")
    if envelope["payloadType"] != PAYLOAD_TYPE:
        raise InvalidEnvelope(
            f"payloadType is {envelope['payloadType']!r}, expected {PAYLOAD_TYPE!r}")
    if not isinstance(envelope["signatures"], list):
        raise InvalidEnvelope("signatures is not a list")
    try:
        payload = base64.b64decode(str(envelope["payload"]), validate=True)
        signatures = [(str(e["keyid"]), base64.b64decode(str(e["sig"]), validate=True))
                      for e in envelope["signatures"]]
    except (binascii.Error, KeyError, TypeError) as exc:
        raise InvalidEnvelope(f"malformed payload or signature entry: {exc!r}") from exc
    return payload, signatures


def _decode_statement(payload: bytes) -> dict[str, Any]:
    try:
        statement = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidEnvelope(f"payload is not JSON: {exc}") from exc
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise InvalidEnvelope(f"payload is not an in-toto statement ({STATEMENT_TYPE})")
    return statement


# --- statement --------------------------------------------------------------------------


def build_statement(run_dir: Path) -> dict[str, Any]:
    """The in-toto Statement v1 for a run (or demo) folder from its stored manifest.json.

    Subjects are the manifest's files in manifest order; the predicate also binds the
    manifest file's own digest.
    """
    run_dir = Path(run_dir)
    manifest = read_json(run_dir / MANIFEST_NAME)
    subjects = [{"name": e.path, "digest": {"sha256": e.sha256}}
                for e in manifest_entries(manifest).values()]
    return {
        "_type": STATEMENT_TYPE,
        "subject": subjects,
        "predicateType": PREDICATE_TYPE,
        "predicate": build_predicate(run_dir, sha256_file(run_dir / MANIFEST_NAME)),
    }


def build_predicate(run_dir: Path, manifest_sha256: str) -> dict[str, Any]:
    """Predicate fields taken from run.json (a run) or demo.json + iterations (a demo)."""
    run_dir = Path(run_dir)
    if (run_dir / "run.json").is_file():
        return {"kind": "run", "manifestSha256": manifest_sha256,
                **_run_summary(read_json(run_dir / "run.json"))}
    if (run_dir / "demo.json").is_file():
        demo = read_json(run_dir / "demo.json")
        runs = sorted(p.parent for p in run_dir.glob("*/run.json"))
        iterations = [{"folder": p.name, **_run_summary(read_json(p / "run.json"))}
                      for p in runs]
        provenance = demo.get("provenance") if isinstance(demo, dict) else None
        if provenance is None and iterations:
            provenance = read_json(runs[0] / "run.json").get("provenance")
        return {"kind": "demo", "manifestSha256": manifest_sha256,
                "iterations": iterations, **_provenance_summary(provenance)}
    raise SigningError(f"{run_dir.name}: neither run.json nor demo.json; not a run folder")


def _run_summary(run: Any) -> dict[str, Any]:
    run = run if isinstance(run, dict) else {}
    cells = run.get("cells") if isinstance(run.get("cells"), dict) else {}
    return {
        "specDigest": run.get("specDigest"),
        "verdict": run.get("verdict"),
        "cellsPassed": {side: cell.get("passed") for side, cell in sorted(cells.items())
                        if isinstance(cell, dict)},
        **_provenance_summary(run.get("provenance")),
    }


def _provenance_summary(provenance: Any) -> dict[str, Any]:
    prov = provenance if isinstance(provenance, dict) else {}
    lock = prov.get("lockFile") if isinstance(prov.get("lockFile"), dict) else {}
    return {
        "packages": prov.get("packages"),
        "lockFileSha256": lock.get("sha256"),
        "source": prov.get("source"),
    }


def sign_run(run_dir: Path, key: Ed25519PrivateKey | Path) -> Path:
    """Sign a manifested run folder; write and return ``signature.dsse.json``.

    The manifest must describe the folder exactly as it is: a stale manifest is
    refused rather than signed.

    Args:
        run_dir: run or demo folder holding manifest.json.
        key: private key or path of a PEM private key.

    Raises:
        SigningError: no manifest, or the manifest does not match the files.
    """
    run_dir = Path(run_dir)
    private = key if isinstance(key, Ed25519PrivateKey) else load_private_key(Path(key))
    manifest_path = run_dir / MANIFEST_NAME
    if not manifest_path.is_file():
        raise SigningError(f"{run_dir.name}: no {MANIFEST_NAME}; write the manifest first")
    manifest = read_json(manifest_path)
    if manifest != build_manifest(run_dir):
        raise SigningError(
            f"{run_dir.name}: {MANIFEST_NAME} does not match the files in the folder; "
            "refusing to sign (rebuild the run or its manifest)")
    envelope = make_envelope(build_statement(run_dir), private)
    out = run_dir / SIGNATURE_NAME
    write_json(out, envelope)
    return out
