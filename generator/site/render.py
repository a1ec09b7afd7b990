"""Build the static site: gather every page from the evidence, then write it.

Layout of the output folder (all links relative, so it works from ``file://``, any
static host, or an extracted archive)::

    index.html                  every run (newest first), demos, compare links
    runs/<slug>.html            one page per run folder
    demos/<slug>.html           one page per demo folder
    compare/<a>__vs__<b>.html   one page per pair of runs
    assets/plotly.min.js        vendored from the installed plotly package
    assets/site.css, site.js    from templates/assets/
    files/<evidence path>       copies of the evidence files (download links)

Deterministic: the same evidence gives byte-identical output (sorted walks, fixed plot
ids, no build time). Entries the site owns are replaced on each build; anything else in
the output folder (such as a README.md) is left alone.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import jinja2
import plotly.offline

from generator.site.compare_page import build_compare_page
from generator.site.demo_page import build_demo_page
from generator.site.discover import MANIFEST_FILE, SIGNATURE_FILE, Evidence, discover, join
from generator.site.index_page import build_index_page, newest_first
from generator.site.run_page import FILES_DIR, build_run_page
from generator.site.signatures import fingerprints, load_trusted_keys_file, signature_status

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
STATIC_ASSETS = ("site.css", "site.js")
OWNED_ENTRIES = ("index.html", "assets", "runs", "demos", "compare", FILES_DIR)


@dataclass(frozen=True)
class SiteReport:
    """What a build wrote."""

    out_dir: Path
    runs: int
    demos: int
    pages: int
    files: int


def environment(templates_dir: Path = TEMPLATES_DIR) -> jinja2.Environment:
    """The jinja2 environment: autoescape on, undefined names are errors."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    env.filters["urlpath"] = quote  # a relative POSIX path made safe for an href
    return env


def build_site(evidence_dir: Path, out_dir: Path, trusted_keys: Path | None = None,
               templates_dir: Path = TEMPLATES_DIR) -> SiteReport:
    """Render the site for every run and demo under ``evidence_dir`` into ``out_dir``.

    Args:
        evidence_dir: folder holding run and demo folders at any depth.
        out_dir: site folder (created; the entries the site owns are replaced).
        trusted_keys: trusted-keys file (see :mod:`generator.site.signatures`); without
            it every run is shown as "signature not checked".
        templates_dir: jinja2 templates and static assets.

    Raises:
        TrustedKeysError: the trusted-keys file is unreadable or holds no key.
        FileNotFoundError: ``evidence_dir`` is not a folder.
    """
    evidence_dir = Path(evidence_dir)
    if not evidence_dir.is_dir():
        raise FileNotFoundError(f"evidence folder not found: {evidence_dir}")
    keys = load_trusted_keys_file(trusted_keys) if trusted_keys is not None else None
    evidence = discover(evidence_dir)
    pages = gather_pages(evidence, keys, environment(templates_dir))
    copies = sorted(_evidence_files(evidence))
    _write(Path(out_dir), pages, copies, evidence_dir, templates_dir)
    return SiteReport(Path(out_dir), len(evidence.runs), len(evidence.demos), len(pages),
                      len(copies))


def gather_pages(evidence: Evidence, keys, env: jinja2.Environment) -> dict[str, str]:
    """Every page's HTML, keyed by its path in the site (nothing is written here)."""
    run_status = {r.rel: signature_status(r.path, keys) for r in evidence.runs}
    demo_status = {d.rel: signature_status(d.path, keys) for d in evidence.demos}
    demo_slugs = {d.rel: d.slug for d in evidence.demos}
    runs = newest_first(evidence.runs)
    pages: dict[str, str] = {}
    index = build_index_page(evidence, runs, run_status, demo_status, demo_slugs,
                             fingerprints(keys) if keys is not None else None)
    pages["index.html"] = env.get_template("index.html").render(page=index, root="")
    for run in runs:
        page = build_run_page(run, run_status[run.rel],
                              demo_slugs.get(run.demo_rel) if run.demo_rel else None)
        pages[f"runs/{run.slug}.html"] = env.get_template("run.html").render(
            page=page, root="../")
    for demo in evidence.demos:
        slugs = {PurePosixPath(r.rel).name: r.slug for r in demo.runs}
        page = build_demo_page(demo, demo_status[demo.rel], slugs)
        pages[f"demos/{demo.slug}.html"] = env.get_template("demo.html").render(
            page=page, root="../")
    older_first = list(reversed(runs))
    for i, a in enumerate(older_first):
        for b in older_first[i + 1:]:
            page = build_compare_page(a, b)
            pages[f"compare/{page.slug}.html"] = env.get_template("compare.html").render(
                page=page, root="../")
    return pages


def _evidence_files(evidence: Evidence) -> set[str]:
    """Evidence paths (relative to the evidence folder) to copy for download links."""
    out: set[str] = set()
    folders = [(r.rel, r.manifest) for r in evidence.runs]
    folders += [(d.rel, d.manifest) for d in evidence.demos]
    for rel, manifest in folders:
        entries = manifest.get("files") if manifest else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and _safe(entry.get("path")):
                out.add(join(rel, entry["path"]))
        out.update(join(rel, name) for name in (MANIFEST_FILE, SIGNATURE_FILE))
    return out


def _safe(path: object) -> bool:
    """A relative POSIX path that stays inside its folder."""
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path:
        return False
    return ".." not in PurePosixPath(path).parts


def _write(out_dir: Path, pages: dict[str, str], copies: Iterable[str], evidence_dir: Path,
           templates_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in OWNED_ENTRIES:
        target = out_dir / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
    assets = out_dir / "assets"
    assets.mkdir()
    (assets / "plotly.min.js").write_text(plotly.offline.get_plotlyjs(), encoding="utf-8")
    for name in STATIC_ASSETS:
        shutil.copyfile(templates_dir / "assets" / name, assets / name)
    for rel, html in sorted(pages.items()):
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    for rel in copies:
        source = evidence_dir / rel
        if source.is_file() and not source.is_symlink():
            target = out_dir / FILES_DIR / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
