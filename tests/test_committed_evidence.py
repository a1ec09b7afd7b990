"""The committed demo evidence verifies against the committed demo key (issue 5 item 8)."""

from __future__ import annotations

from pathlib import Path

from generator.evidence.canonical import read_json
from generator.evidence.sign import load_public_keys
from generator.evidence.verify import verify

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "evidence" / "demo"
DEMO_PUBLIC_KEY = ROOT / "evidence" / "keys" / "demo-signing-key.pub.pem"


def test_committed_demo_verifies_with_the_demo_key():
    report = verify(DEMO, load_public_keys(DEMO_PUBLIC_KEY))
    assert report.exit_code == 0, report.format_text()


def test_committed_demo_is_signed_not_merely_hashed():
    for folder in (DEMO, DEMO / "iteration-1", DEMO / "iteration-2"):
        assert (folder / "signature.dsse.json").is_file()
        assert (folder / "manifest.json").is_file()


def test_committed_demo_tells_the_story():
    record = read_json(DEMO / "demo.json")
    first, second = record["iterations"]
    assert (first["verdict"], second["verdict"]) == ("rejected", "accepted")
    assert first["candidateCollidingSeeds"] == first["seeds"] == 10
    assert second["candidateSuccesses"] == 10 and second["speedUp"] >= 0.15
    assert second["parameterDiff"] == [{"field": "guardClearance", "from": 0.12, "to": 0.30}]
