"""Helpers for the site tests: evidence folders to render and an HTML walker.

The fixture evidence is written with the shared fixtures of ``conftest.py`` (records
shaped like the simulation's, checks computed by ``generator.checks``, written through
``staged_run``); the committed demo (``evidence/demo``) is used when it exists.
"""

from __future__ import annotations

import copy
import html.parser
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from conftest import SPEC, build_demo, write_run_files

from generator import checks
from generator.evidence.atomic import staged_run
from generator.evidence.canonical import read_json, write_json

REPO = Path(__file__).resolve().parents[1]
COMMITTED_EVIDENCE = REPO / "evidence"
COMMITTED_DEMO = COMMITTED_EVIDENCE / "demo"
COMMITTED_TRUSTED_KEYS = COMMITTED_EVIDENCE / "keys" / "trusted-keys.txt"
HOSTILE_TITLE = "<script>alert(\"pwned\")</script> & 'quoted' \"title\""
HOSTILE_NOTES = "</textarea><img src=x onerror=alert(1)> notes & \"more\""


def trusted_keys_file(folder: Path, *public_keys: Path) -> Path:
    """A trusted-keys file naming PEM files, one path per line (relative to the file)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["# trusted keys for the site tests"]
    for key in public_keys:
        lines.append(str(key))
    path = folder / "trusted-keys.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fixture_demo(evidence: Path, key: Path | None) -> Path:
    """``evidence/demo``: the shared two-iteration fixture demo."""
    return build_demo(evidence / "demo", key)


def mixed_run(out_dir: Path, key: Path | None, spec: dict[str, Any] | None = None) -> Path:
    """A run whose candidate regresses on some seeds only (for filters and pairing).

    The reference meets the cycle on every seed; the candidate collides on the odd
    seeds. Checks, pairing and summaries are recomputed with ``generator.checks``.
    """
    spec = copy.deepcopy(spec or SPEC)
    spec["requirements"]["maxCycleSeconds"] = 6.0
    with staged_run(out_dir, sign_key=key) as tmp:
        write_run_files(tmp, spec, candidate_cycle_s=4.2, candidate_collides=True)
        req = spec["requirements"]
        cand_path = tmp / "candidate" / "robot.json"
        cand = read_json(cand_path)
        for trial in cand["trials"]:
            if trial["seed"] % 2 == 0:
                trial.update(collisionFree=True, collisions=[], failureReason=None,
                             minClearanceMm=abs(trial["minClearanceMm"]) + 10.0)
            trial["success"] = checks.trial_success(trial, req)
        cand["checks"] = checks.evaluate_checks(cand["trials"], req)
        cand["successRate"] = checks.success_rate(cand["trials"], req)
        cand["passed"] = checks.cell_passed(cand["checks"])
        write_json(cand_path, cand)
        ref = read_json(tmp / "reference" / "robot.json")
        run = read_json(tmp / "run.json")
        run["cells"]["candidate"] = {"passed": cand["passed"],
                                     "successRate": cand["successRate"],
                                     "checks": cand["checks"]}
        run["pairing"] = checks.pair_trials(ref["trials"], cand["trials"], req)
        run["verdict"] = "accepted" if cand["passed"] else "rejected"
        run["reasons"] = [] if cand["passed"] else ["candidate cell failed its checks"]
        write_json(tmp / "run.json", run)
    return out_dir


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: str = ""


@dataclass
class PageScan(html.parser.HTMLParser):
    """Collects links, ids, and every element carrying data-source, with its text."""

    links: list[str] = field(default_factory=list)
    ids: set[str] = field(default_factory=set)
    sourced: list[Element] = field(default_factory=list)
    _open: list[Element] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        for name in ("href", "src"):
            if name in values:
                self.links.append(values[name])
        if "id" in values:
            self.ids.add(values["id"])
        if "data-source" in values and tag == "span":
            element = Element(tag, values)
            self.sourced.append(element)
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element.text += data


def scan(path: Path) -> PageScan:
    parser = PageScan()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def resolve_pointer(data: Any, pointer: str) -> Any:
    """RFC 6901, written independently of the site's own resolver."""
    if pointer == "":
        return data
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        data = data[int(token)] if isinstance(data, list) else data[token]
    return data


def source_value(evidence: Path, source: str, cache: dict[str, Any]) -> Any:
    """The evidence value a ``FILE#POINTER`` names."""
    file, _, pointer = source.partition("#")
    if file not in cache:
        cache[file] = read_json(evidence / file)
    return resolve_pointer(cache[file], pointer)


def expected_value(evidence: Path, element: Element, cache: dict[str, Any]) -> Any:
    """What a data-source element must show, applying its data-op."""
    value = source_value(evidence, element.attrs["data-source"], cache)
    op = element.attrs.get("data-op", "")
    if op.startswith("count:"):
        key = op.split(":", 1)[1]
        return sum(1 for item in value if item.get(key) is True)
    if op == "len":
        return len(value)
    if op == "percent":
        return value * 100.0
    if op == "diff":
        return value - source_value(evidence, element.attrs["data-minus"], cache)
    assert op == "", f"unknown data-op {op!r}"
    return value


def shown_matches(text: str, value: float) -> bool:
    """The displayed text is ``value`` rounded to the digits it shows."""
    text = text.strip().lstrip("+")
    shown = float(text)
    mantissa = re.split(r"[eE]", text)[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if "e" in text.lower():
        exponent = int(re.split(r"[eE]", text)[1])
        tolerance = 0.5 * 10.0 ** (exponent - decimals)
    else:
        tolerance = 0.5 * 10.0 ** -decimals
    return math.isclose(shown, value, abs_tol=tolerance * (1 + 1e-9) + 1e-12)


def internal_target(page: Path, link: str) -> tuple[Path | None, str]:
    """The file a relative link points to (None for same-page links) and its fragment."""
    parts = urlsplit(link)
    if not parts.path:
        return None, parts.fragment
    return (page.parent / unquote(parts.path)).resolve(), parts.fragment
