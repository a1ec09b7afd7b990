"""Command-line interface: thin click commands that parse options and call one function."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from generator import __version__

# Exit codes shared by every command.
EXIT_OK = 0
EXIT_FAILED = 1  # the run/verification completed and found a failure
EXIT_USAGE = 2  # bad input: invalid spec, refused tool, unreadable file


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evidence")
def main() -> None:
    """workcell-evidence: simulate a robot work cell and publish signed evidence."""


def fail_usage(message: str) -> None:
    """Print a user error (no traceback) and exit with the usage code."""
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_USAGE)


# --- evidence: keys, signing, verification, archives (generator/evidence) ----------------

EXIT_UNTRUSTED = 3  # verify: signature missing or not made by a trusted key


@main.command()
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for the key pair (created if missing).")
@click.option("--name", default="signing-key", show_default=True,
              help="File name stem: NAME.pem (private, mode 0600) and NAME.pub.pem.")
def keygen(out_dir: str, name: str) -> None:
    """Write a new Ed25519 signing key pair."""
    from pathlib import Path

    from generator.evidence.sign import SigningError
    from generator.evidence.sign import keygen as make_keys

    try:
        pair = make_keys(Path(out_dir), name)
    except SigningError as exc:
        fail_usage(str(exc))
    click.echo(f"private key: {pair.private_key} (mode 0600, keep it secret)")
    click.echo(f"public key:  {pair.public_key}")
    click.echo(f"key id:      {pair.keyid}")


@main.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--key", "key_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="PEM Ed25519 private key.")
def sign(run_dir: str, key_path: str) -> None:
    """Sign a manifested run (or demo) folder: writes signature.dsse.json."""
    from pathlib import Path

    from generator.evidence.manifest import ManifestError
    from generator.evidence.sign import SigningError, sign_run

    try:
        out = sign_run(Path(run_dir), Path(key_path))
    except (SigningError, ManifestError, ValueError, OSError) as exc:
        fail_usage(str(exc))
    click.echo(f"signed: {out}")


@main.command()
@click.argument("target", type=click.Path())
@click.option("--trusted-key", "trusted", multiple=True, type=click.Path(dir_okay=False),
              help="PEM public key (file may hold several); repeat for more keys.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def verify(target: str, trusted: tuple[str, ...], as_json: bool) -> None:
    """Verify a run folder, demo folder or .tar.gz archive.

    Exit codes: 0 verified; 1 tampered or inconsistent; 2 bad usage or unreadable
    input; 3 signature missing or not made by a trusted key.
    """
    import json
    from pathlib import Path

    from generator.evidence.sign import SigningError, load_key_list
    from generator.evidence.verify import verify as verify_target

    try:
        keys = [k for path in trusted for k in load_key_list(Path(path))]
    except SigningError as exc:
        fail_usage(str(exc))
    report = verify_target(Path(target), keys)
    click.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True, default=str)
               if as_json else report.format_text())
    sys.exit(report.exit_code)


@main.command()
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False),
              help="Archive to write (FILE.tar.gz).")
def archive(run_dir: str, out_file: str) -> None:
    """Write a deterministic .tar.gz of a run (or demo) folder."""
    from pathlib import Path

    from generator.evidence.archive import create_archive
    from generator.evidence.manifest import ManifestError

    try:
        out = create_archive(Path(run_dir), Path(out_file))
    except (ManifestError, ValueError, OSError) as exc:
        fail_usage(str(exc))
    click.echo(f"archive: {out}")


@main.command("run")
@click.argument("spec_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Run folder to create (written atomically).")
@click.option("--sign-key", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Ed25519 private key (PEM) to sign the run with.")
@click.option("--reviews", "store_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="CAD review store [default: evidence/reviews].")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Processes for seeds [default: one per core, at most 8].")
@click.option("--overwrite", is_flag=True, help="Replace an existing run folder.")
def run_command(spec_file: Path, out_dir: Path, sign_key, store_dir, workers, overwrite) -> None:
    """Simulate the reference and candidate cells of SPEC_FILE and write evidence."""
    from generator import pipeline, tool
    from generator.evidence.sign import SigningError
    from generator.simulate import CellError
    from generator.spec import SpecError, load_spec

    try:
        spec = load_spec(spec_file)
        result = pipeline.run(spec, out_dir, sign_key=sign_key, overwrite=overwrite,
                              store_dir=store_dir or tool.DEFAULT_REVIEW_STORE,
                              workers=workers, progress=pipeline.print_progress,
                              command=["evidence", "run", spec_file.name, "--out",
                                       out_dir.name])
    except (SpecError, tool.ToolGateError, CellError, SigningError, OSError) as exc:
        fail_usage(str(exc))
    _report(result, out_dir)
    sys.exit(EXIT_OK if result["verdict"] == "accepted" else EXIT_FAILED)


def _report(run: dict, out_dir: Path) -> None:
    click.echo(f"verdict: {run['verdict']}")
    for reason in run["reasons"]:
        click.echo(f"  - {reason}")
    click.echo(f"evidence written to {out_dir}")


@main.command("demo")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--sign-key", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--workers", type=click.IntRange(min=1), default=None)
@click.option("--overwrite/--no-overwrite", default=True,
              help="Replace an existing demo folder [default: replace].")
def demo_command(out_dir: Path, sign_key, workers, overwrite) -> None:
    """Run the bundled design-revision demo (DESIGN.md section 6)."""
    from generator import demo, pipeline
    from generator.evidence.sign import SigningError

    try:
        record = demo.run_demo(out_dir, sign_key=sign_key, overwrite=overwrite,
                               workers=workers, progress=pipeline.print_progress)
    except (SigningError, OSError) as exc:
        fail_usage(str(exc))
    for it in record["iterations"]:
        speed = "n/a" if it["speedUp"] is None else f"{it['speedUp'] * 100:.1f} %"
        click.echo(f"iteration {it['index']}: {it['verdict']:8s} candidate "
                   f"{it['candidateSuccesses']}/{it['seeds']} seeds, slowest "
                   f"{it['candidateSlowestCycleS']} s vs reference "
                   f"{it['referenceSlowestCycleS']} s, speed-up {speed}, "
                   f"requirementsRelaxed={it['requirementsRelaxed']}")
    click.echo(f"demo evidence written to {out_dir}")


@main.command("validate-object")
@click.argument("manifest", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path))
def validate_object_command(manifest: Path, out_dir: Path) -> None:
    """Run the physical-validation object suite on ASSET_MANIFEST; write OUT/physval.json.

    Exit 0 when no check FAILs (UNVERIFIED and NOT_APPLICABLE are reported, not failures),
    1 when a check FAILs, 2 for an invalid manifest.
    """
    from generator.physval.manifest import ManifestError
    from generator.physval.suite import validate_object

    try:
        record = validate_object(manifest, out_dir)
    except (ManifestError, OSError) as exc:
        fail_usage(str(exc))
    asset = record["assets"]["object"]
    for check in asset["checks"]:
        click.echo(f"{check['status']:15s} {check['id']}  {check['reason']}".rstrip())
    for state in asset["states"]:
        click.echo(f"state {state['name']}: {state['status']}")
    click.echo(f"physval written to {out_dir / 'physval.json'}")
    sys.exit(EXIT_FAILED if asset["summary"].get("FAIL") else EXIT_OK)


@main.command("reproduce")
@click.argument("target", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--reviews", "store_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="CAD review store [default: evidence/reviews].")
@click.option("--workers", type=click.IntRange(min=1), default=None)
def reproduce_command(target: Path, store_dir, workers) -> None:
    """Re-run a recorded run (or every demo iteration) and diff per-seed results.

    Exit 0 when every per-seed field is identical, 1 when any differs.
    """
    from generator import pipeline, tool
    from generator.evidence.reproduce import format_diffs
    from generator.simulate import CellError
    from generator.spec import SpecError

    runs = sorted(p.parent for p in target.glob("iteration-*/run.json")) or [target]
    if not (runs[0] / "run.json").is_file():
        fail_usage(f"{target} holds no run.json (nor iteration-*/run.json)")
    identical = True
    for run_dir in runs:
        try:
            result = pipeline.reproduce(run_dir, store_dir or tool.DEFAULT_REVIEW_STORE, workers)
        except (SpecError, tool.ToolGateError, CellError, ValueError, KeyError,
                OSError) as exc:
            fail_usage(f"{run_dir.name}: cannot reproduce: {exc!r}" if isinstance(exc, KeyError)
                       else f"{run_dir.name}: {exc}")
        click.echo(f"== {run_dir.name}")
        for diff in result["provenance"]:
            click.echo(f"  environment differs: {diff}")
        for side, diffs in result["sides"].items():
            click.echo(f"  {side}: " + format_diffs(diffs).replace("\n", "\n    "))
            identical &= not diffs
    click.echo("reproduced: identical" if identical else "reproduced: DIFFERENT")
    sys.exit(EXIT_OK if identical else EXIT_FAILED)


# --- site (generator/site) --------------------------------------------------------------


@main.command("site")
@click.argument("evidence_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Site folder to write (the site's own entries are replaced).")
@click.option("--trusted-keys", "trusted_keys", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="File of PEM public keys (blocks, or one key-file path per line). "
                   "Without it, signatures are shown as 'signature not checked'.")
def site_command(evidence_dir: Path, out_dir: Path, trusted_keys: Path | None) -> None:
    """Render the static evidence site from EVIDENCE_DIR (evidence files only)."""
    from generator.site import build_site
    from generator.site.signatures import TrustedKeysError

    if _overlaps(out_dir, evidence_dir):
        fail_usage(f"--out {out_dir} overlaps the evidence folder {evidence_dir}: the site "
                   "would be written into (or would contain) the evidence it renders")
    try:
        report = build_site(evidence_dir, out_dir, trusted_keys)
    except (TrustedKeysError, OSError) as exc:
        fail_usage(str(exc))
    click.echo(f"site: {report.out_dir}/index.html ({report.runs} run(s), {report.demos} "
               f"demo(s), {report.pages} page(s), {report.files} evidence file(s) copied)")


def _overlaps(a: Path, b: Path) -> bool:
    """True when one folder is the other or lies inside it (after resolving links)."""
    a, b = Path(a).resolve(), Path(b).resolve()
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)
