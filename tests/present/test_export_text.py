"""Text that could be turned against a reader (issue 30): a machine name with a right-to-left override or a zero-width
space is refused at the door (and left out of every output when an older import stored it); one holding HTML or a
spreadsheet formula is imported and then inert in every format: Markdown, TeX, CSV, pptx, JSON and the terminal."""

import json
import re
import zipfile

import pytest

from rnnlab.commands import export, results
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.core.store import Store
from rnnlab.engine import api
from tests import fuzz_records as fz

INVISIBLE = ["abc\u202egpj.exe", "a\u200bb", "x\u2066y", "\ufeffbox", "l\u200em"]
MARKUP = ["<script>alert(1)</script>", '=HYPERLINK("http://evil.example","click")']


def one_unroll(machine: str, i: int = 0) -> dict:
    d = json.loads(json.dumps(next(x for x in fz.bundled() if x["experiment"] == "unroll" and x["rounds"])))
    d["env"].update(machine=machine, cpu=machine)
    return fz._fresh_key(d, 1000 + i, {d["key"]})


@pytest.mark.parametrize("machine", INVISIBLE)
def test_bidi_and_zero_width_text_is_refused_at_the_door(machine):
    with pytest.raises(RnnlabError, match=r"env\.(cpu|machine): holds an invisible format character \(U\+[0-9A-F]{4}"):
        api.read_import(json.dumps([one_unroll(machine)]), name="f.json")


def _outputs(store, tmp_path) -> dict[str, str]:
    """Every format's text for the store's records alone (pptx: its slides' XML)."""
    out = {f"results --format {f}": results.run(fmt=f, store=store, include_baseline=False, width=None)
           for f in ("table", "csv", "md", "json")}
    for fmt in ("md", "tex", "csv", "json", "pptx"):
        paths = export.run(fmt=fmt, out=str(tmp_path / fmt) + ("/" if fmt == "csv" else f".{fmt}"),
                           experiment="unroll", include_baseline=False, store=store)
        for p in paths:
            if fmt == "pptx":
                with zipfile.ZipFile(p) as z:
                    out[f"export {p.name}"] = "".join(z.read(n).decode() for n in z.namelist()
                                                      if n.startswith("ppt/slides/slide"))
            else:
                out[f"export {p.name}"] = p.read_text()
    return out


@pytest.mark.slow  # every reader and export format over the records
def test_invisible_text_an_older_import_stored_shows_nowhere(tmp_path, capsys):
    store = Store(tmp_path / "s.sqlite", warn=lambda m: None)
    store.put_many([Record.from_dict(one_unroll(m, i)).with_(source="imported") for i, m in enumerate(INVISIBLE)])
    store.put_many([Record.from_dict(one_unroll("plain box", 99)).with_(source="imported")])
    got = _outputs(store, tmp_path)
    for name, text in got.items():
        assert not re.search("[\u202a-\u202e\u2066-\u2069\u200b-\u200f\ufeff]", text), name
    assert "plain box" in got["results --format csv"]
    assert "skipped 5 imported records not fitting the experiments (env.cpu)" in capsys.readouterr().err


@pytest.mark.slow  # every export format, PNG and SVG rendered
def test_markup_in_a_machine_name_is_inert_in_every_format(tmp_path):
    store = Store(tmp_path / "s.sqlite", warn=lambda m: None)
    api.import_file(json.dumps([one_unroll(m, i) for i, m in enumerate(MARKUP)]), name="f.json", store=store)
    got = _outputs(store, tmp_path)
    md = [t for n, t in got.items() if n.endswith(".md") or n == "results --format md"]
    assert len(md) == 2 and all("alert(1)" in t for t in md)  # shown, as text
    for text in md:
        assert "<script" not in text and "&lt;script>alert(1)&lt;/script>" in text
        assert not re.search(r"(?<!\\)=HYPERLINK", text) and '\\=HYPERLINK("http' in text
    for name, text in got.items():
        if "csv" in name:  # no cell starts a formula (format.csv_safe)
            assert not re.search(r'(^|,)"?[=+@]', text, re.M), name
        if name.endswith(".pptx"):  # XML text, escaped by the writer
            assert "<script" not in text and "&lt;script&gt;" in text
        if name.endswith(".tex"):
            assert "alert(1)" in text and "\\=" not in text
