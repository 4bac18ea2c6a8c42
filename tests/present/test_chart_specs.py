"""Every chart a page or an export shows is a valid Vega-Lite spec. ``present.report.chart_view`` builds specs without
validating them (a third of a page's build time); this test validates all of them, on the bundled results: every
page's view (``export --view``, the page itself) and every experiment's full report (``export --experiment``)."""

import altair as alt
import pytest

from rnnlab.core import baseline
from rnnlab.present import claims, deck, migrate, pitfalls, unrolling, varlen

pytestmark = pytest.mark.slow  # every view of the whole bundle

VIEWS = [*deck.PAGES, "varlen?tab=cost", "varlen?tab=seed003", "unrolling?cell=lstm"]
REPORTS = {"unrolling": unrolling.report, "varlen": varlen.report, "pitfalls": pitfalls.report,
           "migrate": migrate.report, "claims": claims.report}


@pytest.fixture(scope="module")
def bundled():
    recs = baseline.load()
    assert recs
    return recs


def _validate(charts) -> int:
    for cv in charts:
        alt.Root.validate(dict(cv.spec))  # raises jsonschema's ValidationError naming the bad path
    return len(charts)


def test_every_chart_of_every_view_and_report_is_valid_vega_lite(bundled):
    n = sum(_validate(deck.page_view(v, bundled).charts) for v in VIEWS)
    n += sum(_validate(build(bundled).charts) for build in REPORTS.values())
    assert n >= 20, n  # the bundle draws charts on every page


def test_a_broken_spec_is_caught():
    spec = alt.Chart(alt.Data(values=[{"a": 1}])).mark_bar().encode(x="a:Q").to_dict(validate=False)
    with pytest.raises(Exception, match="barz|not valid|is not one of"):
        alt.Root.validate({**spec, "mark": {"type": "barz"}})
