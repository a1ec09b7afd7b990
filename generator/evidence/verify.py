"""Verify a run folder, a demo folder or a run archive: signature, digests, summaries.

What is checked, per run folder (and for a demo: the demo folder, then every nested
run folder):

1. the folder is not, and does not lie inside, an unfinished staging folder
   (``.NAME.partial-PID``);
2. ``manifest.json`` exists and parses; every listed file exists with that size and
   SHA-256; no file is missing and none is extra; no links or special files;
3. ``signature.dsse.json`` is a DSSE envelope signed by a trusted key, whose in-toto
   subjects are exactly the manifest's files and digests and whose predicate matches
   the folder (spec digest, verdicts, provenance, manifest digest);
4. every summary agrees with its records, recomputed with the very functions the
   producers used: per trial ``collisionFree``, ``ikErrorMm``, ``reached`` (and each
   reached target within the reach tolerances), ``settled``, ``success`` and
   ``failureReason`` (``generator.checks``, ``generator.rules.failure_reason``);
   ``successRate``, each check's ``passed``/``observed``/``required``, the cell's
   ``passed``, run.json's cell summaries, pairing and verdict, the spec digest; the tool
   mass table (``generator.tool``); newton.json and dynamics.json ``passed``/``reasons``
   (``newton_reasons``, ``dynamics_reasons``) and robot.json's ``crosschecks`` copies;
   robot.json ``exports.usd`` (``usd_reasons``); run.json ``stages`` rebuilt from those
   records and physval.json (``generator.rules.physval_stage``); for a demo, every
   demo.json iteration rebuilt from its run folder (``generator.demo.iteration_record``).

A difference between the recorded provenance and the current environment is a warning.
Exit codes (see :class:`Status`): 0 verified, 1 tampered or inconsistent, 2 unreadable
input, 3 signature missing or not made by a trusted key.
"""

from __future__ import annotations

import enum
import json
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from generator import checks as cell_checks
from generator import rules
from generator.evidence import provenance
from generator.evidence.archive import ArchiveError, UnsafeArchiveError, is_archive, safe_extract
from generator.evidence.atomic import is_partial_name
from generator.evidence.canonical import same_value
from generator.evidence.manifest import (
    MANIFEST_NAME,
    SIGNATURE_NAME,
    FileEntry,
    manifest_entries,
    scan_folder,
    sha256_file,
)
from generator.evidence.sign import (
    PREDICATE_TYPE,
    InvalidEnvelope,
    SignatureMissing,
    SigningError,
    UntrustedSignature,
    VerifiedEnvelope,
    build_predicate,
    key_id,
    open_envelope,
)
from generator.spec import SpecError, parse_spec

# The rules verify re-applies are the producers' own functions (generator.simulate,
# generator.tool, generator.crosscheck, generator.export.usd, generator.pipeline,
# generator.demo). They are imported where a rule needs them, not here: the site imports
# this module and must not import the simulation.
RUN_FILE = "run.json"
DEMO_FILE = "demo.json"
ROBOT_FILE = "robot.json"
NEWTON_FILE = "newton.json"
DYNAMICS_FILE = "dynamics.json"
PHYSVAL_FILE = "physval.json"
# Stage names as generator.pipeline writes them ("SIDE: LABEL", generator.rules) and the
# record each cross-check stage summarises.
USD_STAGE = rules.STAGE_USD
PHYSVAL_STAGE = rules.STAGE_PHYSVAL
CROSSCHECK_STAGES = ((rules.STAGE_NEWTON, NEWTON_FILE), (rules.STAGE_DYNAMICS, DYNAMICS_FILE))


class Status(enum.Enum):
    """Outcome of a verification, with its process exit code."""

    VERIFIED = "verified"
    TAMPERED = "tampered"
    UNREADABLE = "unreadable"
    UNTRUSTED = "untrusted"

    @property
    def exit_code(self) -> int:
        return {"verified": 0, "tampered": 1, "unreadable": 2, "untrusted": 3}[self.value]


class Code(enum.Enum):
    """What a finding is about. ``status`` is the outcome it implies."""

    PARTIAL_RUN = "partial-run"
    MANIFEST_MISSING = "manifest-missing"
    MANIFEST_INVALID = "manifest-invalid"
    FILE_MISSING = "file-missing"
    FILE_EXTRA = "file-extra"
    FILE_NOT_REGULAR = "file-not-regular"
    DIGEST_MISMATCH = "digest-mismatch"
    SIZE_MISMATCH = "size-mismatch"
    SIGNATURE_INVALID = "signature-invalid"
    SIGNATURE_SUBJECTS = "signature-subjects-mismatch"
    SIGNATURE_PREDICATE = "signature-predicate-mismatch"
    SIGNATURE_MISSING = "signature-missing"
    SIGNATURE_UNTRUSTED = "signature-untrusted"
    RECORD_UNREADABLE = "record-unreadable"
    RECORD_MALFORMED = "record-malformed"
    SUMMARY_MISMATCH = "summary-mismatch"
    UNSAFE_ARCHIVE = "unsafe-archive"
    UNREADABLE_INPUT = "unreadable-input"
    PROVENANCE_DIFFERS = "provenance-differs"

    @property
    def status(self) -> Status:
        if self in (Code.SIGNATURE_MISSING, Code.SIGNATURE_UNTRUSTED):
            return Status.UNTRUSTED
        if self is Code.UNREADABLE_INPUT:
            return Status.UNREADABLE
        return Status.TAMPERED


