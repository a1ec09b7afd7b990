"""Shared fixtures.

``run_dir`` is a complete, signed run folder laid out as docs/CONTRACTS.md describes:
run.json, reference/ and candidate/ cell folders with robot.json (trials whose checks
are computed by ``generator.checks``), newton.json, scene.xml and a binary tool.stl.
It is written through ``staged_run`` exactly as the pipeline writes runs. When the
pipeline exists, ``build_run`` can be replaced by a real (small) ``evidence run``.
"""

from __future__ import annotations

import random
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest

from generator import checks, rules
from generator.demo import iteration_record
from generator.evidence import provenance
from generator.evidence.atomic import finalize_run, staged_run
from generator.evidence.canonical import read_json, write_json
from generator.evidence.sign import KeyPair, keygen, load_private_key
from generator.rules import failure_reason
from generator.spec import parse_spec

SPEC: dict[str, Any] = {
    "title": "Fixture run",
    "notes": "written by tests/conftest.py",
    "project": "tests",
    "reference": {"pickDistance": 0.48, "placeDistance": 0.38, "pickHeight": 0.82,
                  "placeHeight": 0.78, "pedestalHeight": 0.7, "guardClearance": 0.3,
                  "speedFraction": 0.5, "jitter": 0.02},
    "candidate": {"pickDistance": 0.48, "placeDistance": 0.38, "pickHeight": 0.82,
                  "placeHeight": 0.78, "pedestalHeight": 0.7, "guardClearance": 0.3,
                  "speedFraction": 0.75, "jitter": 0.02},
    "requirements": {"maxCycleSeconds": 5.0, "minSuccessRate": 0.9},
    "seeds": [0, 1, 2, 3, 4],
}
SEGMENTS = ("approach-pick", "pick", "transfer", "place", "return")


def make_trial(seed: int, cycle_s: float, requirements: dict[str, Any],
               collide: bool = False) -> dict[str, Any]:
    """One per-seed trial record shaped like the simulation's (numbers are made up)."""
    rng = random.Random(seed * 7919 + int(cycle_s * 1000))
    collisions = [{"timeS": 0.52, "segment": "approach-pick", "geoms": ["wrist1", "guard+x"],
                   "bodies": ["wrist_1_link", "guards"], "depthMm": 3.25}] if collide else []
    start, segments = 0.0, []
    for name in SEGMENTS:
        duration = round(cycle_s / 6 + rng.uniform(-0.05, 0.05), 6)
        segments.append({"name": name, "startS": round(start, 6), "durationS": duration})
        start += duration
    targets = [{"name": n, "errorMm": round(rng.uniform(0.0, 0.4), 6), "reason": None}
               for n in ("above-pick", "pick", "above-place", "place")]
    trial = {
        "seed": seed, "reached": True, "ikErrorMm": max(t["errorMm"] for t in targets),
        "targets": targets,
        "collisionFree": not collide, "collisions": collisions,
        "minClearanceMm": -3.25 if collide else round(rng.uniform(20, 60), 6),
        "minClearancePair": ["wrist1", "guard+x"],
        "clearanceByObjectMm": {k: round(rng.uniform(20, 300), 6)
                                for k in ("guards", "conveyor", "fixture", "pedestal")},
        "segments": segments, "trajectoryEndS": round(start, 6), "settleS": 0.21,
        "cycleSeconds": cycle_s + seed * 0.001, "settled": True,
        "peakTorqueNm": [round(rng.uniform(1, 90), 6) for _ in range(6)],
    }
    trial["success"] = checks.trial_success(trial, requirements)
    trial["failureReason"] = failure_reason(trial, targets, requirements)
    return trial


def write_cell(folder: Path, side: str, spec: dict[str, Any], cycle_s: float,
               collide: bool = False) -> None:
    """Write one cell folder: robot.json, newton.json, scene.xml, tool.stl."""
    folder.mkdir(parents=True)
    req = spec["requirements"]
    trials = [make_trial(s, cycle_s, req, collide) for s in spec["seeds"]]
    robot_checks = checks.evaluate_checks(trials, req)
    write_json(folder / "robot.json", {
        "schema": "workcell-evidence/robot/v1", "scope": "rigid-body-simulation",
        "physicalValidation": False, "limits": "rigid bodies only; fixture data",
        "side": side, "cell": spec[side], "requirements": req, "seeds": spec["seeds"],
        "trials": trials, "checks": robot_checks,
        "successRate": checks.success_rate(trials, req),
        "passed": checks.cell_passed(robot_checks), "tool": None,
        "model": {"name": "ur5e-class"},
        "exports": {"usd": {"file": "scene.usda", "errors": 0, "warnings": 0, "findings": [],
                            "nonFixedJoints": 6, "revoluteJoints": 6, "passed": True,
                            "reasons": []}},
        "crosschecks": {"newton": {"file": "newton.json", "passed": True, "reasons": []},
                        "dynamics": {"file": "dynamics.json", "passed": True, "reasons": []}},
    })
    worst = {"worstAbsDiff": 2e-14, "worstRelDiff": 1e-15, "worstEntry": "[1]",
             "worstConfig": 3}
    write_json(folder / "dynamics.json", {
        "tolerances": dict(rules.TOLERANCES), "gravityTorque": worst,
        "massMatrix": worst | {"worstEntry": "[1][2]"}, "armature": {"worstAbsDiff": 0.0},
        "passed": True, "reasons": [],
    })
    write_json(folder / "newton.json", {
        "thresholds": {"positionMm": 0.1, "angleDeg": 0.01, "massMg": 1.0},
        "worstPositionErrorMm": 0.0004, "worstPositionBody": "gripper",
        "worstPositionConfig": 3, "worstAngleErrorDeg": 0.00002,
        "worstAngleBody": "wrist_3_link", "worstAngleConfig": 7,
        "massDifferencesMg": {"base_link": 0.0, "wrist_3_link": 0.2},
        "worstMassDifferenceMg": 0.2, "configurations": 33,
        "bodies": {"compared": ["base_link", "wrist_3_link"], "missingInNewton": [],
                   "extraInNewton": []},
        "articulations": 1, "revoluteJoints": 6, "orphanJoints": 0, "orphanJointNames": [],
        "newtonFinalize": "ok", "passed": True, "reasons": [],
    })
    (folder / "scene.xml").write_text(
        f'<mujoco model="{side}">\n  <compiler angle="radian"/>\n'
        '  <asset><mesh name="tool" file="tool.stl"/></asset>\n</mujoco>\n', encoding="utf-8")
    (folder / "tool.stl").write_bytes(_binary_stl())


