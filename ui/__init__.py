"""Streamlit helpers shared by the pages (``rnnlab`` itself never imports Streamlit).

A page is a short script in ``pages/`` registered in ``ui/nav.py``; it starts with ``ui.nav.routed()`` and uses:

- ``ui.guard(what)``: ``with`` block in which an ``RnnlabError`` becomes ``st.error`` and the page goes on;
- ``ui.records(experiment)``: this machine's records plus bundled ones (and, hosted, this session's uploads);
  ``ui.store()``;
- ``ui.UrlSync``: the page's widgets mirrored in the URL (bad values: a warning, then the default);
- ``ui.runbar.run_bar(plan, missing, ...)``: Run / Measure all again for one plan, started in the background
  (``ui.jobs.start``), its progress, Cancel and estimate at the top of the sidebar (``ui.runbar.progress``, for pages
  with buttons of their own); ``ui.runbar.plan`` / ``ui.runbar.known_env``: what a run here would be;
- ``ui.tabstate.TabState``: tabs whose open one and each one's last settings live in the URL;
- ``ui.table(view)`` / ``ui.frame_table(frame)``: a table whose columns fit the page (``fit_config``), missing
  values as ``ui.MISSING``; ``ui.comparison_tables(view)``; ``ui.findings_md(lines)``; ``ui.panels_to(chart, px)``;
- ``ui.downloads.buttons(report, key=...)``, ``ui.page_link(url_path, label, query=...)``,
  ``ui.how_to_get(cli, page=...)``;
- ``ui.turns.aside()``: ``with`` block around work that takes seconds (a deck, an upload, a conversion): the other
  sessions' scripts render meanwhile (``streamlit_app.py`` renders one at a time, ``ui.turns.render``).
"""

from . import downloads, jobs, nav, runbar, sidebar, tabstate, turns, uploads  # noqa: F401
from . import charts, tables  # noqa: F401
from .charts import chart, panels_to  # noqa: F401
from .common import anchor, findings_md, guard, how_to_get, md_escape, page_link, store  # noqa: F401
from .shared import records, shared  # noqa: F401
from .tables import (MISSING, comparison_frame, comparison_tables, fit_config, frame_table, table,  # noqa: F401
                     view_frame)
from .urlsync import UrlSync  # noqa: F401