class Severity(enum.Enum):
    FAILURE = "failure"
    WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    """One problem (or warning) found.

    Attributes:
        code: what kind of problem.
        file: path relative to the verified folder (``.`` for the folder itself).
        message: one line saying what disagrees.
        expected: the value the record should have (digest, recomputed summary...);
            for a provenance warning, the recorded value.
        actual: the value found; for a provenance warning, the current value.
        severity: failure or warning.
    """

    code: Code
    file: str
    message: str
    expected: Any = None
    actual: Any = None
    severity: Severity = Severity.FAILURE

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code.value, "severity": self.severity.value, "file": self.file,
                "message": self.message, "expected": self.expected, "actual": self.actual}

    def __str__(self) -> str:
        text = f"{self.code.value}: {self.file}: {self.message}"
        if self.expected is not None or self.actual is not None:
            first, second = ("recorded", "current") if self.severity is Severity.WARNING \
                else ("expected", "actual")
            text += f" ({first} {_short(self.expected)}, {second} {_short(self.actual)})"
        return text


@dataclass(frozen=True)
class Report:
    """The result of :func:`verify`.

    Attributes:
        target: the path given, as given.
        status: overall outcome (the worst finding; see :meth:`Status.exit_code`).
        findings: failures, in the order found.
        warnings: provenance differences and other non-failures.
        signers: ``(folder, keyid)`` for every folder whose signature verified.
        folders: every run/demo folder verified, relative (``.`` is the top).
        files_checked: number of manifest entries whose digest was checked.
    """

    target: str
    status: Status
    findings: tuple[Finding, ...] = ()
    warnings: tuple[Finding, ...] = ()
    signers: tuple[tuple[str, str], ...] = ()
    folders: tuple[str, ...] = ()
    files_checked: int = 0

    @property
    def exit_code(self) -> int:
        return self.status.exit_code

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "status": self.status.value,
            "exitCode": self.exit_code,
            "folders": list(self.folders),
            "filesChecked": self.files_checked,
            "signers": [{"folder": f, "keyid": k} for f, k in self.signers],
            "findings": [f.to_dict() for f in self.findings],
            "warnings": [w.to_dict() for w in self.warnings],
        }

    def format_text(self) -> str:
        """Human-readable report: a status line, then every failure and warning."""
        head = (f"{self.status.value.upper()}: {self.target} "
                f"({len(self.folders)} folder(s), {self.files_checked} file digests checked)")
        lines = [head]
        signed = dict(self.signers)
        for folder in self.folders:
            who = f"signed by trusted key {signed[folder]}" if folder in signed else \
                "NOT signed by a trusted key"
            lines.append(f"  {folder}: {who}")
        lines += [f"  FAIL {f}" for f in self.findings]
        lines += [f"  WARN {w}" for w in self.warnings]
        return "\n".join(lines)


@dataclass
class _Collector:
    """Mutable accumulator used while verifying; frozen into a Report at the end."""

    findings: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    signers: list[tuple[str, str]] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    files_checked: int = 0
    current_provenance: dict[str, Any] | None = None

    def fail(self, code: Code, file: str, message: str, expected: Any = None,
             actual: Any = None) -> None:
        finding = Finding(code, file, message, expected, actual)
        if finding not in self.findings:  # a record read by two rules is reported once
            self.findings.append(finding)

    def warn(self, code: Code, file: str, message: str, expected: Any = None,
             actual: Any = None) -> None:
        self.warnings.append(Finding(code, file, message, expected, actual, Severity.WARNING))

    def report(self, target: str) -> Report:
        statuses = {f.code.status for f in self.findings}
        status = next((s for s in (Status.UNREADABLE, Status.TAMPERED, Status.UNTRUSTED)
                       if s in statuses), Status.VERIFIED)
        return Report(target, status, tuple(self.findings), tuple(self.warnings),
                      tuple(self.signers), tuple(self.folders), self.files_checked)


# --- entry point ------------------------------------------------------------------------


def verify(path: Path, trusted_keys: Iterable[Ed25519PublicKey],
           current_provenance: Mapping[str, Any] | None = None) -> Report:
    """Verify a run folder, a demo folder or a ``.tar.gz`` archive of either.

    Args:
        path: folder or archive.
        trusted_keys: public keys whose signatures are accepted.
        current_provenance: this environment's provenance (defaults to
            :func:`provenance.current_for` the recorded one); differences are warnings.

    Returns:
        The report; ``report.exit_code`` is the process exit code.
    """
    path = Path(path)
    trusted = {key_id(k): k for k in trusted_keys}
    out = _Collector(current_provenance=dict(current_provenance)
                     if current_provenance is not None else None)
    if is_archive(path):
        _verify_archive(path, trusted, out)
    elif path.is_dir():
        _verify_root(path, trusted, out)
    else:
        out.fail(Code.UNREADABLE_INPUT, path.name,
                 "not a folder or a .tar.gz archive (or it does not exist)")
    return out.report(str(path))


