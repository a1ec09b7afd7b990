"""The static evidence site: traceable numbers, golden page, escaping, links, signatures.

Regenerate the golden run pages after an intended change with::

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_site.py -k golden
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SPEC, build_run
from test_site_support import (
    COMMITTED_DEMO,
    COMMITTED_EVIDENCE,
    COMMITTED_TRUSTED_KEYS,
    HOSTILE_NOTES,
    HOSTILE_TITLE,
    expected_value,
    fixture_demo,
    internal_target,
    mixed_run,
    scan,
    shown_matches,
    trusted_keys_file,
)

from generator.cli import main
from generator.evidence.canonical import read_json, write_json
from generator.evidence.sign import KeyPair
from generator.site import build_site
from generator.site.signatures import TrustedKeysError

REPO = Path(__file__).resolve().parents[1]
GOLDEN_DIR = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("UPDATE_GOLDEN") == "1"
HEX64 = re.compile(r"\b[0-9a-f]{64}\b")


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory: pytest.TempPathFactory,
              trusted_pair: KeyPair) -> tuple[Path, Path]:
    """(evidence folder, site folder): the fixture demo rendered with a trusted key."""
    root = tmp_path_factory.mktemp("demo-site")
    evidence = root / "evidence"
    fixture_demo(evidence, trusted_pair.private_key)
    keys = trusted_keys_file(root / "keys", trusted_pair.public_key)
    build_site(evidence, root / "site", keys)
    return evidence, root / "site"


@pytest.fixture(scope="module")
def committed_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(evidence folder, site folder) for the committed demo."""
    assert (COMMITTED_DEMO / "demo.json").is_file(), "evidence/demo is missing (run `make demo`)"
    site = tmp_path_factory.mktemp("committed-site") / "site"
    build_site(COMMITTED_EVIDENCE, site, COMMITTED_TRUSTED_KEYS)
    return COMMITTED_EVIDENCE, site


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


# --- every number comes from an evidence file -------------------------------------------


def _check_numbers(evidence: Path, site: Path) -> dict[str, int]:
    """Resolve every data-source number of every page; return counts per field name."""
    cache: dict[str, object] = {}
    seen: dict[str, int] = {}
    for page in _pages(site):
        for element in scan(page).sourced:
            source = element.attrs["data-source"]
            field = source.rsplit("/", 1)[-1] + element.attrs.get("data-op", "")
            seen[field] = seen.get(field, 0) + 1
            if element.attrs.get("data-missing") == "true":
                assert element.text.strip() == "n/a", source
                continue
            value = expected_value(evidence, element, cache)
            assert float(element.attrs["data-value"]) == pytest.approx(value, rel=1e-12), \
                (page.name, source)
            assert shown_matches(element.text, value), (page.name, source, element.text, value)
    return seen


HEADLINE_FIELDS = ("cycleSeconds", "ikErrorMm", "minClearanceMm", "trialscount:success",
                   "observed", "successRate")


def test_every_number_on_the_fixture_demo_site_resolves(demo_site: tuple[Path, Path]) -> None:
    evidence, site = demo_site
    seen = _check_numbers(evidence, site)
    for field in HEADLINE_FIELDS:
        assert seen.get(field, 0) > 0, f"no {field} shown on the site"


def test_every_number_on_the_committed_demo_site_resolves(
        committed_site: tuple[Path, Path]) -> None:
    evidence, site = committed_site
    seen = _check_numbers(evidence, site)
    for field in (*HEADLINE_FIELDS, "speedUp", "candidateSlowestCycleS", "candidateSuccesses"):
        shown = sum(n for key, n in seen.items() if key.startswith(field))  # key: field + op
        assert shown > 0, f"no {field} shown on the site"
    demo = read_json(COMMITTED_DEMO / "demo.json")
    if any(read_json(p).get("tool") for p in COMMITTED_DEMO.glob("*/candidate/robot.json")):
        assert seen.get("brep", 0) > 0 and seen.get("exactMesh", 0) > 0, "mass table missing"
    assert demo["iterations"], "demo.json lists no iterations"


