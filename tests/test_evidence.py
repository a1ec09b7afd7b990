"""verify: tampering, missing/extra files, signatures and summaries recomputed from trials."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SPEC, build_run

from generator.evidence.canonical import read_json, write_json
from generator.evidence.manifest import (
    MANIFEST_NAME,
    SIGNATURE_NAME,
    ManifestError,
    build_manifest,
    write_manifest,
)
from generator.evidence.sign import (
    KeyPair,
    SigningError,
    load_public_keys,
    pae,
    sign_run,
)
from generator.evidence.verify import Code, Report, Status, verify


def _verify(target: Path, *pairs: KeyPair) -> Report:
    keys = [k for p in pairs for k in load_public_keys(p.public_key)]
    return verify(target, keys)


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def _codes(report: Report, file: str | None = None) -> set[Code]:
    return {f.code for f in report.findings if file is None or f.file == file}


def _resign(run_dir: Path, pair: KeyPair) -> None:
    write_manifest(run_dir)
    sign_run(run_dir, pair.private_key)


def _edit(run_dir: Path, rel: str, change: Callable[[Any], None]) -> None:
    data = read_json(run_dir / rel)
    change(data)
    write_json(run_dir / rel, data)


# --- the untouched run -----------------------------------------------------------------


def test_fixture_run_verifies(run_dir: Path, trusted_pair: KeyPair) -> None:
    report = _verify(run_dir, trusted_pair)
    assert report.status is Status.VERIFIED, report.format_text()
    assert report.exit_code == 0
    assert report.findings == ()
    assert report.signers == ((".", trusted_pair.keyid),)
    assert report.files_checked == len(_files(run_dir)) - 2


def test_manifest_lists_every_file_sorted_with_digests(run_dir: Path) -> None:
    manifest = read_json(run_dir / MANIFEST_NAME)
    paths = [f["path"] for f in manifest["files"]]
    assert paths == sorted(set(_files(run_dir)) - {MANIFEST_NAME, SIGNATURE_NAME})
    assert all("\\" not in p and not p.startswith("/") for p in paths)
    assert manifest == build_manifest(run_dir)


def test_signature_is_dsse_around_in_toto_statement(run_dir: Path, trusted_pair: KeyPair) -> None:
    import base64
    import json

    envelope = read_json(run_dir / SIGNATURE_NAME)
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    assert envelope["signatures"][0]["keyid"] == trusted_pair.keyid
    payload = base64.b64decode(envelope["payload"])
    statement = json.loads(payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    manifest = read_json(run_dir / MANIFEST_NAME)
    assert statement["subject"] == [{"name": f["path"], "digest": {"sha256": f["sha256"]}}
                                    for f in manifest["files"]]
    predicate = statement["predicate"]
    run = read_json(run_dir / "run.json")
    assert predicate["specDigest"] == run["specDigest"]
    assert predicate["verdict"] == "accepted"
    assert predicate["cellsPassed"] == {"candidate": True, "reference": False}
    assert predicate["lockFileSha256"] == run["provenance"]["lockFile"]["sha256"]
    assert predicate["source"] == run["provenance"]["source"]
    assert predicate["packages"]["cryptography"]
    # PAE per the DSSE spec, verified with the public key directly.
    public = load_public_keys(trusted_pair.public_key)[0]
    public.verify(base64.b64decode(envelope["signatures"][0]["sig"]),
                  pae("application/vnd.in-toto+json", payload))


def test_pae_matches_dsse_spec_example() -> None:
    # protocol.md: PAE("http://example.com/HelloWorld", "hello world")
    assert pae("http://example.com/HelloWorld", b"hello world") == (
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world")


# --- byte flips, deletions, additions --------------------------------------------------


RUN_FILES = [
    "candidate/dynamics.json", "candidate/newton.json", "candidate/robot.json",
    "candidate/scene.xml", "candidate/tool.stl", "manifest.json", "physval.json",
    "reference/dynamics.json", "reference/newton.json", "reference/robot.json",
    "reference/scene.xml", "reference/tool.stl", "run.json", "signature.dsse.json",
]


def test_run_files_list_is_complete(run_dir: Path) -> None:
    assert _files(run_dir) == RUN_FILES


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("rel", RUN_FILES)
def test_flipping_one_byte_of_each_file_is_detected(run_dir: Path, trusted_pair: KeyPair,
                                                    rel: str, where: str) -> None:
    path = run_dir / rel
    data = bytearray(path.read_bytes())
    index = {"first": 0, "middle": len(data) // 2, "last": len(data) - 1}[where]
    data[index] ^= 0x01
    path.write_bytes(bytes(data))
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1, report.format_text()
    assert any(f.file == rel for f in report.findings), report.format_text()


def test_digest_mismatch_reports_expected_and_actual(run_dir: Path,
                                                     trusted_pair: KeyPair) -> None:
    before = {f["path"]: f["sha256"] for f in read_json(run_dir / MANIFEST_NAME)["files"]}
    (run_dir / "candidate/tool.stl").write_bytes(b"other bytes")
    report = _verify(run_dir, trusted_pair)
    (finding,) = [f for f in report.findings if f.code is Code.DIGEST_MISMATCH]
    assert finding.file == "candidate/tool.stl"
    assert finding.expected == before["candidate/tool.stl"]
    assert finding.actual == hashlib.sha256(b"other bytes").hexdigest()
    assert "candidate/tool.stl" in report.format_text()
    assert finding.expected in report.format_text()


@pytest.mark.parametrize("rel", [r for r in RUN_FILES if r not in (MANIFEST_NAME, SIGNATURE_NAME)])
def test_deleting_a_file_is_detected(run_dir: Path, trusted_pair: KeyPair, rel: str) -> None:
    (run_dir / rel).unlink()
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.FILE_MISSING in _codes(report, rel)


def test_deleting_the_manifest_is_tampering(run_dir: Path, trusted_pair: KeyPair) -> None:
    (run_dir / MANIFEST_NAME).unlink()
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.MANIFEST_MISSING in _codes(report, MANIFEST_NAME)


def test_deleting_the_signature_exits_3(run_dir: Path, trusted_pair: KeyPair) -> None:
    (run_dir / SIGNATURE_NAME).unlink()
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 3
    assert _codes(report) == {Code.SIGNATURE_MISSING}
    assert "NOT signed" in report.format_text()


@pytest.mark.parametrize("rel", ["extra.txt", "reference/extra.json", "new/dir/file.bin"])
def test_adding_a_file_is_detected(run_dir: Path, trusted_pair: KeyPair, rel: str) -> None:
    (run_dir / rel).parent.mkdir(parents=True, exist_ok=True)
    (run_dir / rel).write_bytes(b"added")
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.FILE_EXTRA in _codes(report, rel)


def test_symlink_in_run_folder_is_rejected(run_dir: Path, trusted_pair: KeyPair) -> None:
    (run_dir / "link").symlink_to(run_dir / "run.json")
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.FILE_NOT_REGULAR in _codes(report, "link")
    with pytest.raises(ManifestError, match="link"):
        build_manifest(run_dir)


# --- re-hashing and re-signing ------------------------------------------------------------


def test_edited_number_with_rehashed_manifest_but_old_signature(run_dir: Path,
                                                                trusted_pair: KeyPair) -> None:
    """A torque value (no summary depends on it) edited, manifest rebuilt, not re-signed."""
    _edit(run_dir, "reference/robot.json",
          lambda d: d["trials"][0]["peakTorqueNm"].__setitem__(0, 1.5))
    write_manifest(run_dir)
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.SIGNATURE_SUBJECTS in _codes(report, "reference/robot.json")
    assert Code.DIGEST_MISMATCH not in _codes(report)
    assert Code.SUMMARY_MISMATCH not in _codes(report)


def test_edited_cycle_time_with_rehashed_manifest(run_dir: Path, trusted_pair: KeyPair) -> None:
    _edit(run_dir, "candidate/robot.json",
          lambda d: d["trials"][2].__setitem__("cycleSeconds", 6.5))
    write_manifest(run_dir)
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert {Code.SIGNATURE_SUBJECTS, Code.SUMMARY_MISMATCH} <= _codes(report,
                                                                       "candidate/robot.json")


def test_another_runs_signature_is_detected(run_dir: Path, trusted_pair: KeyPair,
                                            tmp_path: Path) -> None:
    other = build_run(tmp_path / "other", trusted_pair.private_key, candidate_cycle_s=4.4)
    shutil.copyfile(other / SIGNATURE_NAME, run_dir / SIGNATURE_NAME)
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.SIGNATURE_SUBJECTS in _codes(report, "candidate/robot.json")
    assert Code.SIGNATURE_PREDICATE in _codes(report, MANIFEST_NAME)


def test_untrusted_signer_exits_3(run_dir: Path, trusted_pair: KeyPair,
                                  untrusted_pair: KeyPair) -> None:
    sign_run(run_dir, untrusted_pair.private_key)
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 3
    assert _codes(report) == {Code.SIGNATURE_UNTRUSTED}
    assert untrusted_pair.keyid in report.format_text()
    assert _verify(run_dir, trusted_pair, untrusted_pair).exit_code == 0


def test_no_trusted_key_exits_3(run_dir: Path) -> None:
    assert verify(run_dir, []).exit_code == 3


def test_altered_keyid_is_tampering_not_untrusted(run_dir: Path, trusted_pair: KeyPair) -> None:
    _edit(run_dir, SIGNATURE_NAME, lambda e: e["signatures"][0].__setitem__("keyid", "0" * 64))
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.SIGNATURE_INVALID in _codes(report, SIGNATURE_NAME)


def test_empty_signature_list_is_unsigned(run_dir: Path, trusted_pair: KeyPair) -> None:
    _edit(run_dir, SIGNATURE_NAME, lambda e: e.__setitem__("signatures", []))
    assert _verify(run_dir, trusted_pair).exit_code == 3


def test_sign_refuses_a_stale_manifest(run_dir: Path, trusted_pair: KeyPair) -> None:
    (run_dir / "run.json").write_text("{}", encoding="utf-8")
    with pytest.raises(SigningError, match="does not match"):
        sign_run(run_dir, trusted_pair.private_key)


# --- summaries edited consistently with manifest and signature ----------------------------


def _set_check(side: str, check_id: str, key: str, value: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        checks = data["checks"] if "checks" in data else data["cells"][side]["checks"]
        next(c for c in checks if c["id"] == check_id)[key] = value
    return change


SUMMARY_EDITS: list[tuple[str, str, Callable[[Any], None]]] = [
    ("robot successRate", "reference/robot.json", lambda d: d.__setitem__("successRate", 1.0)),
    ("robot passed", "reference/robot.json", lambda d: d.__setitem__("passed", True)),
    ("trial success", "reference/robot.json",
     lambda d: d["trials"][1].__setitem__("success", True)),
    ("check passed", "reference/robot.json", _set_check("reference", "cycle-time", "passed", True)),
    ("check observed", "candidate/robot.json",
     _set_check("candidate", "reach", "observed", 0.001)),
    ("check required", "candidate/robot.json",
     _set_check("candidate", "cycle-time", "required", 9.0)),
    ("run verdict", "run.json", lambda d: d.__setitem__("verdict", "rejected")),
    ("run cell passed", "run.json", lambda d: d["cells"]["reference"].__setitem__("passed", True)),
    ("run cell rate", "run.json",
     lambda d: d["cells"]["candidate"].__setitem__("successRate", 0.8)),
    ("run cell check", "run.json", _set_check("candidate", "success-rate", "observed", 0.8)),
    ("pairing", "run.json", lambda d: d["pairing"][0].__setitem__("change", "same")),
    ("spec digest", "run.json", lambda d: d.__setitem__("specDigest", "0" * 64)),
    ("failed stage", "run.json", lambda d: d["stages"][1].__setitem__("passed", False)),
    ("newton passed", "candidate/newton.json",
     lambda d: d.__setitem__("worstPositionErrorMm", 0.25)),
    ("newton mass", "reference/newton.json",
     lambda d: d["massDifferencesMg"].__setitem__("wrist_3_link", -1.5)),
    ("newton joints", "reference/newton.json", lambda d: d.__setitem__("revoluteJoints", 5)),
    ("newton thresholds", "reference/newton.json",
     lambda d: d["thresholds"].__setitem__("positionMm", 1.0)),
    ("robot requirements", "candidate/robot.json",
     lambda d: d["requirements"].__setitem__("maxCycleSeconds", 4.0)),
]


@pytest.mark.parametrize(("label", "rel", "change"), SUMMARY_EDITS,
                         ids=[e[0] for e in SUMMARY_EDITS])
def test_resigned_summary_inconsistent_with_trials(run_dir: Path, trusted_pair: KeyPair,
                                                   label: str, rel: str,
                                                   change: Callable[[Any], None]) -> None:
    _edit(run_dir, rel, change)
    _resign(run_dir, trusted_pair)
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1, label
    mismatches = [f for f in report.findings if f.code is Code.SUMMARY_MISMATCH]
    assert mismatches, report.format_text()
    assert all(f.file.endswith(".json") for f in mismatches)
    assert any(f.file == rel for f in mismatches), report.format_text()
    assert _codes(report) == {Code.SUMMARY_MISMATCH}, report.format_text()


def test_summary_mismatch_names_both_values(run_dir: Path, trusted_pair: KeyPair) -> None:
    _edit(run_dir, "reference/robot.json", lambda d: d.__setitem__("successRate", 1.0))
    _resign(run_dir, trusted_pair)
    report = _verify(run_dir, trusted_pair)
    (finding,) = [f for f in report.findings if "successRate" in f.message]
    assert (finding.expected, finding.actual) == (0.0, 1.0)


def test_consistent_rejected_run_verifies(tmp_path: Path, trusted_pair: KeyPair) -> None:
    run = build_run(tmp_path / "rejected", trusted_pair.private_key, candidate_collides=True)
    assert read_json(run / "run.json")["verdict"] == "rejected"
    assert _verify(run, trusted_pair).exit_code == 0


def test_malformed_record_is_reported_not_raised(run_dir: Path, trusted_pair: KeyPair) -> None:
    _edit(run_dir, "candidate/robot.json", lambda d: d.__delitem__("trials"))
    _resign(run_dir, trusted_pair)
    report = _verify(run_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.RECORD_MALFORMED in _codes(report, "candidate/robot.json")


# --- demo folders --------------------------------------------------------------------------


def test_demo_verifies_every_nested_run(demo_dir: Path, trusted_pair: KeyPair) -> None:
    report = _verify(demo_dir, trusted_pair)
    assert report.exit_code == 0, report.format_text()
    assert report.folders == (".", "iteration-1", "iteration-2")
    assert {f for f, _ in report.signers} == {".", "iteration-1", "iteration-2"}
    top = {f["path"] for f in read_json(demo_dir / MANIFEST_NAME)["files"]}
    assert {"demo.json", "iteration-1/manifest.json", "iteration-1/signature.dsse.json"} <= top


def test_demo_tampered_iteration_file_is_named(demo_dir: Path, trusted_pair: KeyPair) -> None:
    path = demo_dir / "iteration-2/candidate/robot.json"
    path.write_bytes(path.read_bytes().replace(b'"passed": true', b'"passed": false', 1))
    report = _verify(demo_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.DIGEST_MISMATCH in _codes(report, "iteration-2/candidate/robot.json")


def test_demo_iteration_resigned_but_demo_not(demo_dir: Path, trusted_pair: KeyPair) -> None:
    _edit(demo_dir, "iteration-1/run.json", lambda d: d.__setitem__("title", "renamed"))
    _resign(demo_dir / "iteration-1", trusted_pair)
    report = _verify(demo_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.DIGEST_MISMATCH in _codes(report, "iteration-1/run.json")


def test_demo_json_verdict_checked_against_iteration(demo_dir: Path,
                                                     trusted_pair: KeyPair) -> None:
    _edit(demo_dir, "demo.json", lambda d: d["iterations"][0].__setitem__("verdict", "accepted"))
    _resign(demo_dir, trusted_pair)
    report = _verify(demo_dir, trusted_pair)
    assert report.exit_code == 1
    assert Code.SUMMARY_MISMATCH in _codes(report, "demo.json")


# --- interrupted runs, bad input, provenance ----------------------------------------------


INTERRUPT_SCRIPT = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, sys.argv[3])
    from pathlib import Path
    from conftest import SPEC, write_run_files
    from generator.evidence.atomic import finalize_run, staged_run
    with staged_run(Path(sys.argv[1]), sign_key=None) as tmp:
        write_run_files(tmp, SPEC)
        if sys.argv[2] == "after-manifest":
            finalize_run(tmp, None)
        os._exit(9)  # killed: no cleanup, no rename
""")