def _verify_archive(path: Path, trusted: Mapping[str, Ed25519PublicKey],
                    out: _Collector) -> None:
    with tempfile.TemporaryDirectory(prefix="evidence-verify-") as tmp:
        try:
            root = safe_extract(path, Path(tmp))
        except UnsafeArchiveError as exc:
            out.fail(Code.UNSAFE_ARCHIVE, exc.member, f"archive refused: {exc.reason}")
            return
        except ArchiveError as exc:
            out.fail(Code.UNREADABLE_INPUT, path.name, str(exc))
            return
        _verify_root(root, trusted, out)


def _verify_root(root: Path, trusted: Mapping[str, Ed25519PublicKey], out: _Collector) -> None:
    partial = _partial_ancestor(root)
    if partial is not None:
        out.folders.append(".")
        where = "is" if partial == root.name else f"lies inside {partial}, which is"
        out.fail(Code.PARTIAL_RUN, ".",
                 f"{root.name} {where} an unfinished staging folder (the run was "
                 "interrupted, or its nested folders were signed before the whole was "
                 "complete); re-run it")
        return
    if (root / DEMO_FILE).is_file():
        _verify_folder(root, ".", trusted, out)
        _check_demo(root, out)
        for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
            if (child / RUN_FILE).exists() or (child / MANIFEST_NAME).exists():
                _verify_folder(child, child.name, trusted, out)
                _check_run(child, child.name, out)
    elif (root / RUN_FILE).is_file() or (root / MANIFEST_NAME).is_file():
        _verify_folder(root, ".", trusted, out)
        _check_run(root, ".", out)
    else:
        out.fail(Code.UNREADABLE_INPUT, ".",
                 f"not a run folder: no {RUN_FILE}, {DEMO_FILE} or {MANIFEST_NAME}")


def _partial_ancestor(root: Path) -> str | None:
    """Name of the staging folder (``.NAME.partial-PID``) that ``root`` is or lies in, as
    given or resolved (a demo signs its iterations inside one), else None."""
    for path in (root.absolute(), root.resolve()):
        for folder in (path, *path.parents):
            if is_partial_name(folder.name):
                return folder.name
    return None


# --- files and signature ---------------------------------------------------------------


def _verify_folder(folder: Path, rel: str, trusted: Mapping[str, Ed25519PublicKey],
                   out: _Collector) -> None:
    out.folders.append(rel)
    entries = _check_files(folder, rel, out)
    _check_signature(folder, rel, entries, trusted, out)


def _check_files(folder: Path, rel: str, out: _Collector) -> dict[str, FileEntry] | None:
    scan = scan_folder(folder)
    for path, reason in scan.irregular:
        out.fail(Code.FILE_NOT_REGULAR, _join(rel, path), f"{reason}; evidence is plain files")
    manifest_file = _join(rel, MANIFEST_NAME)
    if not (folder / MANIFEST_NAME).is_file():
        out.fail(Code.MANIFEST_MISSING, manifest_file,
                 "no manifest: the run is incomplete (interrupted?) or was stripped")
        return None
    try:
        entries = manifest_entries(json.loads((folder / MANIFEST_NAME).read_bytes()))
    except (ValueError, UnicodeDecodeError) as exc:
        out.fail(Code.MANIFEST_INVALID, manifest_file, f"unreadable manifest: {exc}")
        return None
    on_disk = set(scan.files)
    for path in sorted(set(entries) - on_disk):
        out.fail(Code.FILE_MISSING, _join(rel, path), "listed in the manifest but missing",
                 expected=entries[path].sha256, actual=None)
    for path in sorted(on_disk - set(entries)):
        out.fail(Code.FILE_EXTRA, _join(rel, path), "present but not in the manifest",
                 expected=None, actual=sha256_file(folder / path))
    for path in sorted(on_disk & set(entries)):
        _check_digest(folder, rel, entries[path], out)
    return entries


def _check_digest(folder: Path, rel: str, entry: FileEntry, out: _Collector) -> None:
    out.files_checked += 1
    actual = sha256_file(folder / entry.path)
    if actual != entry.sha256:
        out.fail(Code.DIGEST_MISMATCH, _join(rel, entry.path), "sha256 differs from the manifest",
                 expected=entry.sha256, actual=actual)
    size = (folder / entry.path).stat().st_size
    if size != entry.size:
        out.fail(Code.SIZE_MISMATCH, _join(rel, entry.path), "size differs from the manifest",
                 expected=entry.size, actual=size)


