"""Provenance, per-seed trial diffs, atomic run folders and key handling."""

from __future__ import annotations

import copy
import shutil
import stat
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import SPEC, make_trial, write_run_files

from generator.evidence import provenance
from generator.evidence.atomic import (
    RunExistsError,
    finalize_run,
    is_partial_name,
    staged_run,
    staging_dir,
)
from generator.evidence.canonical import read_json, same_value
from generator.evidence.manifest import MANIFEST_NAME, SIGNATURE_NAME
from generator.evidence.reproduce import TrialDiff, diff_trials, format_diffs
from generator.evidence.sign import (
    KeyPair,
    SigningError,
    key_id,
    keygen,
    load_private_key,
    load_public_keys,
)

REQ = SPEC["requirements"]


# --- provenance --------------------------------------------------------------------------


def test_collect_records_interpreter_packages_lock_and_source() -> None:
    import cryptography

    record = provenance.collect()
    assert record["schema"] == provenance.PROVENANCE_SCHEMA
    assert record["python"].count(".") == 2
    assert record["packages"]["cryptography"] == cryptography.__version__
    assert record["packages"]["numpy"] == np.__version__
    lock = provenance.REPO_ROOT / "requirements.lock"
    if lock.is_file():
        import hashlib

        assert record["lockFile"]["sha256"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    assert record["lockFile"]["path"] == "requirements.lock"
    assert len(record["source"]["packageSha256"]) == 64
    text = repr(record)
    assert str(provenance.REPO_ROOT) not in text, "no machine paths in evidence"


def test_source_revision_in_git_checkout() -> None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=provenance.REPO_ROOT,
                          capture_output=True, text=True, check=False)
    if head.returncode != 0:
        pytest.skip("the repository is not a git checkout here")
    source = provenance.source_revision(provenance.REPO_ROOT)
    assert source["revision"] == head.stdout.strip()
    assert isinstance(source["dirty"], bool)


def test_outside_a_checkout_revision_unknown_and_lock_missing(tmp_path: Path) -> None:
    shutil.copytree(provenance.PACKAGE_DIR, tmp_path / "generator",
                    ignore=shutil.ignore_patterns("__pycache__"))
    record = provenance.collect(tmp_path)
    assert record["source"]["revision"] == provenance.UNKNOWN_REVISION
    assert record["source"]["dirty"] is None
    assert record["source"]["packageSha256"] == provenance.package_content_hash()
    assert record["lockFile"]["sha256"] is None
    assert "not found" in record["lockFile"]["note"]
    (tmp_path / "generator" / "extra.py").write_text("X = 1\n", encoding="utf-8")
    assert provenance.package_content_hash(tmp_path / "generator") != \
        record["source"]["packageSha256"]


def test_imported_distributions_maps_modules_to_distributions() -> None:
    found = provenance.imported_distributions(["numpy.linalg", "cryptography", "json"])
    assert set(found) == {"numpy", "cryptography"}


def test_cmeel_distributions_are_mapped_through_module_files() -> None:
    # pin, eigenpy and coal install their modules under cmeel.prefix/: packages_distributions()
    # does not map them; the module's __file__ against the distribution's RECORD does.
    import importlib.metadata

    import pinocchio

    assert "pin" not in importlib.metadata.packages_distributions().get("pinocchio", [])
    packages = provenance.collect()["packages"]
    assert packages["pin"] == importlib.metadata.version("pin")
    assert pinocchio.__version__ == packages["pin"]
    assert "coal" in packages
    assert not any(name.startswith("__editable__") for name in packages)


def test_compare_lists_each_differing_field() -> None:
    recorded = provenance.collect()
    assert provenance.compare(recorded, copy.deepcopy(recorded)) == []
    current = copy.deepcopy(recorded)
    current["packages"]["numpy"] = "0.0.0"
    current["packages"]["newpkg"] = "1.0"
    current["lockFile"]["sha256"] = None
    diffs = {d.field: d for d in provenance.compare(recorded, current)}
    assert set(diffs) == {"packages.numpy", "packages.newpkg", "lockFile.sha256"}
    assert diffs["packages.newpkg"].recorded is None
    assert diffs["packages.numpy"].current == "0.0.0"
    assert provenance.compare(None, current)[0].field == "provenance"


def test_current_for_reports_uninstalled_packages() -> None:
    recorded = {"packages": {"numpy": np.__version__, "surely-not-installed-dist": "1.0"}}
    current = provenance.current_for(recorded)
    assert current["packages"] == {"numpy": np.__version__, "surely-not-installed-dist": None}


# --- reproduce diffs ----------------------------------------------------------------------


def test_identical_trials_have_no_diff() -> None:
    trials = [make_trial(s, 4.2, REQ) for s in range(3)]
    assert diff_trials(trials, copy.deepcopy(trials)) == []
    assert format_diffs([]) == "all per-seed fields identical"