def _binary_stl() -> bytes:
    """A one-triangle binary STL (80-byte header, count, one facet)."""
    header = b"fixture tool".ljust(80, b"\0")
    facet = struct.pack("<12fH", 0, 0, 1, 0, 0, 0, 0.01, 0, 0, 0, 0.01, 0, 0)
    return header + struct.pack("<I", 1) + facet


def write_run_files(folder: Path, spec: dict[str, Any], candidate_cycle_s: float = 4.2,
                    candidate_collides: bool = False) -> None:
    """Write every file of a run folder (not the manifest or signature)."""
    req = spec["requirements"]
    write_cell(folder / "reference", "reference", spec, 5.3)
    write_cell(folder / "candidate", "candidate", spec, candidate_cycle_s, candidate_collides)
    ref = read_json(folder / "reference" / "robot.json")
    cand = read_json(folder / "candidate" / "robot.json")
    physval = {"assets": {}, "robot": {"status": "PASS", "checks": []}}
    write_json(folder / "physval.json", physval)
    ok = {"passed": True, "reasons": []}
    stages = [rules.stage(f"{side}: {label}", file, ok) for side in ("reference", "candidate")
              for label, file in ((rules.STAGE_USD, "scene.usda"),
                                  (rules.STAGE_NEWTON, "newton.json"),
                                  (rules.STAGE_DYNAMICS, "dynamics.json"))]
    stages.append(rules.physval_stage(physval))
    accepted = cand["passed"] and all(s["passed"] for s in stages)
    validated = parse_spec(spec)
    write_json(folder / "run.json", {
        "schema": "workcell-evidence/run/v1", "title": spec["title"], "notes": spec["notes"],
        "project": spec["project"], "spec": validated.to_dict(),
        "specDigest": validated.digest(), "seeds": spec["seeds"],
        "verdict": "accepted" if accepted else "rejected",
        "reasons": [] if accepted else ["candidate cell failed its checks"],
        "cells": {side: {"passed": cell["passed"], "successRate": cell["successRate"],
                         "checks": cell["checks"]}
                  for side, cell in (("reference", ref), ("candidate", cand))},
        "pairing": checks.pair_trials(ref["trials"], cand["trials"], req),
        "stages": stages,
        "provenance": provenance.collect(),
        "command": "evidence run spec.toml --out run",
    })


def build_run(out_dir: Path, sign_key: Path | None, **kwargs: Any) -> Path:
    """Write a complete run folder atomically (manifest, and signature with a key)."""
    with staged_run(out_dir, sign_key=sign_key) as tmp:
        write_run_files(tmp, SPEC, **kwargs)
    return out_dir


def build_demo(out_dir: Path, sign_key: Path | None) -> Path:
    """A demo folder: demo.json and two iteration run folders, each signed, all manifested."""
    key = load_private_key(sign_key) if sign_key else None
    with staged_run(out_dir, sign_key=key) as tmp:
        iterations, previous = [], None
        for i, (cycle, collide) in enumerate(((4.2, True), (4.25, False)), start=1):
            folder = tmp / f"iteration-{i}"
            folder.mkdir()
            write_run_files(folder, SPEC, candidate_cycle_s=cycle, candidate_collides=collide)
            finalize_run(folder, key)
            run = read_json(folder / "run.json")
            trials = {side: read_json(folder / side / "robot.json")["trials"]
                      for side in ("reference", "candidate")}
            iterations.append(iteration_record(i, folder.name, run, previous, trials))
            previous = run
        write_json(tmp / "demo.json", {"schema": "workcell-evidence/demo/v1",
                                       "iterations": iterations,
                                       "provenance": provenance.collect()})
    return out_dir


@pytest.fixture(scope="session")
def trusted_pair(tmp_path_factory: pytest.TempPathFactory) -> KeyPair:
    """The key pair the tests trust."""
    return keygen(tmp_path_factory.mktemp("trusted-key"))


@pytest.fixture(scope="session")
def untrusted_pair(tmp_path_factory: pytest.TempPathFactory) -> KeyPair:
    """A second key pair that no test trusts."""
    return keygen(tmp_path_factory.mktemp("untrusted-key"))


@pytest.fixture(scope="session")
def _run_template(tmp_path_factory: pytest.TempPathFactory, trusted_pair: KeyPair) -> Path:
    return build_run(tmp_path_factory.mktemp("template") / "run", trusted_pair.private_key)


@pytest.fixture()
def run_dir(tmp_path: Path, _run_template: Path) -> Path:
    """A fresh copy of a complete run folder signed with ``trusted_pair``."""
    target = tmp_path / "run"
    shutil.copytree(_run_template, target)
    return target


@pytest.fixture()
def demo_dir(tmp_path: Path, trusted_pair: KeyPair) -> Path:
    """A complete demo folder (two iterations) signed with ``trusted_pair``."""
    return build_demo(tmp_path / "demo", trusted_pair.private_key)