def _check_signature(folder: Path, rel: str, entries: Mapping[str, FileEntry] | None,
                     trusted: Mapping[str, Ed25519PublicKey], out: _Collector) -> None:
    sig_file = _join(rel, SIGNATURE_NAME)
    if not (folder / SIGNATURE_NAME).is_file():
        out.fail(Code.SIGNATURE_MISSING, sig_file, "unsigned: no signature.dsse.json")
        return
    try:
        envelope = json.loads((folder / SIGNATURE_NAME).read_bytes())
        opened = open_envelope(envelope, trusted)
    except SignatureMissing as exc:
        out.fail(Code.SIGNATURE_MISSING, sig_file, str(exc))
        return
    except UntrustedSignature as exc:
        out.fail(Code.SIGNATURE_UNTRUSTED, sig_file, str(exc))
        return
    except (InvalidEnvelope, ValueError, UnicodeDecodeError) as exc:
        out.fail(Code.SIGNATURE_INVALID, sig_file, f"invalid signature envelope: {exc}")
        return
    out.signers.append((rel, opened.keyid))
    if entries is not None:
        _check_subjects(rel, opened, entries, out)
        _check_predicate(folder, rel, opened, out)


def _check_subjects(rel: str, opened: VerifiedEnvelope, entries: Mapping[str, FileEntry],
                    out: _Collector) -> None:
    sig_file = _join(rel, SIGNATURE_NAME)
    subjects = opened.statement.get("subject")
    signed: dict[str, Any] = {}
    for item in subjects if isinstance(subjects, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("digest"), Mapping):
            signed[str(item.get("name"))] = item["digest"].get("sha256")
    for path in sorted(set(signed) | set(entries)):
        listed = entries[path].sha256 if path in entries else None
        if signed.get(path) != listed:
            out.fail(Code.SIGNATURE_SUBJECTS, _join(rel, path),
                     f"the signed statement ({sig_file}) does not cover this file as listed "
                     "in the manifest (expected = signed digest, actual = manifest digest)",
                     expected=signed.get(path), actual=listed)


def _check_predicate(folder: Path, rel: str, opened: VerifiedEnvelope, out: _Collector) -> None:
    sig_file = _join(rel, SIGNATURE_NAME)
    if opened.statement.get("predicateType") != PREDICATE_TYPE:
        out.fail(Code.SIGNATURE_PREDICATE, sig_file, "unexpected predicateType",
                 expected=PREDICATE_TYPE, actual=opened.statement.get("predicateType"))
        return
    try:
        expected = build_predicate(folder, sha256_file(folder / MANIFEST_NAME))
    except (ValueError, OSError, SigningError) as exc:
        out.fail(Code.RECORD_UNREADABLE, rel, f"cannot rebuild the signed predicate: {exc}")
        return
    signed = opened.statement.get("predicate")
    signed = signed if isinstance(signed, Mapping) else {}
    for key in sorted(set(expected) | set(signed)):
        if not same_value(signed.get(key), expected.get(key)):
            file = _join(rel, MANIFEST_NAME) if key == "manifestSha256" else sig_file
            out.fail(Code.SIGNATURE_PREDICATE, file,
                     f"signed predicate field '{key}' differs from the folder's records "
                     "(expected = signed, actual = recomputed)",
                     expected=signed.get(key), actual=expected.get(key))


# --- summaries against records ---------------------------------------------------------


def _check_run(folder: Path, rel: str, out: _Collector) -> None:
    run = _load(folder / RUN_FILE, _join(rel, RUN_FILE), out)
    if run is None:
        return
    run_file = _join(rel, RUN_FILE)
    try:
        requirements = _check_spec(run, run_file, out)
        robots: dict[str, Mapping[str, Any]] = {}
        passed: dict[str, bool] = {}
        for side in _sides(folder, run):
            result = _check_cell(folder, rel, side, run, requirements, out)
            if result is not None:
                robots[side], passed[side] = result
        _check_pairing(run, run_file,
                       {side: robot["trials"] for side, robot in robots.items()},
                       requirements, out)
        _check_stages(folder, rel, run, robots, out)
        _check_verdict(run, run_file, passed, out)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        out.fail(Code.RECORD_MALFORMED, run_file, f"missing or mistyped field: {exc!r}")
    _check_provenance(run.get("provenance"), run_file, out)


def _sides(folder: Path, run: Mapping[str, Any]) -> list[str]:
    recorded = run.get("cells") if isinstance(run.get("cells"), Mapping) else {}
    on_disk = {p.parent.name for p in folder.glob(f"*/{ROBOT_FILE}")}
    return sorted(set(recorded) | on_disk)


def _check_spec(run: Mapping[str, Any], run_file: str, out: _Collector) -> Mapping[str, Any]:
    try:
        spec = parse_spec(run["spec"])
    except SpecError as exc:
        out.fail(Code.RECORD_MALFORMED, run_file, f"recorded spec does not validate: {exc}")
        return run["spec"]["requirements"]
    _compare(out, run_file, "specDigest", spec.digest(), run.get("specDigest"))
    _compare(out, run_file, "seeds", list(spec.seeds), run.get("seeds"))
    return spec.to_dict()["requirements"]