def test_numpy_values_compare_equal_to_recorded_json() -> None:
    recorded = [make_trial(0, 4.2, REQ)]
    current = copy.deepcopy(recorded)
    current[0]["peakTorqueNm"] = np.array(current[0]["peakTorqueNm"])
    current[0]["cycleSeconds"] = np.float64(current[0]["cycleSeconds"])
    current[0]["seed"] = np.int64(0)
    assert diff_trials(recorded, current) == []


def test_diff_names_seed_and_nested_field() -> None:
    recorded = [make_trial(s, 4.2, REQ, collide=True) for s in range(3)]
    current = copy.deepcopy(recorded)
    current[1]["collisions"][0]["depthMm"] = 3.5
    current[2]["peakTorqueNm"][4] += 1e-12
    current[2]["success"] = True
    diffs = diff_trials(recorded, current)
    assert diffs == [
        TrialDiff(1, "collisions[0].depthMm", 3.25, 3.5),
        TrialDiff(2, "peakTorqueNm[4]", recorded[2]["peakTorqueNm"][4],
                  current[2]["peakTorqueNm"][4]),
        TrialDiff(2, "success", False, True),
    ]
    assert diffs[0].to_dict() == {"seed": 1, "field": "collisions[0].depthMm",
                                  "recorded": 3.25, "current": 3.5}
    assert "seed 1: collisions[0].depthMm" in format_diffs(diffs)


def test_diff_missing_seeds_and_list_length() -> None:
    recorded = [make_trial(s, 4.2, REQ) for s in range(2)]
    current = [copy.deepcopy(recorded[1]), make_trial(5, 4.2, REQ)]
    current[0]["collisions"] = [{"timeS": 0.1}]
    diffs = diff_trials(recorded, current)
    assert [(d.seed, d.field) for d in diffs] == [(0, "(trial)"), (1, "collisions"),
                                                  (5, "(trial)")]


def test_same_value_rules() -> None:
    assert same_value(1, 1.0)
    assert not same_value(True, 1)
    assert not same_value(None, 0)
    assert same_value({"a": [1, 2.0]}, {"a": [1.0, 2]})
    assert not same_value({"a": 1}, {"a": 1, "b": 2})


# --- atomic run folders --------------------------------------------------------------------


def test_staged_run_renames_into_place_with_manifest(tmp_path: Path,
                                                     trusted_pair: KeyPair) -> None:
    out = tmp_path / "run"
    with staged_run(out, sign_key=trusted_pair.private_key) as tmp:
        assert is_partial_name(tmp.name) and tmp == staging_dir(out)
        assert not out.exists()
        write_run_files(tmp, SPEC)
    assert (out / MANIFEST_NAME).is_file() and (out / SIGNATURE_NAME).is_file()
    assert not any(is_partial_name(p.name) for p in tmp_path.iterdir())


def test_staged_run_refuses_non_empty_target(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(RunExistsError, match="not empty"), staged_run(out):
        pytest.fail("the block must not run")
    assert (out / "keep.txt").read_text(encoding="utf-8") == "mine"


def test_staged_run_into_empty_folder_and_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    with staged_run(out) as tmp:
        (tmp / "a.txt").write_text("first", encoding="utf-8")
    with staged_run(out, overwrite=True) as tmp:
        (tmp / "b.txt").write_text("second", encoding="utf-8")
    assert sorted(p.name for p in out.iterdir()) == ["b.txt", MANIFEST_NAME]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_failed_block_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with pytest.raises(RuntimeError), staged_run(out) as tmp:
        (tmp / "half.json").write_text("{", encoding="utf-8")
        raise RuntimeError("simulation failed")
    assert list(tmp_path.iterdir()) == []


def test_finalize_nested_iteration(tmp_path: Path, trusted_pair: KeyPair) -> None:
    key = load_private_key(trusted_pair.private_key)
    with staged_run(tmp_path / "demo", sign_key=key) as tmp:
        (tmp / "iteration-1").mkdir()
        write_run_files(tmp / "iteration-1", SPEC)
        finalize_run(tmp / "iteration-1", key)
        (tmp / "demo.json").write_text("{}\n", encoding="utf-8")
    top = [f["path"] for f in read_json(tmp_path / "demo" / MANIFEST_NAME)["files"]]
    assert "iteration-1/signature.dsse.json" in top and "demo.json" in top


# --- keys -------------------------------------------------------------------------------------


def test_keygen_modes_and_keyid(tmp_path: Path) -> None:
    pair = keygen(tmp_path / "k")
    assert stat.S_IMODE(pair.private_key.stat().st_mode) == 0o600
    (public,) = load_public_keys(pair.public_key)
    assert key_id(public) == pair.keyid == key_id(load_private_key(pair.private_key)
                                                  .public_key())
    with pytest.raises(SigningError, match="already exists"):
        keygen(tmp_path / "k")


def test_load_private_key_rejects_public_key(trusted_pair: KeyPair) -> None:
    with pytest.raises(SigningError):
        load_private_key(trusted_pair.public_key)
