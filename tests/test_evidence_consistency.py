"""verify recomputes what it can from the records, on real evidence (the committed demo).

Each test edits one record of a copy of ``evidence/demo``, re-manifests and re-signs every
folder it touches with a trusted test key, so that digests and signatures are fine and
ONLY the consistency checks can catch the edit: exit 1 and a finding naming the file and
the field.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator import tool
from generator.crosscheck.newton import newton_reasons
from generator.evidence.canonical import read_json, write_json
from generator.evidence.manifest import write_manifest
from generator.evidence.sign import KeyPair, load_public_keys, sign_run
from generator.evidence.verify import Code, Report, verify

DEMO = Path(__file__).resolve().parents[1] / "evidence" / "demo"
IT1 = "iteration-1"
CAND = f"{IT1}/candidate/robot.json"


@pytest.fixture(scope="module")
def _resigned_demo(tmp_path_factory: pytest.TempPathFactory, trusted_pair: KeyPair) -> Path:
    """The committed demo, every folder re-signed with the trusted test key."""
    demo = Path(shutil.copytree(DEMO, tmp_path_factory.mktemp("demo") / "demo"))
    for folder in ("iteration-1", "iteration-2"):
        sign_run(demo / folder, trusted_pair.private_key)
    write_manifest(demo)
    sign_run(demo, trusted_pair.private_key)
    return demo


@pytest.fixture()
def demo(tmp_path: Path, _resigned_demo: Path) -> Path:
    return Path(shutil.copytree(_resigned_demo, tmp_path / "demo"))


def _verify(target: Path, pair: KeyPair) -> Report:
    return verify(target, load_public_keys(pair.public_key))


def _tamper(demo: Path, rel: str, change: Callable[[Any], None], pair: KeyPair) -> Report:
    """Edit ``demo/rel``, re-manifest and re-sign its run folder and the demo; verify."""
    path = demo / rel
    data = read_json(path)
    change(data)
    write_json(path, data)
    first = Path(rel).parts[0]
    if first.startswith("iteration-"):
        write_manifest(demo / first)
        sign_run(demo / first, pair.private_key)
    write_manifest(demo)
    sign_run(demo, pair.private_key)
    return _verify(demo, pair)


def _assert_caught(report: Report, file: str, field: str) -> None:
    assert report.exit_code == 1, report.format_text()
    assert {f.code for f in report.findings} <= {Code.SUMMARY_MISMATCH, Code.RECORD_MALFORMED}, \
        report.format_text()
    assert any(f.file == file and field in f.message for f in report.findings), \
        report.format_text()


def test_resigned_committed_demo_verifies(demo: Path, trusted_pair: KeyPair) -> None:
    report = _verify(demo, trusted_pair)
    assert report.exit_code == 0, report.format_text()


# --- 1. trial flags against trial data -----------------------------------------------------


def _trial(index: int, **values: Any) -> Callable[[Any], None]:
    return lambda d: d["trials"][index].update(values)


def _target(index: int, target: int, **values: Any) -> Callable[[Any], None]:
    return lambda d: d["trials"][index]["targets"][target].update(values)


TRIAL_EDITS: list[tuple[str, Callable[[Any], None], str]] = [
    ("collisionFree", _trial(0, collisionFree=True), "trials[seed=0].collisionFree"),
    ("ikErrorMm", _trial(0, ikErrorMm=0.0001), "trials[seed=0].ikErrorMm"),
    ("reached", _trial(0, reached=False), "trials[seed=0].reached"),
    ("target reason", _target(0, 1, reason="not-converged"), "trials[seed=0].reached"),
    ("settled", _trial(0, settled=False), "trials[seed=0].settled"),
    ("success", _trial(0, success=True), "trials[seed=0].success"),
    ("failureReason", _trial(0, failureReason="over-cycle"), "trials[seed=0].failureReason"),
    ("failureReason null", _trial(3, failureReason=None), "trials[seed=3].failureReason"),
]


@pytest.mark.parametrize(("label", "change", "field"), TRIAL_EDITS,
                         ids=[e[0] for e in TRIAL_EDITS])
def test_trial_flag_inconsistent_with_trial_data(demo: Path, trusted_pair: KeyPair, label: str,
                                                 change: Callable[[Any], None],
                                                 field: str) -> None:
    _assert_caught(_tamper(demo, CAND, change, trusted_pair), CAND, field)


def test_reached_target_beyond_reach_tolerance(demo: Path, trusted_pair: KeyPair) -> None:
    def change(robot: Any) -> None:
        trial = robot["trials"][2]
        trial["targets"][4]["errorMm"] = 2.5  # reason stays null: "reached"
        trial["ikErrorMm"] = 2.5
        for check in robot["checks"]:  # keep the checks consistent: only the rule catches it
            if check["id"] == "reach":
                check["observed"] = 2.5
    report = _tamper(demo, CAND, change, trusted_pair)
    _assert_caught(report, CAND, "trials[seed=2].targets[place].errorMm exceeds the reach")


# --- 2. stages recomputed from the files ------------------------------------------------------


def _stage(name: str, **values: Any) -> Callable[[Any], None]:
    return lambda d: next(s for s in d["stages"] if s["name"] == name).update(values)


def test_run_stage_contradicting_newton_record(demo: Path, trusted_pair: KeyPair) -> None:
    report = _tamper(demo, f"{IT1}/run.json",
                     _stage("candidate: Newton cross-check", passed=False), trusted_pair)
    _assert_caught(report, f"{IT1}/run.json", "stages[candidate: Newton cross-check].passed")


def test_run_stage_dropped(demo: Path, trusted_pair: KeyPair) -> None:
    def drop(run: Any) -> None:
        run["stages"] = [s for s in run["stages"] if s["name"] != "reference: Newton cross-check"]
    report = _tamper(demo, f"{IT1}/run.json", drop, trusted_pair)
    _assert_caught(report, f"{IT1}/run.json", "'reference: Newton cross-check' is missing")


def test_newton_record_passed_against_its_measurements(demo: Path, trusted_pair: KeyPair) -> None:
    rel = f"{IT1}/candidate/newton.json"
    report = _tamper(demo, rel, lambda d: d.update(worstPositionErrorMm=0.5), trusted_pair)
    _assert_caught(report, rel, "passed")
    _assert_caught(report, f"{IT1}/run.json", "stages[candidate: Newton cross-check].passed")
    _assert_caught(report, f"{IT1}/candidate/robot.json", "crosschecks.newton.")


@pytest.mark.parametrize(("label", "change", "field"), [
    ("configurations", lambda d: d.update(configurations=32), "passed"),
    ("orphan joints", lambda d: d.update(orphanJoints=1, orphanJointNames=["elbow"]), "passed"),
    ("missing body", lambda d: d["bodies"].update(missingInNewton=["gripper"]), "passed"),
    ("finalize note", lambda d: d.update(newtonFinalize="Newton refused"), "passed"),
    ("thresholds", lambda d: d["thresholds"].update(positionMm=1.0), "thresholds"),
], ids=["configurations", "orphan joints", "missing body", "finalize note", "thresholds"])
def test_newton_rule_is_the_producers(demo: Path, trusted_pair: KeyPair, label: str,
                                      change: Callable[[Any], None], field: str) -> None:
    rel = f"{IT1}/reference/newton.json"
    record = read_json(demo / rel)
    assert newton_reasons(record) == [] and record["passed"] is True
    change(record)
    if field == "passed":
        assert newton_reasons(record), label  # the producer's rule fails it too
    _assert_caught(_tamper(demo, rel, change, trusted_pair), rel, field)


def test_dynamics_record_passed_against_its_tolerances(demo: Path,
                                                       trusted_pair: KeyPair) -> None:
    rel = f"{IT1}/reference/dynamics.json"
    report = _tamper(demo, rel, lambda d: d["massMatrix"].update(worstAbsDiff=1e-6),
                     trusted_pair)
    _assert_caught(report, rel, "passed")
    _assert_caught(report, f"{IT1}/run.json",
                   "stages[reference: Pinocchio dynamics cross-check].passed")


def test_dynamics_tolerances_loosened(demo: Path, trusted_pair: KeyPair) -> None:
    rel = f"{IT1}/reference/dynamics.json"

    def loosen(d: Any) -> None:
        d["tolerances"]["gravityTorqueNm"] = 1e-3
        d["gravityTorque"]["worstAbsDiff"] = 1e-6
    _assert_caught(_tamper(demo, rel, loosen, trusted_pair), rel, "tolerances")


def test_usd_export_passed_against_its_findings(demo: Path, trusted_pair: KeyPair) -> None:
    def warn(robot: Any) -> None:
        robot["exports"]["usd"]["warnings"] = 1
        robot["exports"]["usd"]["findings"] = ["Warn usdPhysicsValidators:X: made up [/W]"]
    report = _tamper(demo, CAND, warn, trusted_pair)
    _assert_caught(report, CAND, "exports.usd.passed")
    _assert_caught(report, f"{IT1}/run.json", "stages[candidate: OpenUSD validation].passed")


def test_usd_joint_count(demo: Path, trusted_pair: KeyPair) -> None:
    report = _tamper(demo, CAND, lambda d: d["exports"]["usd"].update(revoluteJoints=5),
                     trusted_pair)
    _assert_caught(report, CAND, "exports.usd.passed")


def test_physval_stage_recomputed(demo: Path, trusted_pair: KeyPair) -> None:
    rel = f"{IT1}/physval.json"
    report = _tamper(demo, rel,
                     lambda d: d["assets"]["workpiece"]["checks"][0].update(status="FAIL"),
                     trusted_pair)
    _assert_caught(report, f"{IT1}/run.json", "stages[physical-validation].passed")


def test_robot_crosscheck_summary_against_file(demo: Path, trusted_pair: KeyPair) -> None:
    report = _tamper(demo, CAND, lambda d: d["crosschecks"]["dynamics"].update(passed=False),
                     trusted_pair)
    _assert_caught(report, CAND, "crosschecks.dynamics.passed")


# --- 4. tool mass table ---------------------------------------------------------------------


def test_tool_mass_rule_reapplied(demo: Path, trusted_pair: KeyPair) -> None:
    report = _tamper(demo, CAND, lambda d: d["tool"]["massesG"].update(used=60.0), trusted_pair)
    _assert_caught(report, CAND, "tool.passed")
    _assert_caught(report, CAND, "tool.relativeToBrep")


def test_tool_relative_to_brep_recomputed(demo: Path, trusted_pair: KeyPair) -> None:
    report = _tamper(demo, CAND, lambda d: d["tool"]["relativeToBrep"].update(convexHull=0.01),
                     trusted_pair)
    _assert_caught(report, CAND, "tool.relativeToBrep")


def test_tool_tolerance_loosened(demo: Path, trusted_pair: KeyPair) -> None:
    report = _tamper(demo, CAND, lambda d: d["tool"].update(massToleranceRel=0.5), trusted_pair)
    _assert_caught(report, CAND, "tool.massToleranceRel")


def test_tool_mass_rule() -> None:
    assert tool.mass_within_tolerance(102.9, 100.0)
    assert not tool.mass_within_tolerance(103.1, 100.0)
    assert tool.relative_to_brep({"used": 103.0}, 100.0) == {"used": 0.03}


# --- 5. demo.json rebuilt from the iteration folders -------------------------------------


DEMO_EDITS: list[tuple[str, Callable[[Any], None]]] = [
    ("parameterDiff", lambda d: d["iterations"][1].update(parameterDiff=[])),
    ("requirementsRelaxed", lambda d: d["iterations"][0].update(requirementsRelaxed=True)),
    ("speedUp", lambda d: d["iterations"][1].update(speedUp=0.5)),
    ("referenceSuccesses", lambda d: d["iterations"][0].update(referenceSuccesses=10)),
    ("candidateSuccesses", lambda d: d["iterations"][0].update(candidateSuccesses=10)),
    ("candidateCollidingSeeds", lambda d: d["iterations"][0].update(candidateCollidingSeeds=0)),
    ("seeds", lambda d: d["iterations"][1].update(seeds=12)),
    ("referenceSlowestCycleS", lambda d: d["iterations"][1].update(referenceSlowestCycleS=9.0)),
    ("candidateSlowestCycleS", lambda d: d["iterations"][1].update(candidateSlowestCycleS=4.0)),
    ("firstContacts", lambda d: d["iterations"][0].update(firstContacts=[])),
]


@pytest.mark.parametrize(("field", "change"), DEMO_EDITS, ids=[e[0] for e in DEMO_EDITS])
def test_demo_iteration_recomputed(demo: Path, trusted_pair: KeyPair, field: str,
                                   change: Callable[[Any], None]) -> None:
    _assert_caught(_tamper(demo, "demo.json", change, trusted_pair), "demo.json", f".{field} (")


@pytest.mark.parametrize("key", ["runFolder", "verdict"])
def test_demo_iteration_without_folder_or_verdict(demo: Path, trusted_pair: KeyPair,
                                                  key: str) -> None:
    report = _tamper(demo, "demo.json", lambda d: d["iterations"][1].pop(key), trusted_pair)
    _assert_caught(report, "demo.json", "iterations[1] names no runFolder or no verdict")


# --- 6. a folder signed inside an interrupted demo's staging folder --------------------------


def test_iteration_inside_partial_demo_is_refused(tmp_path: Path, _resigned_demo: Path,
                                                  trusted_pair: KeyPair) -> None:
    # What an interrupted `evidence demo` leaves: .NAME.partial-PID/ with signed iterations.
    partial = Path(shutil.copytree(_resigned_demo, tmp_path / ".demo.partial-123"))
    iteration = partial / "iteration-1"
    assert _verify(_resigned_demo / "iteration-1", trusted_pair).exit_code == 0
    for target in (iteration, partial / "iteration-1" / ".." / "iteration-1"):
        report = _verify(target, trusted_pair)
        assert report.exit_code == 1, report.format_text()
        assert {f.code for f in report.findings} == {Code.PARTIAL_RUN}
        assert ".demo.partial-123" in report.findings[0].message
    link = tmp_path / "looks-finished"
    link.symlink_to(iteration)
    assert {f.code for f in _verify(link, trusted_pair).findings} == {Code.PARTIAL_RUN}


# --- completeness: a failed cross-check cannot be deleted away -----------------------------


def test_deleting_a_cross_check_with_its_stage_and_summary_is_caught(
        demo: Path, trusted_pair: KeyPair) -> None:
    """Remove candidate newton.json, its run.json stage and its robot.json summary, then
    re-manifest and re-sign everything: the run is still incomplete, so exit 1."""
    (demo / IT1 / "candidate" / "newton.json").unlink()

    def drop_stage(run: Any) -> None:
        run["stages"] = [s for s in run["stages"] if s["name"] != "candidate: Newton cross-check"]

    robot = read_json(demo / CAND)
    robot["crosschecks"].pop("newton")
    write_json(demo / CAND, robot)
    report = _tamper(demo, f"{IT1}/run.json", drop_stage, trusted_pair)
    assert report.exit_code == 1, report.format_text()
    assert any(f.code is Code.FILE_MISSING and f.file == f"{IT1}/candidate/newton.json"
               for f in report.findings), report.format_text()