def _check_cell(folder: Path, rel: str, side: str, run: Mapping[str, Any],
                requirements: Mapping[str, Any],
                out: _Collector) -> tuple[Mapping[str, Any], bool] | None:
    """robot.json of one side: trials, checks, tool table, cross-check summaries, and
    run.json's summary of the cell. Returns ``(robot, recomputed passed)``."""
    robot_file = _join(rel, f"{side}/{ROBOT_FILE}")
    robot = _load(folder / side / ROBOT_FILE, robot_file, out)
    if robot is None:
        return None
    try:
        trials = robot["trials"]
        _compare(out, robot_file, "requirements", requirements, robot.get("requirements"))
        _compare(out, robot_file, "seeds", run.get("seeds"), robot.get("seeds"))
        _compare(out, robot_file, "seeds of trials", robot.get("seeds"),
                 [t["seed"] for t in trials])
        for trial in trials:
            _check_trial(out, robot_file, trial, requirements)
        rate = cell_checks.success_rate(trials, requirements)
        _compare(out, robot_file, "successRate", rate, robot.get("successRate"))
        recomputed = cell_checks.evaluate_checks(trials, requirements)
        _compare_checks(out, robot_file, "checks", recomputed, robot.get("checks"))
        passed = cell_checks.cell_passed(recomputed)
        _compare(out, robot_file, "passed", passed, robot.get("passed"))
        _check_cell_summary(out, _join(rel, RUN_FILE), side, run, rate, recomputed, passed)
        _check_tool_table(out, robot_file, robot.get("tool"))
        _check_crosscheck_summaries(folder / side, _join(rel, side), robot, out)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        out.fail(Code.RECORD_MALFORMED, robot_file, f"missing or mistyped field: {exc!r}")
        return None
    return robot, passed


def _check_cell_summary(out: _Collector, run_file: str, side: str, run: Mapping[str, Any],
                        rate: float, recomputed: Sequence[Mapping[str, Any]],
                        passed: bool) -> None:
    """run.json ``cells.SIDE`` against the values recomputed from robot.json's trials."""
    summary = run.get("cells", {}).get(side)
    if not isinstance(summary, Mapping):
        out.fail(Code.SUMMARY_MISMATCH, run_file,
                 f"cells.{side}: missing summary for a recorded cell")
        return
    _compare(out, run_file, f"cells.{side}.passed", passed, summary.get("passed"))
    _compare(out, run_file, f"cells.{side}.successRate", rate, summary.get("successRate"))
    _compare_checks(out, run_file, f"cells.{side}.checks", recomputed, summary.get("checks"))


# --- trial flags ---


def _check_trial(out: _Collector, file: str, trial: Mapping[str, Any],
                 requirements: Mapping[str, Any]) -> None:
    """Every flag of a trial against the trial's own data (simulate.run_seed's rules)."""
    label = f"trials[seed={trial['seed']}]"
    targets = trial["targets"]
    _compare(out, file, f"{label}.collisionFree (no recorded collision)",
             len(trial["collisions"]) == 0, trial.get("collisionFree"))
    _compare(out, file, f"{label}.ikErrorMm (worst target errorMm)",
             max(t["errorMm"] for t in targets), trial.get("ikErrorMm"))
    _compare(out, file, f"{label}.reached (every target's reason is null)",
             all(t["reason"] is None for t in targets), trial.get("reached"))
    for target in targets:
        _check_target(out, file, label, target)
    _compare(out, file, f"{label}.settled (cycleSeconds is not null)",
             trial["cycleSeconds"] is not None, trial.get("settled"))
    _compare(out, file, f"{label}.success",
             cell_checks.trial_success(trial, requirements), trial.get("success"))
    _compare(out, file, f"{label}.failureReason",
             rules.failure_reason(trial, targets, requirements), trial.get("failureReason"))


def _check_target(out: _Collector, file: str, label: str, target: Mapping[str, Any]) -> None:
    """A target without a failure reason is reached: within the reach tolerances."""
    if target["reason"] is not None:
        return
    name = f"{label}.targets[{target['name']}]"
    if not target["errorMm"] <= cell_checks.REACH_TOLERANCE_MM:
        out.fail(Code.SUMMARY_MISMATCH, file,
                 f"{name}.errorMm exceeds the reach tolerance, yet its reason is null "
                 "(reached)", expected=f"<= {cell_checks.REACH_TOLERANCE_MM}",
                 actual=target["errorMm"])
    if "axisErrorDeg" in target and not target["axisErrorDeg"] <= rules.REACHED_AXIS_DEG:
        out.fail(Code.SUMMARY_MISMATCH, file,
                 f"{name}.axisErrorDeg exceeds the approach-axis tolerance, yet its reason "
                 "is null (reached)", expected=f"<= {rules.REACHED_AXIS_DEG}",
                 actual=target["axisErrorDeg"])


def _compare_checks(out: _Collector, file: str, name: str,
                    recomputed: Sequence[Mapping[str, Any]], recorded: Any) -> None:
    if not isinstance(recorded, list):
        out.fail(Code.SUMMARY_MISMATCH, file, f"{name}: missing or not a list",
                 expected=[c["id"] for c in recomputed], actual=recorded)
        return
    by_id = {c.get("id"): c for c in recorded if isinstance(c, Mapping)}
    _compare(out, file, f"{name} ids", [c["id"] for c in recomputed],
             [c.get("id") if isinstance(c, Mapping) else c for c in recorded])
    for check in recomputed:
        found = by_id.get(check["id"])
        if found is None:
            continue
        for key in ("passed", "observed", "required", "unit"):
            _compare(out, file, f"{name}[{check['id']}].{key}", check[key], found.get(key))