def test_a_wrong_number_is_caught(demo_site: tuple[Path, Path], tmp_path: Path) -> None:
    """The number check is not vacuous: a page whose number disagrees fails it."""
    evidence, site = demo_site
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    page = copy / "runs" / "demo--iteration-2.html"
    text = page.read_text(encoding="utf-8")
    match = re.search(r'(data-source="[^"]*cycleSeconds" data-value=")([^"]+)', text)
    assert match
    page.write_text(text.replace(match.group(0), match.group(1) + "123.456"), encoding="utf-8")
    with pytest.raises(AssertionError):
        _check_numbers(evidence, copy)


# --- golden run page --------------------------------------------------------------------


def _normalise(html: str) -> str:
    """Blank the fields that differ between machines and sessions for fixture evidence:
    digests and key ids, provenance, and the sizes of files that embed provenance."""
    html = HEX64.sub("<sha256>", html)
    html = re.sub(r"key [0-9a-f]{16}", "key <keyid>", html)
    html = re.sub(r'(<section id="provenance">).*?(</section>)', r"\1<provenance/>\2", html,
                  flags=re.DOTALL)
    html = re.sub(r'<td data-col="size"[^>]*>.*?</td>', '<td data-col="size"><size/></td>', html,
                  flags=re.DOTALL)
    return html


def _golden(name: str, html: str) -> None:
    path = GOLDEN_DIR / name
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
    assert path.is_file(), f"{path} missing: run UPDATE_GOLDEN=1 pytest tests/test_site.py"
    assert html == path.read_text(encoding="utf-8"), (
        f"{name} differs from the rendered page; if the change is intended, regenerate with "
        "UPDATE_GOLDEN=1 pytest tests/test_site.py -k golden")


def test_golden_fixture_demo_run_page(demo_site: tuple[Path, Path]) -> None:
    _, site = demo_site
    page = site / "runs" / "demo--iteration-2.html"
    _golden("fixture-demo-run-page.html", _normalise(page.read_text(encoding="utf-8")))


def test_golden_committed_demo_run_page(committed_site: tuple[Path, Path]) -> None:
    _, site = committed_site
    last = max(p for p in (site / "runs").glob("demo--iteration-*.html"))
    _golden("committed-demo-run-page.html", _normalise(last.read_text(encoding="utf-8")))


# --- offline, portable, deterministic ---------------------------------------------------


def test_every_internal_link_and_asset_resolves(demo_site: tuple[Path, Path]) -> None:
    _, site = demo_site
    checked = 0
    for page in _pages(site):
        found = scan(page)
        for link in found.links:
            assert not re.match(r"^[a-z]+:|^//", link), f"{page.name}: non-relative link {link}"
            target, fragment = internal_target(page, link)
            if target is None:
                assert fragment in found.ids, f"{page.name}: #{fragment} has no target"
                continue
            assert target.is_file(), f"{page.relative_to(site)}: {link} does not resolve"
            assert site.resolve() in target.parents, f"{link} leaves the site"
            if fragment and target.suffix == ".html":
                assert fragment in scan(target).ids, f"{link}: no #{fragment}"
            checked += 1
    assert checked > 50


def test_site_is_offline_and_vendors_plotly_once(demo_site: tuple[Path, Path]) -> None:
    _, site = demo_site
    assert (site / "assets" / "plotly.min.js").stat().st_size > 1_000_000
    assert [p.name for p in site.rglob("plotly*.js")] == ["plotly.min.js"]
    for page in _pages(site):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), page.name
        assert "@import" not in text and "fonts.googleapis" not in text
    css = (site / "assets" / "site.css").read_text(encoding="utf-8")
    assert "url(" not in css and "@font-face" not in css


