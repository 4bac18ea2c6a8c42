"""Tables that fit the page (``ui.tables.fit_config`` / ``column_groups``): pure width arithmetic, no browser
(tests/pages/test_reading_browser.py checks the rendered page)."""

import pandas as pd

from ui.tables import FULL, column_groups, fit_config, shorten


def _frame(n_cols: int, text: str = "x" * 40) -> pd.DataFrame:
    return pd.DataFrame({"variant": ["tf1_static", "keras_unroll"],
                         **{f"column number {i}": [text, "short"] for i in range(n_cols)}})


def test_a_narrow_table_keeps_its_natural_widths_and_pins_the_first_column():
    cfg, row_height = fit_config(_frame(2, "ab"))
    assert row_height is None  # nothing wraps
    assert cfg["variant"]["pinned"] is True
    assert sum(c["width"] for c in cfg.values()) < FULL


def test_a_wide_table_fits_the_budget_and_wraps_its_longest_cells():
    cfg, row_height = fit_config(_frame(5, "a long sentence in a cell " * 3))
    assert sum(c["width"] for c in cfg.values()) <= FULL + 1
    assert row_height is not None and row_height > 64  # the grid wraps text only in rows taller than 4rem
    assert cfg["variant"]["width"] >= 80  # the row's name is never squeezed


def test_a_callers_width_and_label_are_kept():
    import streamlit as st

    cfg, _ = fit_config(_frame(3), config={"column number 0": st.column_config.TextColumn("first", width=123)})
    assert cfg["column number 0"]["width"] == 123 and cfg["column number 0"]["label"] == "first"


def test_whole_columns_keep_their_longest_cell_and_the_others_wrap_in_what_is_left():
    frame = pd.DataFrame({"experiment": ["pitfalls", "unroll"],
                          "variant": ["check_bidirectional_dynamic_rnn", "keras"],
                          "config": ["lstm, 32 units, batch 4, 50 steps, 16 in, lengths rows:50/35/20/5", "rnn"],
                          "other": ["a sentence of some length that would take room " * 2, "x"]})
    narrowed, _ = fit_config(frame, budget=500)
    assert narrowed["variant"]["width"] < 200  # without it the longest name is narrowed with the others
    cfg, row_height = fit_config(frame, budget=500, whole=("variant",))
    assert cfg["variant"]["width"] >= narrowed["variant"]["width"] + 40
    assert sum(c["width"] for c in cfg.values()) <= 500 + 1 and row_height is not None  # config and other wrap
    assert shorten("check_bidirectional_dynamic_rnn", cfg["variant"]["width"], 1) == "check_bidirectional_dynamic_rnn"


def test_columns_whose_headers_cannot_fit_continue_in_a_second_table_with_the_first_column_again():
    groups = column_groups(_frame(14))
    assert len(groups) >= 2 and all(g[0] == "variant" for g in groups)
    assert [c for g in groups for c in g[1:]] == [f"column number {i}" for i in range(14)]
    assert column_groups(_frame(3)) == [list(_frame(3).columns)]


def test_a_tables_layout_is_made_once_per_content_and_is_the_same_as_made_afresh(monkeypatch):
    from ui import tables

    drawn = []
    monkeypatch.setattr(tables.st, "dataframe", lambda data, **kw: drawn.append((data, kw)))
    monkeypatch.setattr(tables, "_LAYOUTS", tables.Memo(size=8))
    long = "a sentence long enough that a column of the page cannot hold it on three lines " * 4
    frame = _frame(14, long)  # two tables (column groups), cells shortened with an ellipsis
    tables.frame_table(frame, key="t")
    tables.frame_table(frame.copy(), key="t")  # equal content, another object: laid out once
    assert tables._LAYOUTS.misses == 1 and tables._LAYOUTS.hits == 1
    first, again = drawn[:len(drawn) // 2], drawn[len(drawn) // 2:]
    assert len(first) >= 2
    fresh = tables._layout(frame, config=None, budget=FULL, max_lines=3, pinned=True, selectable=False, arrow=True)
    for (data, kw), (a_data, a_kw), (cols, config, height, _, arrow) in zip(first, again, fresh):
        assert data.equals(arrow) and a_data.equals(arrow) and kw["column_config"] == config == a_kw["column_config"]
        assert kw["row_height"] == height and kw["column_order"] == cols
    shown = first[0][0].column("column number 0").to_pylist()
    assert shown[0].endswith(tables.ELLIPSIS) and shown[1] == "short"
    changed = frame.copy()
    changed.loc[1, "column number 0"] = "other"
    tables.frame_table(changed, key="t")  # another content: laid out again
    assert tables._LAYOUTS.misses == 2
    assert drawn[-2][0].column("column number 0").to_pylist()[1] == "other"


def test_a_comparison_puts_each_ratio_beside_its_metric_by_role_whatever_the_labels():
    from rnnlab.core.views import Column, TableView
    from ui.tables import comparison_frame

    speed = Column("speed-up", "ratio", "ratio", key="speed vs ref", of="fwd_ms", against="keras")
    cols = (Column("name", "text", "name"), Column("time", "number", "metric", key="fwd_ms"),
            Column("memory", "number", "metric", key="peak_mem_mb"), speed, Column("why not", "prose", "error"))
    rows = (("a", "1", "2", "0.5x", ""), ("b", "2", "3", "1.00x", ""))
    assert list(comparison_frame(TableView("t", "", cols, rows)).columns) == ["name", "time", "speed-up", "memory"]
    failed = TableView("t", "", cols, rows[:1] + (("b", "–", "–", "–", "OOM"),))
    assert list(comparison_frame(failed).columns) == ["name", "time", "why not", "speed-up", "memory"]


def test_a_view_of_a_view_is_keyed_by_where_its_argument_came_from_not_by_its_repr():
    import importlib

    S = importlib.import_module("ui.shared")  # (``ui.shared`` the name is the function)

    class Costly:
        reprs = 0

        def __repr__(self):
            Costly.reprs += 1
            return "Costly()"

    records = S.Records()
    records.version = ("records", "test", 1, None)  # (its last item: no upload token, the shared memo)
    calls = []
    made = S.shared(records, lambda: [Costly(), Costly()])
    first = S.shared(records, lambda x: calls.append(x) or len(calls), made[0])
    again = S.shared(records, lambda x: calls.append(x) or len(calls), made[0])
    other = S.shared(records, lambda x: calls.append(x) or len(calls), made[1])
    assert first == again == 1 and other == 2 and Costly.reprs == 0  # the item of a shared view: keyed by its origin
    S.shared(records, lambda xs: len(xs), [made[1], made[0]])  # a list of such items (a filtered claim list) too
    assert Costly.reprs == 0
