"""User errors end with a message and exit code 2, never a traceback (issues 2, 3, 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.cli import main
from generator.spec import SpecError, load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "spec.toml"


def invoke(*args) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"traceback: {result.exception!r}\n{result.output}"
    return result.exit_code, result.output


def test_run_with_a_missing_signing_key_exits_2_before_simulating(tmp_path):
    code, out = invoke("run", EXAMPLE, "--out", tmp_path / "r", "--sign-key",
                       tmp_path / "missing.pem")
    assert code == 2 and "cannot read private key" in out
    assert not (tmp_path / "r").exists()


def test_run_with_a_public_key_as_signing_key_exits_2(tmp_path):
    pub = ROOT / "evidence" / "keys" / "demo-signing-key.pub.pem"
    code, out = invoke("run", EXAMPLE, "--out", tmp_path / "r", "--sign-key", pub)
    assert code == 2 and "private key" in out


def test_workers_must_be_positive(tmp_path):
    code, _ = invoke("run", EXAMPLE, "--out", tmp_path / "r", "--workers", "0")
    assert code == 2


def test_demo_refuses_a_non_empty_folder_without_overwrite(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "keep.txt").write_text("x")
    code, out = invoke("demo", "--out", tmp_path / "d", "--no-overwrite")
    assert code == 2 and "not empty" in out


def test_site_refuses_an_output_inside_the_evidence(tmp_path):
    (tmp_path / "ev").mkdir()
    code, out = invoke("site", tmp_path / "ev", "--out", tmp_path / "ev" / "site")
    assert code == 2 and "overlaps" in out


def test_keygen_refuses_a_name_with_a_path(tmp_path):
    code, out = invoke("keygen", "--out", tmp_path / "k", "--name", "../evil")
    assert code == 2 and "plain file name" in out
    assert not (tmp_path / "evil.pem").exists()


def test_reproduce_on_a_malformed_run_exits_2(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "run.json").write_text("{not json")
    code, _ = invoke("reproduce", tmp_path / "run")
    assert code == 2


def test_validate_object_with_out_under_a_file_exits_2(tmp_path):
    (tmp_path / "file").write_text("x")
    code, _ = invoke("validate-object", ROOT / "evidence" / "assets" / "workpiece.json",
                     "--out", tmp_path / "file" / "out")
    assert code == 2


def test_non_utf8_spec_and_nested_seeds_are_spec_errors(tmp_path):
    binary = tmp_path / "spec.toml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec(binary)
    raw = json.loads(json.dumps({"reference": {}, "candidate": {}, "requirements": {},
                                 "seeds": [[0], [1]]}))
    with pytest.raises(SpecError) as err:
        parse_spec(raw)
    assert any("[0] is not an integer" in p for p in err.value.problems)