# --- tool mass table ---


def _check_tool_table(out: _Collector, file: str, table: Any) -> None:
    """robot.json ``tool``: the 3 % mass rule and ``relativeToBrep`` re-applied."""
    if table is None:
        return
    masses = table["massesG"]
    brep = masses["brep"]
    _compare(out, file, "tool.massToleranceRel", rules.MASS_TOLERANCE_REL,
             table.get("massToleranceRel"))
    _compare(out, file, "tool.brepMassG (massesG.brep)", brep, table.get("brepMassG"))
    recorded = table["relativeToBrep"]
    _compare(out, file, "tool.relativeToBrep",
             rules.relative_to_brep({k: masses[k] for k in recorded}, brep), recorded)
    _compare(out, file, "tool.passed (massesG.used within massToleranceRel of massesG.brep)",
             rules.mass_within_tolerance(masses["used"], brep), table.get("passed"))


# --- cross-checks and stages ---


def _check_crosscheck_summaries(cell: Path, rel: str, robot: Mapping[str, Any],
                                out: _Collector) -> None:
    """robot.json ``crosschecks.NAME`` repeats its record's fields: each must equal the file."""
    robot_file = _join(rel, ROBOT_FILE)
    for name, summary in sorted((robot.get("crosschecks") or {}).items()):
        file = _join(rel, summary["file"])
        record = _load(cell / summary["file"], file, out)
        if record is None:
            continue
        for key in sorted(set(summary) - {"file"}):
            _compare(out, robot_file, f"crosschecks.{name}.{key} ({file})",
                     record.get(key), summary[key])


def _check_stages(folder: Path, rel: str, run: Mapping[str, Any],
                  robots: Mapping[str, Mapping[str, Any]], out: _Collector) -> None:
    """run.json ``stages`` against the stages recomputed from their records: a recomputed
    stage must be recorded identically; a recorded stage of a known kind must have a record."""
    run_file = _join(rel, RUN_FILE)
    _check_complete(folder, rel, robots, out)
    expected = []
    for side, robot in robots.items():
        expected += _side_stages(folder / side, _join(rel, side), side, robot, out)
    if (folder / PHYSVAL_FILE).exists():
        physval = _load(folder / PHYSVAL_FILE, _join(rel, PHYSVAL_FILE), out)
        if physval is not None:
            expected.append(_physval_stage(physval, _join(rel, PHYSVAL_FILE), out))
    stages = run.get("stages")
    recorded = {s.get("name"): s for s in stages if isinstance(s, Mapping)} \
        if isinstance(stages, list) else {}
    for stage in (s for s in expected if s is not None):
        found = recorded.get(stage["name"])
        if found is None:
            out.fail(Code.SUMMARY_MISMATCH, run_file,
                     f"stages: '{stage['name']}' is missing, but {stage['file']} is recorded",
                     expected=stage, actual=None)
            continue
        for key in ("file", "passed", "reason"):
            _compare(out, run_file, f"stages[{stage['name']}].{key} ({stage['file']})",
                     stage[key], found.get(key))
    _check_unbacked_stages(run_file, recorded, {s["name"] for s in expected if s}, robots, out)


def _check_complete(folder: Path, rel: str, robots: Mapping[str, Mapping[str, Any]],
                    out: _Collector) -> None:
    """Every run the pipeline writes carries every validation record: deleting a failed
    cross-check (with its stage and summary) must not turn a run into a clean one."""
    for side, robot in robots.items():
        if not isinstance((robot.get("exports") or {}).get("usd"), Mapping):
            out.fail(Code.FILE_MISSING, _join(rel, f"{side}/{ROBOT_FILE}"),
                     "exports.usd (the OpenUSD validation record) is missing")
        for _label, file in CROSSCHECK_STAGES:
            if not (folder / side / file).is_file():
                out.fail(Code.FILE_MISSING, _join(rel, f"{side}/{file}"),
                         f"{file} (a cross-check every run records) is missing")
    if not (folder / PHYSVAL_FILE).is_file():
        out.fail(Code.FILE_MISSING, _join(rel, PHYSVAL_FILE),
                 "physval.json (physical validation, recorded by every run) is missing")


def _side_stages(cell: Path, rel: str, side: str, robot: Mapping[str, Any],
                 out: _Collector) -> list[dict[str, Any] | None]:
    """The stages of one cell, each recomputed from its record (None: record unreadable)."""
    stages: list[dict[str, Any] | None] = []
    usd = (robot.get("exports") or {}).get("usd")
    if isinstance(usd, Mapping):
        stages.append(_usd_stage(side, usd, _join(rel, ROBOT_FILE), out))
    for label, file in CROSSCHECK_STAGES:
        listed = file in {c.get("file") for c in (robot.get("crosschecks") or {}).values()}
        if listed or (cell / file).exists():
            stages.append(_crosscheck_stage(f"{side}: {label}", cell / file, _join(rel, file),
                                            out))
    return stages


