"""Streamlit helpers shared by the pages (``rnnlab`` itself never imports Streamlit).

A page is a short script in ``pages/`` registered in ``ui/nav.py``; it starts with ``ui.nav.routed()`` and uses:

- ``ui.guard(what)``: ``with`` block in which an ``RnnlabError`` becomes ``st.error`` and the page goes on;
- ``ui.records(experiment)``: this machine's records plus bundled ones (and, hosted, this session's uploads);
  ``ui.store()``;
- ``ui.UrlSync``: the page's widgets mirrored in the URL (bad values: a warning, then the default);
- ``ui.jobs.start(plan, watch=...)`` / ``ui.jobs.panel(watch=..., mine=...)``: background runs, progress, Cancel;
- ``ui.table(view)``, ``ui.downloads.buttons(report, key=...)``, ``ui.page_link(url_path, label, query=...)``,
  ``ui.how_to_get(cli, page=...)``.
"""

from . import downloads, jobs, nav  # noqa: F401
from .common import (comparison_frame, guard, md_escape, how_to_get, page_link, records, session_imports,  # noqa: F401
                     store, table)
from .urlsync import UrlSync  # noqa: F401
