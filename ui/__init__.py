"""Streamlit helpers shared by the pages (``rnnlab`` itself never imports Streamlit).

A page is a short script in ``pages/`` registered in ``ui/nav.py``; it starts with ``ui.nav.routed()`` and uses:

- ``ui.guard(what)``: ``with`` block in which an ``RnnlabError`` becomes ``st.error`` and the page goes on;
- ``ui.records(experiment)``: this machine's records plus bundled ones (and, hosted, this session's uploads);
  ``ui.store()``;
- ``ui.UrlSync``: the page's widgets mirrored in the URL (bad values: a warning, then the default);
- ``ui.jobs.start(plan, watch=...)`` / ``ui.jobs.panel(watch=..., mine=...)``: background runs, progress, Cancel,
  shown ``with ui.sidebar.run_area():`` (the top of the sidebar, in view however far the page is scrolled) with
  ``ui.sidebar.run_estimate()`` under it;
- ``ui.table(view)`` / ``ui.frame_table(frame)``: a table whose columns fit the page (``fit_config``), missing
  values as ``ui.MISSING``; ``ui.comparison_tables(view)``; ``ui.findings_md(lines)``; ``ui.panels_to(chart, px)``;
- ``ui.downloads.buttons(report, key=...)``, ``ui.page_link(url_path, label, query=...)``,
  ``ui.how_to_get(cli, page=...)``.
"""

from . import downloads, jobs, nav, sidebar, uploads  # noqa: F401
from . import charts, tables  # noqa: F401
from .charts import chart, panels_to  # noqa: F401
from .common import anchor, findings_md, guard, how_to_get, md_escape, page_link, store  # noqa: F401
from .shared import records, shared  # noqa: F401
from .tables import MISSING, comparison_frame, comparison_tables, fit_config, frame_table, table  # noqa: F401
from .urlsync import UrlSync  # noqa: F401
