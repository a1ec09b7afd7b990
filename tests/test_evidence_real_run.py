"""verify and reproduce on a real (two-seed) pipeline run, not the hand-written fixture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from generator import pipeline
from generator.evidence.canonical import read_json, write_json
from generator.evidence.manifest import MANIFEST_NAME, write_manifest
from generator.evidence.reproduce import diff_trials
from generator.evidence.sign import KeyPair, load_public_keys, sign_run
from generator.evidence.verify import Code, verify
from generator.spec import parse_spec

REAL_SPEC: dict[str, Any] = {
    "title": "two-seed evidence test",
    "seeds": [0, 1],
    "reference": {"pickDistance": 0.48, "placeDistance": 0.38, "pickHeight": 0.82,
                  "placeHeight": 0.78, "pedestalHeight": 0.7, "guardClearance": 0.3,
                  "speedFraction": 0.5, "jitter": 0.02},
    "candidate": {"pickDistance": 0.48, "placeDistance": 0.38, "pickHeight": 0.82,
                  "placeHeight": 0.78, "pedestalHeight": 0.7, "guardClearance": 0.3,
                  "speedFraction": 0.75, "jitter": 0.02},
    "requirements": {"maxCycleSeconds": 5.0, "minSuccessRate": 0.9},
}


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory, trusted_pair: KeyPair) -> Path:
    out = tmp_path_factory.mktemp("real") / "run"
    pipeline.run(parse_spec(REAL_SPEC), out, sign_key=trusted_pair.private_key, workers=2)
    return out


@pytest.fixture()
def real_copy(real_run: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(real_run, tmp_path / "run"))


def _keys(pair: KeyPair) -> list:
    return load_public_keys(pair.public_key)


def test_real_run_verifies(real_run: Path, trusted_pair: KeyPair) -> None:
    report = verify(real_run, _keys(trusted_pair))
    assert report.exit_code == 0, report.format_text()


def test_flipping_a_byte_of_every_real_file(real_run: Path, real_copy: Path,
                                            trusted_pair: KeyPair) -> None:
    files = sorted(p.relative_to(real_run).as_posix() for p in real_run.rglob("*")
                   if p.is_file())
    assert {"run.json", "reference/robot.json", "candidate/robot.json"} <= set(files)
    for rel in files:
        path = real_copy / rel
        original = path.read_bytes()
        data = bytearray(original)
        data[len(data) // 2] ^= 0x01
        path.write_bytes(bytes(data))
        report = verify(real_copy, _keys(trusted_pair))
        assert report.exit_code == 1, (rel, report.format_text())
        assert any(f.file == rel for f in report.findings), (rel, report.format_text())
        path.write_bytes(original)
    assert verify(real_copy, _keys(trusted_pair)).exit_code == 0


def test_real_summary_edit_resigned_is_inconsistent(real_copy: Path,
                                                    trusted_pair: KeyPair) -> None:
    robot = read_json(real_copy / "candidate/robot.json")
    robot["trials"][0]["cycleSeconds"] = 9.0  # the recorded summaries no longer follow
    write_json(real_copy / "candidate/robot.json", robot)
    write_manifest(real_copy)
    sign_run(real_copy, trusted_pair.private_key)
    report = verify(real_copy, _keys(trusted_pair))
    assert report.exit_code == 1
    assert {f.file for f in report.findings if f.code is Code.SUMMARY_MISMATCH} == {
        "candidate/robot.json", "run.json"}


def test_identical_environment_reproduces_trials(real_run: Path) -> None:
    spec = parse_spec(read_json(real_run / "run.json")["spec"])
    _, sides = pipeline.compute(spec, workers=1)
    for side in ("reference", "candidate"):
        recorded = read_json(real_run / side / "robot.json")["trials"]
        assert diff_trials(recorded, sides[side].trials) == [], side


def test_real_run_has_no_machine_paths(real_run: Path) -> None:
    """No file of a real run (JSON, scene.usda, scene.xml, robot.glb, tool.stl...) holds a
    machine path: not the run folder (as given or resolved), its staging folder, the warp
    kernel cache, nor anything under /tmp, /root or /home."""
    from generator.crosscheck.newton import DEFAULT_WARP_CACHE

    patterns = {"/tmp/", "/root", "/home/", str(real_run), str(real_run.resolve()),
                str(real_run.parent.resolve()), str(DEFAULT_WARP_CACHE),
                str(DEFAULT_WARP_CACHE.resolve()), str(Path.home()) + "/"}
    files = sorted(p for p in real_run.rglob("*") if p.is_file())
    names = {p.relative_to(real_run).as_posix() for p in files}
    assert {"run.json", "candidate/scene.usda", "candidate/scene.xml", "candidate/robot.glb",
            "candidate/newton.json", MANIFEST_NAME} <= names
    for path in files:
        data = path.read_bytes()
        found = sorted(p for p in patterns if p.encode() in data)
        assert not found, (path.relative_to(real_run).as_posix(), found)


def test_newton_warnings_scrub_staging_and_cache_paths(tmp_path: Path) -> None:
    from generator.crosscheck.newton import _scrub

    cell = tmp_path / ".run.partial-42" / "candidate"
    cache = tmp_path / "cache" / "warp"
    message = f"cannot parse {cell}/scene.usda (kernels in {cache.resolve()}/k.o)"
    assert _scrub(message, cell, cache) == \
        "cannot parse ./scene.usda (kernels in <warp-cache>/k.o)"