@pytest.mark.parametrize("stage", ["before-manifest", "after-manifest"])
def test_interrupted_run_leaves_nothing_verify_accepts(tmp_path: Path, trusted_pair: KeyPair,
                                                       stage: str) -> None:
    out = tmp_path / "run"
    tests_dir = str(Path(__file__).parent)
    done = subprocess.run([sys.executable, "-c", INTERRUPT_SCRIPT, str(out), stage, tests_dir],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 9, done.stderr
    assert not out.exists()
    (partial,) = [p for p in tmp_path.iterdir() if ".partial-" in p.name]
    assert verify(out, load_public_keys(trusted_pair.public_key)).exit_code == 2
    report = _verify(partial, trusted_pair)
    assert report.exit_code == 1, report.format_text()
    assert _codes(report) & {Code.PARTIAL_RUN, Code.MANIFEST_MISSING}


def test_missing_path_and_non_run_folder_exit_2(tmp_path: Path, trusted_pair: KeyPair) -> None:
    assert _verify(tmp_path / "nope", trusted_pair).exit_code == 2
    (tmp_path / "empty").mkdir()
    report = _verify(tmp_path / "empty", trusted_pair)
    assert report.exit_code == 2
    assert report.status is Status.UNREADABLE


def test_provenance_difference_is_a_warning(run_dir: Path, trusted_pair: KeyPair) -> None:
    recorded = read_json(run_dir / "run.json")["provenance"]
    current = {**recorded, "python": "3.99.0",
               "packages": {**recorded["packages"], "cryptography": "0.0.1"}}
    report = verify(run_dir, load_public_keys(trusted_pair.public_key), current)
    assert report.exit_code == 0
    fields = {w.message.split(" ")[0] for w in report.warnings}
    assert {"provenance.python", "provenance.packages.cryptography"} <= fields
    assert "WARN" in report.format_text()


def test_same_environment_gives_no_provenance_warning(tmp_path: Path,
                                                      trusted_pair: KeyPair) -> None:
    # Built here, not copied from the session template: other work in the checkout may
    # have changed the source revision since the template was written.
    run = build_run(tmp_path / "run", trusted_pair.private_key)
    report = _verify(run, trusted_pair)
    assert report.warnings == (), report.format_text()


def test_report_json_round_trip(run_dir: Path, trusted_pair: KeyPair) -> None:
    import json

    (run_dir / "run.json").write_bytes(b"{}")
    data = json.loads(json.dumps(_verify(run_dir, trusted_pair).to_dict()))
    assert data["status"] == "tampered" and data["exitCode"] == 1
    assert any(f["file"] == "run.json" and f["code"] == "digest-mismatch"
               for f in data["findings"])


def test_run_spec_fixture_is_valid() -> None:
    from generator.spec import parse_spec

    assert parse_spec(SPEC).seeds == (0, 1, 2, 3, 4)
