"""`evidence run` end to end on a small spec, and `evidence reproduce` (issues 2 and 5)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from generator import checks
from generator.cli import main
from generator.evidence.canonical import read_json, write_json

CELL = {"pickDistance": 0.32, "placeDistance": 0.32, "pickHeight": 0.6, "placeHeight": 0.7,
        "pedestalHeight": 1.0, "guardClearance": 0.4, "speedFraction": 0.5, "jitter": 0.02}
SPEC = {"title": "small", "project": "workcell-demo", "seeds": [0, 3],
        "reference": CELL, "candidate": CELL | {"speedFraction": 0.75, "guardClearance": 0.12},
        "requirements": {"maxCycleSeconds": 5.0, "minSuccessRate": 0.5},
        "tool": {"cadReviewId": "cr-0142-nema17-bracket"}}


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("run")
    spec_file = root / "spec.json"
    spec_file.write_text(json.dumps(SPEC))
    result = CliRunner().invoke(main, ["run", str(spec_file), "--out", str(root / "out"),
                                       "--workers", "1"])
    return root / "out", result


def test_run_writes_the_evidence_layout(small_run):
    out, result = small_run
    assert result.exit_code == 1, result.output  # the candidate collides: rejected
    assert "verdict: rejected" in result.output
    assert "candidate seed    3" in result.output  # progress per seed
    run = read_json(out / "run.json")
    assert run["verdict"] == "rejected" and run["specDigest"]
    assert [p["seed"] for p in run["pairing"]] == [0, 3]
    for side in ("reference", "candidate"):
        robot = read_json(out / side / "robot.json")
        assert robot["scope"] == "rigid-body-simulation" and robot["physicalValidation"] is False
        assert robot["checks"] == checks.evaluate_checks(robot["trials"], robot["requirements"])
        for name in ("scene.xml", "tool.stl", "timeseries.json"):
            assert (out / side / name).is_file()
    assert (out / "manifest.json").is_file()
    text = "".join(p.read_text(errors="ignore") for p in out.rglob("*.json"))
    assert str(out) not in text and "/work/" not in text and "/tmp/" not in text


def test_pairing_flags_regressions(small_run):
    out, _ = small_run
    run = read_json(out / "run.json")
    # reference misses the 5 s cycle at 50 % speed, candidate collides: both fail, "same"
    assert {p["change"] for p in run["pairing"]} == {"same"}
    ref = read_json(out / "reference" / "robot.json")["trials"]
    cand = [dict(t, cycleSeconds=1.0, collisionFree=True, reached=True) for t in ref]
    rows = checks.pair_trials(cand, ref, {"maxCycleSeconds": 5.0, "minSuccessRate": 0.5})
    assert {r["change"] for r in rows} == {"regression"}
    rows = checks.pair_trials(ref, cand, {"maxCycleSeconds": 5.0, "minSuccessRate": 0.5})
    assert {r["change"] for r in rows} == {"gain"}


def test_reproduce_identical_then_detects_an_edit(small_run, tmp_path):
    out, _ = small_run
    result = CliRunner().invoke(main, ["reproduce", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "reproduced: identical" in result.output
    copy = tmp_path / "copy"
    import shutil
    shutil.copytree(out, copy)
    robot_file = copy / "candidate" / "robot.json"
    robot = read_json(robot_file)
    robot["trials"][1]["cycleSeconds"] += 0.001
    write_json(robot_file, robot)
    result = CliRunner().invoke(main, ["reproduce", str(copy), "--workers", "1"])
    assert result.exit_code == 1
    assert "seed 3: cycleSeconds" in result.output


def test_existing_output_is_not_overwritten(small_run, tmp_path):
    out, _ = small_run
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(SPEC))
    before = (out / "manifest.json").read_bytes()
    result = CliRunner().invoke(main, ["run", str(spec_file), "--out", str(out)])
    assert result.exit_code == 2 and "not empty" in result.output
    assert (out / "manifest.json").read_bytes() == before


def test_physval_is_recorded_and_a_failed_check_rejects_the_run(small_run):
    import copy

    from generator import rules

    out, _ = small_run
    physval = read_json(out / "physval.json")
    assert set(physval["assets"]) == {"mountedPart", "workpiece"}
    assert physval["robot"]["status"] == "PASS"
    stage = rules.physval_stage(physval)
    assert stage["passed"], stage
    broken = copy.deepcopy(physval)
    broken["assets"]["mountedPart"]["checks"][0]["status"] = "FAIL"
    failed = rules.physval_stage(broken)
    assert not failed["passed"] and "mountedPart" in failed["reason"]
    run = read_json(out / "run.json")
    assert {"name": "physical-validation", "passed": True} .items() <= \
        {k: v for s in run["stages"] if s["name"] == "physical-validation"
         for k, v in s.items()}.items()


def test_a_cross_check_failure_rejects_the_run_with_its_reason(tmp_path):
    """Real chain: an export with the articulation root on the wrong prim -> Newton finds
    orphan joints -> the stage fails -> the verdict is rejected, naming the reason."""
    import dataclasses

    from generator import pipeline, rules
    from generator.crosscheck.newton import newton_crosscheck
    from generator.export.mjcf import write_mjcf
    from generator.export.usd import UsdFaults, write_usd
    from generator.spec import parse_spec

    spec = parse_spec(SPEC | {"seeds": [0], "candidate": CELL, "tool": SPEC["tool"]})
    gated, sides = pipeline.compute(spec, workers=1)
    prepared = sides["candidate"].prepared
    write_mjcf(prepared, tmp_path, gated.stl_bytes)
    usd = write_usd(prepared, tmp_path, faults=UsdFaults(articulation_root_not_ancestor=True))
    assert usd["passed"]  # the USD validators do not see this bug
    newton = newton_crosscheck(tmp_path, write=False)
    stage = rules.stage("candidate: Newton cross-check", "newton.json", newton)
    assert not stage["passed"] and "orphan" in stage["reason"]
    ok_stage = {"name": "physical-validation", "passed": True}
    verdict, reasons = pipeline.verdict_for(sides, [ok_stage])
    assert verdict == "rejected"  # 50 % speed misses 5 s: the candidate's own checks fail
    relaxed = dict(sides)
    relaxed["candidate"] = dataclasses.replace(
        sides["candidate"], checks=[dict(c, passed=True) for c in sides["candidate"].checks])
    assert pipeline.verdict_for(relaxed, [ok_stage]) == ("accepted", [])
    verdict, reasons = pipeline.verdict_for(relaxed, [ok_stage, stage])
    assert verdict == "rejected"
    assert any("Newton cross-check failed" in r and "orphan" in r for r in reasons), reasons


def test_parallel_seeds_give_the_serial_results():
    from generator import pipeline
    from generator.evidence.canonical import dumps
    from generator.spec import parse_spec

    spec = parse_spec(SPEC | {"seeds": [0, 1, 2]})
    gated = pipeline.tool.gate_tool(spec.tool, spec.project)
    prepared = pipeline.prepare_side(spec.candidate, gated)
    req = pipeline._req(spec)
    serial = pipeline.run_trials(spec.candidate, gated, prepared, [0, 1, 2], req, workers=1)
    parallel = pipeline.run_trials(spec.candidate, gated, prepared, [0, 1, 2], req, workers=2)
    assert dumps(serial) == dumps(parallel)
