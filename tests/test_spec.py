"""Run spec validation at the boundary (issue 2)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.spec import CELL_RANGES, DEFAULT_SEEDS, SpecError, load_spec, parse_spec

CELL = {"pickDistance": 0.32, "placeDistance": 0.32, "pickHeight": 0.6, "placeHeight": 0.7,
        "pedestalHeight": 1.0, "guardClearance": 0.3, "speedFraction": 0.75, "jitter": 0.02}
BASE = {"reference": CELL, "candidate": CELL,
        "requirements": {"maxCycleSeconds": 5.0, "minSuccessRate": 0.9}}


def problems(raw) -> list[str]:
    with pytest.raises(SpecError) as err:
        parse_spec(raw)
    return err.value.problems


def test_valid_spec_defaults_to_ten_seeds():
    spec = parse_spec(BASE)
    assert spec.seeds == DEFAULT_SEEDS == tuple(range(10))
    assert spec.tool is None and spec.project == "default"


@pytest.mark.parametrize("field", sorted(CELL_RANGES))
@pytest.mark.parametrize("side", ["reference", "candidate"])
def test_every_out_of_range_parameter_is_rejected_with_its_field(field, side):
    lo, hi, _ = CELL_RANGES[field]
    for bad in (lo - 0.01, hi + 0.01):
        raw = json.loads(json.dumps(BASE))
        raw[side][field] = bad
        found = problems(raw)
        assert len(found) == 1
        assert found[0].startswith(f"{side}.{field}: {bad!r}")
        assert f"[{lo}, {hi}]" in found[0]


def test_all_errors_are_reported_at_once():
    raw = json.loads(json.dumps(BASE))
    raw["reference"]["pickDistance"] = 9
    raw["candidate"]["jitter"] = "big"
    raw["requirements"]["minSuccessRate"] = 1.5
    raw["seeds"] = [1, 1, -3]
    found = problems(raw)
    joined = "\n".join(found)
    for fragment in ("reference.pickDistance", "candidate.jitter", "requirements.minSuccessRate",
                     "duplicate", "-3"):
        assert fragment in joined
    assert len(found) >= 5


@pytest.mark.parametrize("where", ["", "reference.", "requirements.", "tool."])
def test_unknown_keys_are_errors(where):
    raw = json.loads(json.dumps(BASE)) | {"tool": {"cadReviewId": "x"}}
    table = raw
    for part in filter(None, where.split(".")):
        table = table[part]
    table["pickDistanse"] = 0.3
    found = problems(raw)
    assert any(f"{where}pickDistanse: unknown key" in p for p in found), found


def test_seed_count_limits():
    assert "at most 1000" in "\n".join(problems(BASE | {"seeds": list(range(1001))}))
    assert parse_spec(BASE | {"seeds": list(range(1000))}).seeds[-1] == 999
    assert problems(BASE | {"seeds": []})


def test_toml_and_json_files(tmp_path):
    toml_file = tmp_path / "spec.toml"
    toml_file.write_text(
        'title = "t"\nseeds = [1, 2]\n[reference]\n' + "".join(
            f"{k} = {v}\n" for k, v in CELL.items()) + "[candidate]\n" + "".join(
            f"{k} = {v}\n" for k, v in CELL.items())
        + "[requirements]\nmaxCycleSeconds = 5.0\nminSuccessRate = 0.9\n")
    json_file = tmp_path / "spec.json"
    json_file.write_text(json.dumps(BASE | {"title": "t", "seeds": [1, 2]}))
    assert load_spec(toml_file).digest() == load_spec(json_file).digest()
    bad = tmp_path / "bad.toml"
    bad.write_text("reference = [")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(bad)


def test_cli_invalid_spec_exits_2_and_writes_nothing(tmp_path):
    raw = json.loads(json.dumps(BASE))
    raw["candidate"]["guardClearance"] = 2.0
    raw["oops"] = 1
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(raw))
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(spec_file), "--out", str(out)])
    assert result.exit_code == 2
    assert "candidate.guardClearance" in result.output and "oops: unknown key" in result.output
    assert "Traceback" not in result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.json"]


def test_cli_refused_tool_exits_2_and_writes_nothing(tmp_path):
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps(BASE | {"project": "workcell-demo", "seeds": [0],
                                            "tool": {"cadReviewId": "cr-0139-nema17-bracket"}}))
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", str(spec_file), "--out", str(out)])
    assert result.exit_code == 2
    assert "TOOL_NOT_ACCEPTED" in result.output
    assert not out.exists()


def test_example_spec_is_valid():
    from pathlib import Path

    spec = load_spec(Path(__file__).parents[1] / "examples" / "spec.toml")
    assert spec.tool is not None and spec.tool.cadReviewId == "cr-0142-nema17-bracket"
    assert len(spec.seeds) == 10
