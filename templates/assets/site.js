/* Workcell evidence site: table sorting and filters, seed selection, plot rendering.
   Plot figures are prepared in Python (see generator/site/plots.py); this only hands
   them to the vendored plotly.js. No network access of any kind. */
"use strict";

function sortValue(cell, kind) {
  const raw = cell.dataset.sortValue !== undefined ? cell.dataset.sortValue : cell.textContent.trim();
  if (kind === "num") {
    const n = parseFloat(raw);
    return Number.isNaN(n) ? Infinity : n;
  }
  return raw.toLowerCase();
}

function makeSortable(table) {
  // Header cells name their column with data-col; body cells carry the same data-col.
  table.querySelectorAll("th[data-sort]").forEach((th) => {
    th.addEventListener("click", () => {
      const kind = th.dataset.sort;
      const col = th.dataset.col;
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      const ascending = th.dataset.direction !== "asc";
      th.dataset.direction = ascending ? "asc" : "desc";
      const key = (row) => {
        const cell = row.querySelector('[data-col="' + col + '"]');
        return cell ? sortValue(cell, kind) : (kind === "num" ? Infinity : "");
      };
      rows.sort((a, b) => {
        const va = key(a);
        const vb = key(b);
        if (va < vb) { return ascending ? -1 : 1; }
        if (va > vb) { return ascending ? 1 : -1; }
        return 0;
      });
      rows.forEach((r) => body.appendChild(r));
    });
  });
}

function setupSeedFilter() {
  const table = document.getElementById("seed-table");
  if (!table) { return; }
  const buttons = document.querySelectorAll("button[data-seed-filter]");
  const counter = document.getElementById("seed-count");
  function apply(mode) {
    let shown = 0;
    for (const row of table.tBodies[0].rows) {
      const visible = mode === "all"
        || (mode === "regression" && row.dataset.change === "regression")
        || (mode === "failed" && row.dataset.failed === "true");
      row.hidden = !visible;
      if (visible) { shown += 1; }
    }
    buttons.forEach((b) => b.classList.toggle("active", b.dataset.seedFilter === mode));
    if (counter) { counter.textContent = shown + " of " + table.tBodies[0].rows.length + " seeds shown"; }
  }
  buttons.forEach((b) => b.addEventListener("click", () => apply(b.dataset.seedFilter)));
  apply("all");
}

function setupVerdictFilter() {
  const select = document.getElementById("verdict-filter");
  if (!select) { return; }
  const table = document.getElementById(select.dataset.filterTable);
  select.addEventListener("change", () => {
    for (const row of table.tBodies[0].rows) {
      row.hidden = select.value !== "" && row.dataset.verdict !== select.value;
    }
  });
}

function setupComparePicker() {
  const go = document.getElementById("compare-go");
  if (!go) { return; }
  const known = new Set(Array.from(document.querySelectorAll("a[data-compare]")).map((a) => a.dataset.compare));
  go.addEventListener("click", () => {
    const a = document.getElementById("compare-a").value;
    const b = document.getElementById("compare-b").value;
    for (const slug of [a + "__vs__" + b, b + "__vs__" + a]) {
      if (known.has(slug)) { window.location.href = "compare/" + slug + ".html"; return; }
    }
  });
}

const PLOT_CONFIG = { displaylogo: false, responsive: true };

function notRecorded(div, what) {
  div.innerHTML = "";
  const p = document.createElement("p");
  p.className = "not-recorded";
  p.textContent = what + ": not recorded in this run.";
  div.appendChild(p);
}

function drawFigure(div, figure) {
  if (!figure || !figure.data || figure.data.length === 0) {
    window.Plotly.purge(div);
    notRecorded(div, div.id.replace("plot-", "plot data for "));
    return;
  }
  div.innerHTML = "";
  window.Plotly.react(div, figure.data, figure.layout, PLOT_CONFIG);
}

function renderPlots() {
  const source = document.getElementById("plot-data");
  if (!source || !window.Plotly) { return; }
  const figures = JSON.parse(source.textContent);
  const select = document.getElementById("seed-select");
  function draw(onlyVariants) {
    for (const [id, figure] of Object.entries(figures)) {
      const div = document.getElementById(id);
      if (!div) { continue; }
      if (figure.variants) {
        drawFigure(div, select ? figure.variants[select.value] : undefined);
      } else if (!onlyVariants) {
        drawFigure(div, figure);
      }
    }
  }
  if (select) { select.addEventListener("change", () => draw(true)); }
  draw(false);
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable").forEach(makeSortable);
  setupSeedFilter();
  setupVerdictFilter();
  setupComparePicker();
});
