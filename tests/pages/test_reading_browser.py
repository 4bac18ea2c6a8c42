"""Every page at 1400x1000 in a real browser, read in one walk (one server, one browser, the bundled results: every
page has tables and charts to show). Each view is opened once and checked for all of these:

- **Nothing wider than its container.** A table (``stDataFrame``): the grid's scroll container (``.dvn-scroller``)
  must not scroll sideways (``scrollWidth <= clientWidth``) and the table must sit inside its parent's box; a chart
  (``stVegaLiteChart``): its canvas or svg no wider than the chart element's parent, ending inside it and inside the
  main column. Only what is shown counts (a closed expander or another tab's content has no box).
- **No text cut without an ellipsis.** A table's cells and headers are drawn on a canvas (Glide Data Grid): each
  shown grid's columns, widths, row height and cells are read from its React props, each text measured with the
  grid's own font and wrapped as the grid wraps it (at spaces, within the cell's padding). A cell whose text needs
  more lines than its row has is cut unless it ends with "…" (``ui.tables.frame_table`` writes one; its full text
  opens with a click, and the CSV download has it); a header wider than its column is cut. Any other text (labels,
  a select box's value, an input's placeholder, a popover's button, captions) is cut when an ancestor that clips
  (``overflow`` hidden or clip) ends before the text does and the clipping does not draw an ellipsis.
- **Nothing from a third-party host.** Every request goes to the app's own server on loopback: no font, icon or
  script from elsewhere (a ``:material/...`` page icon once had every visitor's browser fetch it from a font host);
  the hosted pages a visitor uses are checked alike in test_hosted_browser.py.
- **Results shows every cell whole**, not even shortened with an ellipsis (it read "keras_…", "noisy…",
  "Intel(R)…"): the grid holds short cells, the full checks and machines are written under it.

Then, on the Unrolling page: the "Slides" popover beside the downloads, opened, is checked for cut text (it read
"default: variant, metric, ratio to the refe"); and Run, scrolled just far enough to show its button at the bottom
of the window, is clicked: right away the progress bar must be inside the viewport (it lives at the top of the
sidebar, ``ui.sidebar.run_area``), and the run is cancelled.

One test, so the pages are opened and screenshot once: every test process that asks for the site starts a server
and a browser of its own. With ``RNNLAB_SCREENSHOTS=1``: artifacts/screenshots/page-<view>.png,
text-slides-popover.png, text-run.png.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.browser_util import (CHART, CHROMIUM, HEIGHT, NEEDS_CHROMIUM, SCREENSHOTS, TABLE, VIEWS, keep_on_loopback,
                                 go, no_exception, open_page, screenshot, shots_wanted, wait_idle)

pytestmark = [pytest.mark.slow,  # a Streamlit server, a browser and one tiny run
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



# The grids' cut cells and headers, measured in the page.
GRID_CUTS = r"""() => {
  const out = [];
  const ctx = document.createElement('canvas').getContext('2d');
  const wrap = (text, width) => {  // lines the grid draws: words wrapped at spaces, a long word on its own
    let lines = 0;
    for (const para of String(text).split('\n')) {
      let cur = 0; lines += 1;
      for (const w of para.split(' ')) {
        const ww = ctx.measureText(w).width, sp = cur ? ctx.measureText(' ').width : 0;
        if (cur && cur + sp + ww > width) { lines += 1; cur = ww; } else { cur += sp + ww; }
        if (ww > width) lines += Math.ceil(ww / width) - 1;
      }
    }
    return lines;
  };
  document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"]').forEach((df, t) => {
    const r = df.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0)) return;
    const el = df.querySelector('.stDataFrameGlideDataEditor');
    if (!el) return;
    const style = getComputedStyle(el);
    const font = (style.getPropertyValue('--gdg-base-font-style') || '400 14px').trim() + ' ' +
                 (style.getPropertyValue('--gdg-font-family') || 'sans-serif').trim();
    const head = (style.getPropertyValue('--gdg-header-font-style') || '400 14px').trim() + ' ' +
                 (style.getPropertyValue('--gdg-font-family') || 'sans-serif').trim();
    const pad = parseFloat(style.getPropertyValue('--gdg-cell-horizontal-padding')) || 8;
    const key = Object.keys(el).find(k => k.startsWith('__reactFiber'));
    let f = el[key], props = null;
    for (let d = 0; f && d < 40; d++, f = f.return) {
      const p = f.memoizedProps;
      if (p && p.columns && p.getCellContent) { props = p; break; }
    }
    if (!props) { out.push({table: t, what: 'grid props not found'}); return; }
    const rowH = typeof props.rowHeight === 'number' ? props.rowHeight : 35;
    const fit = rowH < 64 ? 1 : Math.max(1, Math.floor((rowH - 6) / 17));  // the grid wraps only above 4rem
    let under = '';
    document.querySelectorAll('h1, h2, h3').forEach(x => {
      if (x.compareDocumentPosition(df) & Node.DOCUMENT_POSITION_FOLLOWING) under = x.innerText.trim().slice(0, 50); });
    props.columns.forEach((c, j) => {
      const room = c.width - 2 * pad;
      ctx.font = head;
      if (ctx.measureText(c.title).width > room + 1)
        out.push({table: t, under, what: `header ${JSON.stringify(c.title)} needs ${Math.ceil(ctx.measureText(c.title).width)} px of ${room}`});
      ctx.font = font;
      for (let i = 0; i < props.rows; i++) {
        const cell = props.getCellContent([j, i]);
        if (!cell || cell.kind !== 'text') continue;
        const text = String(cell.displayData ?? cell.data ?? '');
        if (!text || text.endsWith('…')) continue;
        const n = cell.allowWrapping ? wrap(text, room) : (ctx.measureText(text).width > room + 1 ? 2 : 1);
        if (n > fit) { out.push({table: t, under, what: `${JSON.stringify(c.title)} row ${i + 1}: ${n} lines in ${fit}: ${JSON.stringify(text.slice(0, 60))}`}); break; }
      }
    });
  });
  return out;
}"""

# Other text cut by a clipping ancestor without an ellipsis.
DOM_CUTS = r"""() => {
  const out = [];
  const roots = [document.querySelector('[data-testid="stMain"]'), document.querySelector('[data-testid="stSidebar"]'),
                 ...document.querySelectorAll('[data-testid="stPopoverBody"]')];  // an open popover: a layer of its own
  for (const root of roots) {
    if (!root) continue;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent.trim();
      if (!text || n.parentElement.closest('canvas, svg, [data-testid="stDataFrame"], pre, code, [data-testid="stCode"], [data-testid="stTooltipContent"]')) continue;
      const range = document.createRange(); range.selectNodeContents(n);
      const rects = [...range.getClientRects()].filter(x => x.width > 0 && x.height > 0);
      if (!rects.length) continue;
      const right = Math.max(...rects.map(x => x.right)), bottom = Math.max(...rects.map(x => x.bottom));
      for (let a = n.parentElement, d = 0; a && a !== root && d < 14; a = a.parentElement, d++) {
        const s = getComputedStyle(a);
        const clips = ['hidden', 'clip'].includes(s.overflowX) || ['hidden', 'clip'].includes(s.overflow);
        if (!clips) continue;
        const box = a.getBoundingClientRect();
        if (box.width === 0) break;
        const cutRight = right > box.right + 1.5, cutBottom = ['hidden', 'clip'].includes(s.overflowY) && bottom > box.bottom + 1.5 && s.textOverflow !== 'ellipsis' && s.webkitLineClamp === 'none';
        if (cutRight || cutBottom) {
          let ellipsis = false;  // drawn by the clipping box or any box between it and the text
          for (let e = n.parentElement; e && e !== a.parentElement; e = e.parentElement)
            if (getComputedStyle(e).textOverflow === 'ellipsis') ellipsis = true;
          if (!ellipsis) out.push({what: `${JSON.stringify(text.slice(0, 60))} cut at ${Math.round(box.right)} px (text to ${Math.round(right)})`,
                                   where: (a.getAttribute('data-testid') || a.className || a.tagName).toString().slice(0, 40)});
          break;
        }
      }
    }
  }
  // a select box shows its value in an input: cut when it scrolls, unless it draws an ellipsis
  document.querySelectorAll('[data-testid="stSelectbox"] input').forEach(i => {
    const r = i.getBoundingClientRect();
    if (r.width > 0 && i.value && i.scrollWidth > i.clientWidth + 1 && getComputedStyle(i).textOverflow !== 'ellipsis')
      out.push({what: `select box value ${JSON.stringify(i.value.slice(0, 60))} cut (${i.scrollWidth} px in ${i.clientWidth})`,
                where: 'stSelectbox'});
  });
  // an input's placeholder (a multiselect's "default: ..."): the input clips it and draws no ellipsis
  const ctx = document.createElement('canvas').getContext('2d');
  roots.filter(Boolean).forEach(root => root.querySelectorAll('input[placeholder]').forEach(i => {
    const r = i.getBoundingClientRect(), s = getComputedStyle(i);
    if (!(r.width > 0) || i.value || !i.placeholder.trim()) return;
    ctx.font = s.font || `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
    const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    const need = ctx.measureText(i.placeholder).width;
    if (need > room + 1 && s.textOverflow !== 'ellipsis')
      out.push({what: `placeholder ${JSON.stringify(i.placeholder.slice(0, 60))} cut (${Math.ceil(need)} px in ${Math.floor(room)})`,
                where: 'input'});
  }));
  return out;
}"""


# The grids' cells that end with the ellipsis ``ui.tables.frame_table`` writes for text it shortened.
SHORTENED = r"""() => {
  const out = [];
  document.querySelectorAll('[data-testid="stMain"] [data-testid="stDataFrame"]').forEach((df, t) => {
    const el = df.querySelector('.stDataFrameGlideDataEditor');
    if (!el) return;
    const key = Object.keys(el).find(k => k.startsWith('__reactFiber'));
    let f = el[key], props = null;
    for (let d = 0; f && d < 40; d++, f = f.return) {
      const p = f.memoizedProps;
      if (p && p.columns && p.getCellContent) { props = p; break; }
    }
    if (!props) { out.push(`table ${t}: grid props not found`); return; }
    props.columns.forEach((c, j) => {
      for (let i = 0; i < props.rows; i++) {
        const cell = props.getCellContent([j, i]);
        const text = cell ? String(cell.displayData ?? cell.data ?? '') : '';
        if (text.endsWith('…')) out.push(`table ${t} ${JSON.stringify(c.title)} row ${i + 1}: ${JSON.stringify(text)}`);
      }
    });
  });
  return out;
}"""




def test_every_page_fits_cuts_no_text_and_a_run_shows_its_progress(bundled_site):
    from ui import nav

    url, page = bundled_site
    leaving = keep_on_loopback(page.context)  # no font, icon or script from a third-party host (see the docstring)
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    known = {p.url_path for p in nav.existing()}
    views = [(n, q) for n, q in VIEWS if q.split("?")[0] in known]
    assert "results" in dict(views)
    t0 = time.monotonic()
    wide, cut, seen = {}, {}, {}
    for name, path in views:
        go(page, url, "" if path == "overview" else path)
        no_exception(page)
        page.wait_for_timeout(800)  # the grids and charts size themselves after the script run ends
        boxes = page.evaluate(MEASURE, [TABLE, CHART])
        seen[name] = len(boxes)
        if bad := too_wide(boxes):
            wide[name] = bad
        bad = [f"table {c.get('table')} (under {c.get('under')!r}): {c['what']}" for c in page.evaluate(GRID_CUTS)]
        bad += [f"{c['what']} ({c['where']})" for c in page.evaluate(DOM_CUTS)]
        if name == "results":
            bad += [f"shortened: {s}" for s in page.evaluate(SHORTENED)]
            assert page.locator(TABLE).count() >= 1, "no grid on the Results page"
            text = page.locator('[data-testid="stMain"]').inner_text()
            assert "machine: bundled #1 is" in text and "flagged row" in text  # what the grid leaves out, said under it
        if bad:
            cut[name] = bad
        screenshot(page, f"page-{name}")
    walk_s = time.monotonic() - t0
    assert len(requested) > 20, requested  # the pages were really loaded
    assert not leaving, f"requests to third-party hosts: {leaving}"
    popover = slides_popover_cuts(page, url)
    progress = run_progress_box(page, url)

    assert not wide, "wider than their container at 1400 px:\n" + "\n".join(
        f"- {p}: {b}" for p, bad in wide.items() for b in bad)
    assert all(seen[n] for n in seen if n != "glossary"), f"a page showed no table or chart: {seen}"
    assert not cut, "text cut at 1400x1000:\n" + "\n".join(f"- {p}: {b}" for p, bad in cut.items() for b in bad)
    assert not popover, "text cut without an ellipsis in the Slides popover:\n" + "\n".join(popover)
    box = progress
    assert box and 0 <= box["y"] and box["y"] + box["height"] <= HEIGHT, f"progress at {box}, viewport {HEIGHT}"
    assert walk_s < 150, f"{len(views)} pages took {walk_s:.0f} s"


def slides_popover_cuts(page, url: str) -> list[str]:
    """The download row's "Slides" popover, opened: what of its labels and the column picker's placeholder is cut."""
    open_page(page, f"{url}/unrolling")
    button = page.get_by_role("button", name="Slides").first
    button.scroll_into_view_if_needed()
    button.click()
    body = page.locator('[data-testid="stPopoverBody"]').first
    body.wait_for(state="visible", timeout=30_000)
    page.wait_for_timeout(500)
    assert "table columns" in body.inner_text()
    bad = [f"{c['what']} ({c['where']})" for c in page.evaluate(DOM_CUTS)]
    if shots_wanted():
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "text-slides-popover.png"))  # the window: the popover is a layer
    page.keyboard.press("Escape")
    return bad


def run_progress_box(page, url: str) -> dict | None:
    """Run on the default Unrolling page (the bundled records fill it, so the button can be scrolled to the fold),
    scrolled just far enough to see it: the progress bar's box right after the click; the run is then cancelled."""
    open_page(page, f"{url}/unrolling")
    button = page.get_by_role("button", name=re.compile(r"^Run: measure"))
    button.evaluate("e => e.scrollIntoView({block: 'end'})")
    page.wait_for_timeout(300)
    button.click()
    bar = page.locator('[data-testid="stProgress"]').first
    bar.wait_for(state="visible", timeout=30_000)
    box = bar.bounding_box()
    screenshot(page, "text-run")
    cancel = page.get_by_role("button", name="Cancel run")
    if cancel.count():
        cancel.first.click()
    wait_idle(page, timeout=120)
    return box