def test_same_evidence_gives_a_byte_identical_site(demo_site: tuple[Path, Path],
                                                   tmp_path: Path, trusted_pair: KeyPair) -> None:
    evidence, site = demo_site
    keys = trusted_keys_file(tmp_path / "keys", trusted_pair.public_key)
    again = tmp_path / "again"
    build_site(evidence, again, keys)
    first = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_site_never_imports_the_simulation() -> None:
    code = ("import sys, generator.site, generator.site.render; "
            "bad = [m for m in ('mujoco', 'generator.simulate', 'generator.cell', "
            "'generator.pipeline') if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_rebuild_keeps_foreign_files_and_replaces_its_own(demo_site: tuple[Path, Path],
                                                          tmp_path: Path) -> None:
    evidence, _ = demo_site
    out = tmp_path / "site"
    out.mkdir()
    (out / "README.md").write_text("generated\n", encoding="utf-8")
    (out / "runs").mkdir()
    (out / "runs" / "stale.html").write_text("old", encoding="utf-8")
    build_site(evidence, out)
    assert (out / "README.md").read_text(encoding="utf-8") == "generated\n"
    assert not (out / "runs" / "stale.html").exists()


# --- escaping and absent evidence -------------------------------------------------------


def test_hostile_title_and_notes_appear_as_text(tmp_path: Path, trusted_pair: KeyPair) -> None:
    spec = dict(SPEC, title=HOSTILE_TITLE, notes=HOSTILE_NOTES)
    evidence = tmp_path / "evidence"
    mixed_run(evidence / "hostile", trusted_pair.private_key, spec)
    build_site(evidence, tmp_path / "site")
    for page in (tmp_path / "site" / "runs" / "hostile.html", tmp_path / "site" / "index.html"):
        html = page.read_text(encoding="utf-8")
        assert "<script>alert" not in html and "<img src=x" not in html
        assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in html
    run_page = (tmp_path / "site" / "runs" / "hostile.html").read_text(encoding="utf-8")
    assert "&lt;/textarea&gt;&lt;img src=x onerror=alert(1)&gt;" in run_page
    assert "&amp; &#39;quoted&#39;" in run_page


def test_absent_evidence_is_shown_as_not_recorded(tmp_path: Path) -> None:
    evidence = tmp_path / "evidence"
    build_run(evidence / "bare", None)
    (evidence / "bare" / "candidate" / "newton.json").unlink()
    (evidence / "bare" / "physval.json").unlink()
    build_site(evidence, tmp_path / "site")
    html = (tmp_path / "site" / "runs" / "bare.html").read_text(encoding="utf-8")
    assert "Newton cross-check: not recorded in this run." in html
    assert "Physical validation: not recorded in this run." in html
    assert "Tool mass table (no tool mounted, or not recorded): not recorded in this run." in html
    # the reference side still has its newton.json, shown with its numbers
    assert 'data-source="bare/reference/newton.json#/worstPositionErrorMm"' in html


def test_regression_rows_are_marked_for_the_filter(tmp_path: Path) -> None:
    evidence = tmp_path / "evidence"
    mixed_run(evidence / "mixed", None)
    build_site(evidence, tmp_path / "site")
    html = (tmp_path / "site" / "runs" / "mixed.html").read_text(encoding="utf-8")
    pairing = read_json(evidence / "mixed" / "run.json")["pairing"]
    regressions = [p["seed"] for p in pairing if p["change"] == "regression"]
    assert regressions and len(regressions) < len(pairing)
    marked = re.findall(r'<tr id="seed-(\d+)" data-change="regression"', html)
    assert [int(s) for s in marked] == regressions


# --- signature status -------------------------------------------------------------------


def _badge(site: Path, slug: str) -> str:
    html = (site / "runs" / f"{slug}.html").read_text(encoding="utf-8")
    match = re.search(r'Signature: <span class="badge (\w+)"[^>]*>([^<]+)</span>', html)
    assert match
    return match.group(2)


