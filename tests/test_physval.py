"""Object suite (protocol 004): every group passes on the good samples and fails on its
negative control; unexecuted checks are UNVERIFIED; seeded runs repeat; CLI contract."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.physval import controls, material, numerics, passive, suite
from generator.physval.manifest import (
    Bounce,
    Engine,
    ManifestError,
    Measured,
    Measurements,
    load_manifest,
    parse_manifest,
)
from generator.physval.results import Status

ASSETS = Path(__file__).resolve().parents[1] / "evidence" / "assets"


def _load(name: str):
    return load_manifest(ASSETS / f"{name}.json")


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, Status]]:
    """Status of every check on the three good samples (run once)."""
    out = {}
    for name in ("workpiece", "mug", "lid"):
        checks, _tasks = suite.object_checks(_load(name))
        out[name] = {c.id: c.status for c in checks}
    return out


@pytest.fixture(scope="module")
def negative() -> dict[str, dict]:
    return controls.negative_controls()


GOOD = {  # check -> the good sample it must PASS on
    "structure.load": "workpiece", "structure.resources": "mug", "structure.units": "workpiece",
    "structure.watertight": "mug", "structure.parts": "lid", "inertia.mass": "mug",
    "inertia.com": "mug", "inertia.tensor": "lid", "inertia.principal": "workpiece",
    "passive.fall": "mug", "passive.drops": "mug", "response.linear": "workpiece",
    "response.angular": "mug", "numerics.timestep": "mug", "geometry.cavity": "mug",
    "mechanism.hinge_axis": "lid", "mechanism.hinge_sweep": "lid",
}


@pytest.mark.parametrize("check_id", sorted(GOOD))
def test_check_passes_on_good_sample(results, check_id):
    assert results[GOOD[check_id]][check_id] is Status.PASS


@pytest.mark.parametrize("check_id", sorted(controls.CONTROLS))
def test_check_fails_on_its_negative_control(negative, check_id):
    record = negative[check_id]
    assert record["ran"] and record["status"] == "FAIL" and record["failedAsExpected"]


def test_timestep_check_steps_the_lid_mechanism(results):
    assert results["lid"]["numerics.timestep"] is Status.PASS
    record = numerics.check_timestep(_load("lid"), True)
    measured = record.measured
    assert [j["joint"] for j in measured["joints"]] == ["lid_hinge"]
    assert measured["joints"][0]["qvel0"] == [1.0]
    # the comparison sees a real (gravity-driven swing) difference, below 0.02 rad/s
    assert 0.0 < measured["angularDiffRadS"] < 0.02
    assert measured["divergedAtS"] == {"2ms": None, "1ms": None}


def test_timestep_check_fails_on_the_stiff_spring_lid(tmp_path):
    bad = controls._stiff_spring(tmp_path)
    # the description's numbers: the lid's compiled hinge-axis inertia and w * dt
    model = mujoco.MjModel.from_xml_path(str(bad.path(bad.file)))
    assert model.jnt_stiffness[0] == controls.STIFF_SPRING_NM_PER_RAD
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    inertia = np.zeros((1, 1))
    mujoco.mj_fullM(model, data, inertia)
    assert inertia[0, 0] == pytest.approx(controls.LID_HINGE_INERTIA_KG_M2, rel=1e-9)
    assert controls.STIFF_SPRING_OMEGA_RAD_S * 0.002 > 2 > controls.STIFF_SPRING_OMEGA_RAD_S * 0.001
    record = numerics.check_timestep(bad, True)
    assert record.status is Status.FAIL and "2 ms run diverged" in record.reason
    m = record.measured
    assert m["divergedAtS"]["2ms"] < 0.05 and m["divergedAtS"]["1ms"] is None
    assert m["peakAbsQvel"]["1ms"] < 2.0  # 1 ms stays bounded (started at 1 rad/s)


def test_timestep_check_fails_on_an_inaccurate_but_stable_spring(tmp_path):
    # 80 N m/rad: w = 882 rad/s, w dt = 1.76 at 2 ms (stable, far off) and 0.88 at 1 ms
    record = numerics.check_timestep(controls._stiff_spring(tmp_path, 80.0), True)
    m = record.measured
    assert record.status is Status.FAIL and m["divergedAtS"] == {"2ms": None, "1ms": None}
    assert m["angularDiffRadS"] > 0.5


def test_timestep_negative_control_ran_and_failed(negative):
    assert "numerics.timestep" not in controls.NO_CONTROL
    record = negative["numerics.timestep"]
    assert record["ran"] is True and record["failedAsExpected"] is True
    assert record["asset"] == "lid-stiff-spring" and "2.42 at 2 ms" in record["description"]


def test_checks_without_control_say_so(negative):
    for check_id in controls.NO_CONTROL:
        assert negative[check_id] == {"ran": False, "reason": controls.NO_CONTROL[check_id],
                                      "failedAsExpected": False}


def test_required_controls_are_the_committed_samples(negative):
    assert negative["geometry.cavity"]["asset"] == "mug-single-hull"
    assert negative["mechanism.hinge_sweep"]["asset"] == "lid-wrong-axis"
    assert negative["inertia.mass"]["asset"] == "mug-wrong-mass"


def test_unexecuted_checks_are_unverified_never_pass(results):
    for name in results:
        for check_id in ("material.friction", "material.restitution", "real.mass", "real.com"):
            assert results[name][check_id] is Status.UNVERIFIED
    assert results["workpiece"]["geometry.cavity"] is Status.NOT_APPLICABLE
    assert results["lid"]["passive.drops"] is Status.NOT_APPLICABLE


def test_asset_that_does_not_load_has_no_pass_beyond_resources(tmp_path):
    bad = dataclasses.replace(_load("workpiece"), file="missing.stl", root=tmp_path)
    checks, _ = suite.object_checks(bad)
    by_id = {c.id: c for c in checks}
    assert by_id["structure.load"].status is Status.FAIL
    for check_id in ("inertia.mass", "passive.fall", "passive.drops", "response.linear",
                     "numerics.timestep"):
        assert by_id[check_id].status is Status.UNVERIFIED
        assert by_id[check_id].reason
    assert not [c for c in checks if c.status is Status.PASS]


def test_states_are_derived():
    record = suite.run_object_suite(_load("mug-single-hull"), negative_controls=False)
    states = {s["name"]: s["status"] for s in record["states"]}
    assert states == {"STRUCTURE_VALID": "PASS", "DYNAMICS_SELF_CONSISTENT": "PASS",
                      "TASK_VALIDATED": "FAIL", "REAL_WORLD_FIT": "UNVERIFIED"}
    cavity = next(c for c in record["checks"] if c["id"] == "geometry.cavity")
    assert cavity["threshold"]["source"].startswith("protocol 004 group")
    assert cavity["negativeControl"]["ran"] is False


def test_real_world_fit_compares_supplied_measurements():
    wp = _load("workpiece")
    fit = dataclasses.replace(wp, measurements=Measurements(
        mass_kg=Measured(0.1728, 0.001), com_m=Measured((0.0, 0.0, 0.02), 0.0005)))
    checks, tasks = suite.object_checks(fit)
    by_id = {c.id: c.status for c in checks}
    assert by_id["real.mass"] is Status.PASS and by_id["real.com"] is Status.PASS
    # friction still unmeasured: the fit as a whole stays UNVERIFIED, never PASS
    from generator.physval.results import derive_states

    assert derive_states(checks, tasks)[3].status is Status.UNVERIFIED


def test_restitution_without_a_measurement_is_unverified():
    record = material.check_restitution(_load("workpiece"), True)
    assert record.status is Status.UNVERIFIED and record.threshold is None
    assert "measurements.restitution" in record.reason


def test_restitution_passes_a_measurement_of_the_engines_own_bounce():
    # a bouncy contact (damping ratio 0.1): the 40 mm cube leaves the ground; the "measured"
    # rebound is taken from that run, so the check must PASS on it and repeat exactly
    bouncy = dataclasses.replace(_load("workpiece"), engine=Engine(solref=(0.02, 0.1)))
    sim = material.simulated_bounce(bouncy, 0.1)
    assert sim["leftGround"] and 0.5 < sim["coefficient"] < 1.0
    # ballistic consistency: rebound apex ~ v_takeoff^2 / 2g, e_height ~ e_velocity
    assert sim["reboundHeightM"] == pytest.approx(sim["takeoffSpeedMS"] ** 2 / (2 * 9.81),
                                                  rel=0.02)
    assert abs(sim["coefficient"] - sim["velocityRatio"]) < 0.03
    measured = dataclasses.replace(bouncy, measurements=Measurements(
        restitution=Bounce(0.1, sim["reboundHeightM"], 0.02)))
    record = material.check_restitution(measured, True)
    assert record.status is Status.PASS and record.measured["errorCoefficient"] < 1e-12
    assert record.threshold.source.startswith("protocol 004 group 6")
    assert record.to_json() == material.check_restitution(measured, True).to_json()
    # the default (critically damped) contact does not bounce: e = 0, so it fails there
    default = dataclasses.replace(measured, engine=Engine())
    assert material.check_restitution(default, True).status is Status.FAIL


def test_restitution_negative_control_ran_and_failed(negative):
    assert "material.restitution" not in controls.NO_CONTROL
    record = negative["material.restitution"]
    assert record["ran"] is True and record["failedAsExpected"] is True
    assert record["asset"] == "workpiece-bounce-mismatch"
    bad = controls.CONTROLS["material.restitution"].make(Path("."))
    result = material.check_restitution(bad, True)
    assert result.measured["coefficient"] == 0.0 and not result.measured["leftGround"]
    assert result.measured["measuredCoefficient"] == pytest.approx(0.6 ** 0.5)


def test_restitution_measurement_is_parsed_and_validated(tmp_path):
    data = json.loads((ASSETS / "workpiece.json").read_text())
    data["measurements"] = {"restitution": {"drop_height_m": 0.2, "rebound_height_m": 0.05,
                                            "tolerance": 0.1}}
    bounce = parse_manifest(data, ASSETS).measurements.restitution
    assert bounce == Bounce(0.2, 0.05, 0.1) and bounce.coefficient == pytest.approx(0.5)
    bad = [{"drop_height_m": 0.0, "rebound_height_m": -0.01, "tolerance": 0, "typo": 1},
           {"drop_height_m": 0.1, "rebound_height_m": 0.2, "tolerance": "5 %"},
           {"drop_height_m": 0.1}, 0.7]
    wheres = []
    for raw in bad:
        data["measurements"] = {"restitution": raw}
        with pytest.raises(ManifestError) as err:
            parse_manifest(data, tmp_path)
        wheres.append("\n".join(err.value.problems))
    first, second, third, fourth = wheres
    for needle in ("restitution.drop_height_m = 0.0", "restitution.rebound_height_m = -0.01",
                   "restitution.tolerance = 0", "restitution.typo: unknown key"):
        assert needle in first, needle
    assert "no higher than the drop height" in second and "tolerance = '5 %'" in second
    assert "rebound_height_m: missing" in third and "tolerance: missing" in third
    assert "measurements.restitution = 0.7" in fourth


def test_seeded_drops_repeat_exactly():
    wp = _load("workpiece")
    first = passive.check_drops(wp, True).to_json()
    assert first == passive.check_drops(wp, True).to_json()
    assert [t["seed"] for t in first["measured"]["trials"]] == list(range(6))


def test_manifest_errors_are_collected(tmp_path):
    with pytest.raises(ManifestError) as err:
        parse_manifest({"schema": "x", "name": "", "geometry": {"kind": "stl", "file": 3},
                        "inertials": [{"body": "object", "mass_kg": -1, "com_m": [0, 0],
                                       "inertia_kg_m2": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                       "source": "s", "typo": 1}],
                        "hinge": {"joint": "j"}}, tmp_path)
    text = "\n".join(err.value.problems)
    for needle in ("schema", "name", "geometry.kind", "mass_kg", "com_m", "typo",
                   "hinge.axis: missing", "an MJCF asset"):
        assert needle in text, needle
    assert len(err.value.problems) >= 8


def test_toml_manifest_is_accepted(tmp_path):
    data = json.loads((ASSETS / "workpiece.json").read_text())
    lines = [f'schema = "{data["schema"]}"', 'name = "wp"', "[geometry]",
             f'kind = "mesh"\nfile = "{(ASSETS / "workpiece" / "cube40.stl").as_posix()}"',
             'length_unit = "mm"', "[[inertials]]"]
    inertial = data["inertials"][0]
    lines += [f"{k} = {json.dumps(v)}" for k, v in inertial.items()]
    (tmp_path / "wp.toml").write_text("\n".join(lines) + "\n")
    manifest = load_manifest(tmp_path / "wp.toml")
    assert manifest.length_unit == "mm" and manifest.inertials[0].mass_kg == inertial["mass_kg"]


def test_cli_validate_object(tmp_path):
    runner = CliRunner()
    res = runner.invoke(main, ["validate-object", str(ASSETS / "lid-wrong-axis.json"),
                               "--out", str(tmp_path / "out")])
    assert res.exit_code == 1, res.output
    record = json.loads((tmp_path / "out" / "physval.json").read_text())
    asset = record["assets"]["object"]
    assert asset["summary"]["FAIL"] == 2
    assert all("negativeControl" in c for c in asset["checks"])
    assert "/work" not in (tmp_path / "out" / "physval.json").read_text()
    (tmp_path / "bad.json").write_text("{}")
    res = runner.invoke(main, ["validate-object", str(tmp_path / "bad.json"), "--out",
                               str(tmp_path / "o2")])
    assert res.exit_code == 2 and "missing (required)" in res.output


def test_sample_script_reproduces_committed_files(tmp_path):
    from generator.samples import physval_assets

    physval_assets.workpiece(tmp_path)
    physval_assets.build_lid(tmp_path)
    for rel in ("workpiece.json", "workpiece/cube40.stl", "lid.json", "lid/lid.xml",
                "lid-wrong-axis.json", "lid/lid-wrong-axis.xml"):
        assert (tmp_path / rel).read_bytes() == (ASSETS / rel).read_bytes(), rel