def _usd_stage(side: str, usd: Mapping[str, Any], robot_file: str,
               out: _Collector) -> dict[str, Any] | None:
    """robot.json ``exports.usd``: counts against findings, the USD rule re-applied."""
    try:
        for key, kind in (("errors", "Error"), ("warnings", "Warn")):
            _compare(out, robot_file, f"exports.usd.{key} (findings of type {kind})",
                     sum(1 for f in usd["findings"] if f.startswith(f"{kind} ")), usd.get(key))
        reasons = rules.usd_reasons(usd)
    except (KeyError, TypeError, AttributeError) as exc:
        out.fail(Code.RECORD_MALFORMED, robot_file, f"exports.usd: missing or mistyped "
                 f"field: {exc!r}")
        return None
    _compare(out, robot_file, "exports.usd.passed (USD rule re-applied)", not reasons,
             usd.get("passed"))
    _compare(out, robot_file, "exports.usd.reasons (USD rule re-applied)", reasons,
             usd.get("reasons"))
    return rules.stage(f"{side}: {USD_STAGE}", usd.get("file", "scene.usda"),
                       {"passed": not reasons, "reasons": reasons})


def _crosscheck_stage(name: str, path: Path, file: str,
                      out: _Collector) -> dict[str, Any] | None:
    """A cross-check record's ``passed``/``reasons`` re-derived with the producer's rule."""
    record = _load(path, file, out)
    if record is None:
        return None
    try:
        reasons = _crosscheck_rule(path.name)(record)
        _compare_limits(out, file, path.name, record)
    except (KeyError, TypeError, AttributeError) as exc:
        out.fail(Code.RECORD_MALFORMED, file, f"missing or mistyped field: {exc!r}")
        return None
    _compare(out, file, "passed (rule re-applied)", not reasons, record.get("passed"))
    _compare(out, file, "reasons (rule re-applied)", reasons, record.get("reasons"))
    return rules.stage(name, path.name, {"passed": not reasons, "reasons": reasons})


def _crosscheck_rule(name: str) -> Callable[[Mapping[str, Any]], list[str]]:
    """The producer's pass/fail rule of a cross-check record."""
    return rules.newton_reasons if name == NEWTON_FILE else rules.dynamics_reasons


def _compare_limits(out: _Collector, file: str, name: str, record: Mapping[str, Any]) -> None:
    """The limits a cross-check record states are the design's, not the file's own."""
    if name == NEWTON_FILE:
        design = {"positionMm": rules.POSITION_TOL_MM, "angleDeg": rules.ANGLE_TOL_DEG,
                  "massMg": rules.MASS_TOL_MG}
        _compare(out, file, "thresholds", design, record.get("thresholds"))
        _compare(out, file, "worstMassDifferenceMg (largest of massDifferencesMg)",
                 max(record["massDifferencesMg"].values(), default=0.0),
                 record.get("worstMassDifferenceMg"))
    elif name == DYNAMICS_FILE:
        _compare(out, file, "tolerances", rules.TOLERANCES, record.get("tolerances"))


def _physval_stage(physval: Mapping[str, Any], file: str,
                   out: _Collector) -> dict[str, Any] | None:
    try:
        return rules.physval_stage(physval)
    except (KeyError, TypeError, AttributeError) as exc:
        out.fail(Code.RECORD_MALFORMED, file, f"missing or mistyped field: {exc!r}")
        return None


def _check_unbacked_stages(run_file: str, recorded: Mapping[Any, Mapping[str, Any]],
                           expected: set[str], robots: Mapping[str, Any],
                           out: _Collector) -> None:
    """A recorded stage of a kind verify knows must be backed by its record."""
    known = {PHYSVAL_STAGE} | {f"{side}: {label}" for side in robots
                               for label in (USD_STAGE, *(s[0] for s in CROSSCHECK_STAGES))}
    for name in sorted(str(n) for n in recorded if n in known and n not in expected):
        out.fail(Code.SUMMARY_MISMATCH, run_file,
                 f"stages: '{name}' is recorded but the record it summarises is absent")


def _check_pairing(run: Mapping[str, Any], run_file: str,
                   cells: Mapping[str, Sequence[Mapping[str, Any]]],
                   requirements: Mapping[str, Any], out: _Collector) -> None:
    if "reference" not in cells or "candidate" not in cells or "pairing" not in run:
        return
    recomputed = cell_checks.pair_trials(cells["reference"], cells["candidate"], requirements)
    recorded = run["pairing"]
    if not isinstance(recorded, list) or len(recorded) != len(recomputed):
        out.fail(Code.SUMMARY_MISMATCH, run_file, "pairing: wrong number of rows",
                 expected=len(recomputed),
                 actual=len(recorded) if isinstance(recorded, list) else recorded)
        return
    for want, got in zip(recomputed, recorded, strict=True):
        got = got if isinstance(got, Mapping) else {}
        for key, value in want.items():
            _compare(out, run_file, f"pairing[seed={want['seed']}].{key}", value, got.get(key))


def _check_verdict(run: Mapping[str, Any], run_file: str, passed: Mapping[str, bool],
                   out: _Collector) -> None:
    failed = [name for name, ok in _stage_results(run.get("stages")) if ok is not True]
    candidate_ok = passed.get("candidate") is True
    expected = "accepted" if candidate_ok and not failed else "rejected"
    _compare(out, run_file, "verdict (candidate cell passed and every stage passed)",
             expected, run.get("verdict"))