def test_signature_status_verified_unsigned_failed_not_checked(
        tmp_path: Path, trusted_pair: KeyPair, untrusted_pair: KeyPair) -> None:
    evidence = tmp_path / "evidence"
    build_run(evidence / "signed", trusted_pair.private_key)
    build_run(evidence / "foreign", untrusted_pair.private_key)
    build_run(evidence / "unsigned", None)
    build_run(evidence / "tampered", trusted_pair.private_key)
    robot = evidence / "tampered" / "candidate" / "robot.json"
    record = read_json(robot)
    record["trials"][0]["cycleSeconds"] = 1.0
    write_json(robot, record)
    keys = trusted_keys_file(tmp_path / "keys", trusted_pair.public_key)
    site = tmp_path / "site"
    build_site(evidence, site, keys)
    from generator.evidence.sign import key_id, load_public_keys
    keyid = key_id(load_public_keys(trusted_pair.public_key)[0])
    assert _badge(site, "signed") == f"verified, key {keyid[:16]}"
    assert _badge(site, "unsigned") == "unsigned"
    assert _badge(site, "foreign") == "FAILED"
    assert _badge(site, "tampered") == "FAILED"
    tampered = (site / "runs" / "tampered.html").read_text(encoding="utf-8")
    assert "digest-mismatch: candidate/robot.json" in tampered
    unchecked = tmp_path / "unchecked"
    build_site(evidence, unchecked)
    assert _badge(unchecked, "signed") == "signature not checked"


def test_trusted_keys_file_accepts_pem_blocks(tmp_path: Path, trusted_pair: KeyPair) -> None:
    evidence = tmp_path / "evidence"
    build_run(evidence / "signed", trusted_pair.private_key)
    blocks = tmp_path / "keys.pem"
    blocks.write_bytes(trusted_pair.public_key.read_bytes())
    build_site(evidence, tmp_path / "site", blocks)
    assert _badge(tmp_path / "site", "signed").startswith("verified, key ")
    empty = tmp_path / "empty.txt"
    empty.write_text("# no keys\n", encoding="utf-8")
    with pytest.raises(TrustedKeysError):
        build_site(evidence, tmp_path / "other", empty)


# --- command line -----------------------------------------------------------------------


def test_site_command(demo_site: tuple[Path, Path], tmp_path: Path) -> None:
    evidence, _ = demo_site
    result = CliRunner().invoke(main, ["site", str(evidence), "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "2 run(s), 1 demo(s)" in result.output
    assert (tmp_path / "s" / "demos" / "demo.html").is_file()
    assert (tmp_path / "s" / "compare" /
            "demo--iteration-1__vs__demo--iteration-2.html").is_file()
    bad = tmp_path / "bad.txt"
    bad.write_text("missing.pem\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["site", str(evidence), "--out", str(tmp_path / "t"),
                                       "--trusted-keys", str(bad)])
    assert result.exit_code == 2 and "error:" in result.output


# --- project documentation --------------------------------------------------------------


def test_mkdocs_strict_build(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "d")],
        check=False, cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "d" / "index.html").is_file()


def test_cli_reference_documents_every_command() -> None:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [name for name in main.commands if f"evidence {name}" not in text]
    assert missing == [], f"docs/cli.md does not document: {missing}"


def test_spec_reference_lists_every_field_and_range() -> None:
    from generator.spec import CELL_RANGES, REQUIREMENT_RANGES, TOOL_FIELDS, TOP_LEVEL
    from generator.tool import MOTOR_AXIS_RANGE_MM, PAYLOAD_RANGE_KG

    text = (REPO / "docs" / "guide" / "spec.md").read_text(encoding="utf-8")
    for name, (lo, hi, _unit) in {**CELL_RANGES, **REQUIREMENT_RANGES}.items():
        assert f"| `{name}` | {lo}–{hi} |" in text, f"{name} [{lo}, {hi}] not documented"
    for name, (lo, hi) in (("payloadKg", PAYLOAD_RANGE_KG), ("motorAxisMm", MOTOR_AXIS_RANGE_MM)):
        assert f"| `{name}` | {lo}–{hi} |" in text, f"tool {name} [{lo}, {hi}] not documented"
    for name in (*TOP_LEVEL, *TOOL_FIELDS):
        assert f"`{name}`" in text, f"{name} not documented"
