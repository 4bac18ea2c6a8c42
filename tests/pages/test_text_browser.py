"""Every page at 1400x1000 in a real browser (one server, one browser, the bundled results): no visible text cut
without an ellipsis, and a run's progress line in view the moment Run is clicked.

- A table's cells and headers are drawn on a canvas (Glide Data Grid): each shown grid's columns, widths, row
  height and cells are read from its React props, each text measured with the grid's own font and wrapped as the
  grid wraps it (at spaces, within the cell's padding). A cell whose text needs more lines than its row has is cut
  unless it ends with "…" (``ui.tables.frame_table`` writes one; its full text opens with a click, and the CSV
  download has it); a header wider than its column is cut.
- Any other text (labels, a select box's value, an input's placeholder, a popover's button, captions) is cut when an ancestor that clips
  (``overflow`` hidden or clip) ends before the text does and the clipping does not draw an ellipsis.
- A popover's text (the "Slides" popover beside the downloads), opened, is checked the same way.
- Run: on the Unrolling page, scrolled just far enough to show its Run button at the bottom of the window, Run is
  clicked; right away the progress bar must be inside the viewport (it lives at the top of the sidebar,
  ``ui.sidebar.run_area``), and the run is cancelled.

Screenshots: artifacts/screenshots/text-<page>.png and text-run.png.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser_util import CHROMIUM, HEIGHT, NEEDS_CHROMIUM, VIEWS, no_exception, open_page, screenshot, wait_idle
from tests.browser_util import SCREENSHOTS, TABLE

pytestmark = [pytest.mark.slow,  # a Streamlit server, a browser and one tiny run
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NEEDS_CHROMIUM)]

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


def test_no_text_cut_and_the_progress_in_view(bundled_site):
    from ui import nav

    url, page = bundled_site  # the bundled results: every page has tables to show
    known = {p.url_path for p in nav.existing()}
    views = [(n, q) for n, q in VIEWS if q.split("?")[0] in known]
    problems = {}
    # the shared server and page (tests/pages/conftest.py); the run comes after the reading
    for name, path in views:
        open_page(page, f"{url}/{'' if path == 'overview' else path}")
        no_exception(page)
        page.wait_for_timeout(800)  # the grids size themselves after the script run ends
        bad = [f"table {c.get('table')} (under {c.get('under')!r}): {c['what']}" for c in page.evaluate(GRID_CUTS)]
        bad += [f"{c['what']} ({c['where']})" for c in page.evaluate(DOM_CUTS)]
        if bad:
            problems[name] = bad
        screenshot(page, f"text-{name}")

    # Run: the progress line in view right after the click, wherever the button was
    # the default page (the bundled records fill it, so the button can be scrolled to the fold); the run is
    # cancelled as soon as its progress shows
    open_page(page, f"{url}/unrolling")
    button = page.get_by_role("button", name=re.compile(r"^Run: measure"))
    button.evaluate("e => e.scrollIntoView({block: 'end'})")  # scrolled just far enough to see it
    page.wait_for_timeout(300)
    button.click()
    bar = page.locator('[data-testid="stProgress"]').first
    bar.wait_for(state="visible", timeout=30_000)
    box = bar.bounding_box()
    assert box and 0 <= box["y"] and box["y"] + box["height"] <= HEIGHT, f"progress at {box}, viewport {HEIGHT}"
    screenshot(page, "text-run")
    cancel = page.get_by_role("button", name="Cancel run")
    if cancel.count():
        cancel.first.click()
    wait_idle(page, timeout=120)
    assert not problems, "text cut without an ellipsis at 1400x1000:\n" + "\n".join(
        f"- {p}: {b}" for p, bad in problems.items() for b in bad)


def test_the_slides_popover_cuts_no_text(bundled_site):
    """The download row's "Slides" popover, opened at 1400x1000: its labels and the column picker's placeholder are
    whole (it read "default: variant, metric, ratio to the refe")."""
    url, page = bundled_site
    open_page(page, f"{url}/unrolling")
    button = page.get_by_role("button", name="Slides").first
    button.scroll_into_view_if_needed()
    button.click()
    body = page.locator('[data-testid="stPopoverBody"]').first
    body.wait_for(state="visible", timeout=30_000)
    page.wait_for_timeout(500)
    assert "table columns" in body.inner_text()
    bad = [f"{c['what']} ({c['where']})" for c in page.evaluate(DOM_CUTS)]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "text-slides-popover.png"))  # the window: the popover is a layer
    page.keyboard.press("Escape")
    assert not bad, "text cut without an ellipsis in the Slides popover:\n" + "\n".join(bad)


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


def test_the_results_grid_shows_every_cell_whole(bundled_site):
    """Results at 1400 px, every bundled record: no grid cell cut, not even with an ellipsis (it read "keras_…",
    "noisy…", "Intel(R)…"): the grid holds short cells, the full checks and machines are written under it."""
    url, page = bundled_site
    open_page(page, f"{url}/results")
    no_exception(page)
    page.wait_for_timeout(800)  # the grids size themselves after the script run ends
    screenshot(page, "text-results-whole")
    shortened = page.evaluate(SHORTENED)
    cut = [c["what"] for c in page.evaluate(GRID_CUTS)]
    assert page.locator(TABLE).count() >= 1, "no grid on the Results page"
    assert not shortened and not cut, "Results grid cells cut at 1400 px:\n" + "\n".join((shortened + cut)[:20])
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "machine: bundled #1 is" in text and "flagged row" in text  # what the grid leaves out, said under it
