"""Every page at 1400x1000 in a real browser: no main table or chart is wider than its container.

A table wider than the main column hides its last columns behind a horizontal scroll; a chart wider than its column
is cut at the right edge. Both are read off the rendered page (one server, one browser, the bundled results):

- a table (``stDataFrame``): the grid's scroll container (``.dvn-scroller``) must not scroll sideways
  (``scrollWidth <= clientWidth``), and the table must sit inside its parent's box;
- a chart (``stVegaLiteChart``): its canvas or svg must be no wider than the chart element's parent and end inside
  it and inside the main column.

Only what is shown counts (a closed expander or another tab's content has no box). A screenshot of each page goes to
artifacts/screenshots/layout-<page>.png (git-ignored), to look at.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.browser_util import CHART, CHROMIUM, NEEDS_CHROMIUM, TABLE, VIEWS, no_exception, open_page, screenshot

pytestmark = [pytest.mark.slow,  # a Streamlit server and a browser
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NEEDS_CHROMIUM)]

SLACK = 2  # px: sub-pixel rounding and a border


# The boxes of every shown table and chart of the main column, measured in the page.
MEASURE = """([table, chart]) => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]') ||
               document.querySelector('[data-testid="stMain"]');
  const mainRight = main.getBoundingClientRect().right;
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const name = e => {  // the nearest header above the element, to say which one is too wide
    let h = '';
    document.querySelectorAll('h1, h2, h3').forEach(x => {
      if (x.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING) h = x.innerText.trim(); });
    return h.slice(0, 60);
  };
  const out = [];
  main.querySelectorAll(table).forEach((d, i) => {
    if (!shown(d)) return;
    const sc = d.querySelector('.dvn-scroller');
    const r = d.getBoundingClientRect(), p = d.parentElement.getBoundingClientRect();
    out.push({kind: 'table', i, under: name(d), width: r.width, parent: p.width, right: r.right,
              parentRight: p.right, mainRight, scroll: sc ? sc.scrollWidth : 0, client: sc ? sc.clientWidth : 0});
  });
  main.querySelectorAll(chart).forEach((d, i) => {
    if (!shown(d)) return;
    const c = d.querySelector('canvas, svg.marks, svg');
    if (!c) return;
    const r = c.getBoundingClientRect(), p = d.parentElement.getBoundingClientRect();
    out.push({kind: 'chart', i, under: name(d), width: r.width, parent: p.width, right: r.right,
              parentRight: p.right, mainRight});
  });
  return out;
}"""


def too_wide(boxes: list[dict]) -> list[str]:
    """What sticks out: "table 1 (under 'Comparison'): scrolls sideways, 2120 px of content in 938 px"."""
    bad = []
    for b in boxes:
        where = f"{b['kind']} {b['i']} (under {b['under']!r})"
        if b["kind"] == "table" and b["scroll"] > b["client"] + SLACK:
            bad.append(f"{where}: scrolls sideways, {b['scroll']:.0f} px of columns in {b['client']:.0f} px")
        if b["width"] > b["parent"] + SLACK or b["right"] > b["parentRight"] + SLACK:
            bad.append(f"{where}: {b['width']:.0f} px wide in a {b['parent']:.0f} px container")
        elif b["right"] > b["mainRight"] + SLACK:
            bad.append(f"{where}: ends at {b['right']:.0f} px, past the main column ({b['mainRight']:.0f} px)")
    return bad


def test_no_table_or_chart_wider_than_its_container(bundled_site):
    from ui import nav

    url, page = bundled_site  # the bundled results: every page has tables and charts to show
    known = {p.url_path for p in nav.existing()}
    views = [(n, q) for n, q in VIEWS if q.split("?")[0] in known]
    t0 = time.monotonic()
    problems, seen = {}, {}
    # the shared server and page (tests/pages/conftest.py)
    for name, path in views:
        open_page(page, f"{url}/{'' if path == 'overview' else path}")
        no_exception(page)
        page.wait_for_timeout(800)  # the grids and charts size themselves after the script run ends
        boxes = page.evaluate(MEASURE, [TABLE, CHART])
        seen[name] = len(boxes)
        bad = too_wide(boxes)
        if bad:
            problems[name] = bad
        screenshot(page, f"layout-{name}")
    assert not problems, "wider than their container at 1400 px:\n" + "\n".join(
        f"- {page}: {b}" for page, bad in problems.items() for b in bad)
    assert all(seen[n] for n in seen if n != "glossary"), f"a page showed no table or chart: {seen}"
    assert time.monotonic() - t0 < 120
