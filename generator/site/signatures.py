"""Signature status for the site: the very verification ``evidence verify`` runs.

Each run folder (and each demo folder) is verified at build time with
:func:`generator.evidence.verify.verify` against the keys of the trusted-keys file.
The trusted-keys file is a text file of PEM public keys: any number of
``-----BEGIN PUBLIC KEY-----`` blocks, and/or lines naming PEM files (relative to the
trusted-keys file; blank lines and lines starting with ``#`` are ignored).

Provenance warnings (differences from the build machine's environment) are not shown:
they describe the machine building the site, not the evidence, and would make the site
differ between machines.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from generator.evidence.sign import SigningError, key_id, load_key_list
from generator.evidence.verify import Code, Status, verify
from generator.site.discover import SIGNATURE_FILE

FINGERPRINT_CHARS = 16  # shown on the site; the full SHA-256 key id is in the title text


class SignatureState(enum.Enum):
    """What the site says about a folder's signature."""

    VERIFIED = "verified"
    UNSIGNED = "unsigned"
    FAILED = "FAILED"
    NOT_CHECKED = "signature not checked"


@dataclass(frozen=True)
class SignatureStatus:
    """The verification outcome for one folder.

    Attributes:
        state: verified / unsigned / FAILED / not checked.
        keyid: full key fingerprint (hex SHA-256 of the raw public key) when verified.
        findings: one line per verification failure (empty when verified or not checked).
    """

    state: SignatureState
    keyid: str = ""
    findings: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        if self.state is SignatureState.VERIFIED:
            return f"verified, key {self.keyid[:FINGERPRINT_CHARS]}"
        return self.state.value

    @property
    def css(self) -> str:
        return {"verified": "ok", "unsigned": "warn", "FAILED": "bad"}.get(self.state.value,
                                                                          "muted")


class TrustedKeysError(ValueError):
    """The trusted-keys file is unreadable or names no usable key."""


def load_trusted_keys_file(path: Path) -> list[Ed25519PublicKey]:
    """Every Ed25519 public key named by or contained in a trusted-keys file."""
    try:
        return load_key_list(Path(path))
    except SigningError as exc:
        raise TrustedKeysError(str(exc)) from exc


def signature_status(folder: Path, keys: Sequence[Ed25519PublicKey] | None) -> SignatureStatus:
    """Verify ``folder`` (run or demo) like ``evidence verify``; None keys: not checked."""
    if keys is None:
        return SignatureStatus(SignatureState.NOT_CHECKED)
    report = verify(Path(folder), keys)
    top_signer = dict(report.signers).get(".", "")
    if report.status is Status.VERIFIED and top_signer:
        return SignatureStatus(SignatureState.VERIFIED, top_signer)
    findings = tuple(str(f) for f in report.findings)
    other = [f for f in report.findings if f.code is not Code.SIGNATURE_MISSING]
    if not (Path(folder) / SIGNATURE_FILE).is_file() and not other:
        return SignatureStatus(SignatureState.UNSIGNED, findings=findings)
    return SignatureStatus(SignatureState.FAILED, findings=findings)


def fingerprints(keys: Sequence[Ed25519PublicKey]) -> list[str]:
    """Sorted key ids of the trusted keys (shown on the index page)."""
    return sorted(key_id(k) for k in keys)