def _stage_results(stages: Any) -> list[tuple[str, Any]]:
    """``[(name, passed)]`` from run.json ``stages``: a list of {name, passed} or a mapping."""
    if isinstance(stages, Mapping):
        return [(str(k), v.get("passed") if isinstance(v, Mapping) else v)
                for k, v in stages.items()]
    if isinstance(stages, list):
        return [(str(s.get("name")), s.get("passed")) if isinstance(s, Mapping)
                else (str(s), None) for s in stages]
    return []


# --- demo.json ---


def _check_demo(root: Path, out: _Collector) -> None:
    """demo.json's iterations rebuilt from the iteration run folders (generator.demo)."""
    demo = _load(root / DEMO_FILE, DEMO_FILE, out)
    if not isinstance(demo, Mapping):
        return
    iterations = demo.get("iterations")
    if not isinstance(iterations, list):
        out.fail(Code.RECORD_MALFORMED, DEMO_FILE, "iterations: missing or not a list")
        iterations = []
    previous: Mapping[str, Any] | None = None
    for i, item in enumerate(iterations):
        previous = _check_iteration(root, i, item, previous, out)
    _check_unlisted_iterations(root, iterations, out)
    if "provenance" in demo:
        _check_provenance(demo["provenance"], DEMO_FILE, out)


def _check_iteration(root: Path, i: int, item: Any, previous: Mapping[str, Any] | None,
                     out: _Collector) -> Mapping[str, Any] | None:
    """One demo.json iteration against ``generator.demo.iteration_record`` of its run
    folder. Returns that run.json (the next iteration is compared with it)."""
    from generator import demo as demo_story

    folder = item.get("runFolder") if isinstance(item, Mapping) else None
    if not isinstance(folder, str) or "verdict" not in item:
        out.fail(Code.SUMMARY_MISMATCH, DEMO_FILE,
                 f"iterations[{i}] names no runFolder or no verdict: nothing to check it with")
        return None
    run_path = root / folder / RUN_FILE
    if ".." in Path(folder).parts or Path(folder).is_absolute() or not run_path.is_file():
        out.fail(Code.SUMMARY_MISMATCH, DEMO_FILE,
                 f"iterations[{i}] names run folder {folder!r}, which holds no {RUN_FILE}")
        return None
    run = _load(run_path, f"{folder}/{RUN_FILE}", out)
    trials = {side: _load(root / folder / side / ROBOT_FILE, f"{folder}/{side}/{ROBOT_FILE}",
                          out) for side in ("reference", "candidate")}
    if run is None or any(robot is None for robot in trials.values()):
        return None
    try:
        expected = demo_story.iteration_record(
            i + 1, folder, run, previous, {s: r["trials"] for s, r in trials.items()})
    except (KeyError, TypeError, ValueError, AttributeError, ZeroDivisionError) as exc:
        out.fail(Code.RECORD_MALFORMED, f"{folder}/{RUN_FILE}",
                 f"cannot rebuild demo.json iterations[{i}]: {exc!r}")
        return run
    for key, value in expected.items():
        _compare(out, DEMO_FILE, f"iterations[{i}].{key} ({folder})", value, item.get(key))
    return run


def _check_unlisted_iterations(root: Path, iterations: Sequence[Any], out: _Collector) -> None:
    listed = {item.get("runFolder") for item in iterations if isinstance(item, Mapping)}
    for child in sorted(p.name for p in root.iterdir()
                        if p.is_dir() and (p / RUN_FILE).is_file()):
        if child not in listed:
            out.fail(Code.SUMMARY_MISMATCH, DEMO_FILE,
                     f"run folder {child}/ is not one of demo.json's iterations")


def _check_provenance(recorded: Any, file: str, out: _Collector) -> None:
    current = out.current_provenance if out.current_provenance is not None else \
        provenance.current_for(recorded)
    for diff in provenance.compare(recorded, current):
        out.warn(Code.PROVENANCE_DIFFERS, file,
                 f"provenance.{diff.field} differs from the current environment "
                 "(not a failure: results may still match; see `evidence reproduce`)",
                 expected=diff.recorded, actual=diff.current)


# --- helpers ----------------------------------------------------------------------------


def _compare(out: _Collector, file: str, name: str, expected: Any, actual: Any) -> None:
    if not same_value(expected, actual):
        out.fail(Code.SUMMARY_MISMATCH, file,
                 f"{name} disagrees with the value recomputed from the records",
                 expected=expected, actual=actual)


def _load(path: Path, file: str, out: _Collector) -> Any:
    try:
        return json.loads(path.read_bytes())
    except OSError as exc:
        out.fail(Code.RECORD_UNREADABLE, file, f"cannot read: {exc.strerror}")
    except (ValueError, UnicodeDecodeError) as exc:
        out.fail(Code.RECORD_UNREADABLE, file, f"not valid JSON: {exc}")
    return None


def _join(rel: str, path: str) -> str:
    return path if rel == "." else f"{rel}/{path}"


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 200 else text[:197] + "..."

