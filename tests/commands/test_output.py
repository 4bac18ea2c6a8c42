"""What the command line prints: every line fits 120 columns by default and ``--wide`` keeps every column; stderr
holds no third-party warning and no TensorFlow log unless ``--verbose`` (``rnnlab.commands._output``)."""

import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from rnnlab.cli import build_parser, main
from rnnlab.commands import _output
from rnnlab.core.views import TableView
from rnnlab.present import tables as T

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "data" / "baseline"
W = _output.WIDTH
# what a TensorFlow/absl log line or a Python warning looks like on stderr
NOISE = re.compile(r"Warning|WARNING|^[IWEF]\d{4} |absl|oneDNN|cuda|tensorflow", re.M)


@pytest.fixture
def bundled(monkeypatch):
    """The real bundled results (the conftest points RNNLAB_BASELINE at an empty folder)."""
    assert any(BUNDLED.glob("*.json")), "data/baseline holds the bundled results"
    monkeypatch.setenv("RNNLAB_BASELINE", str(BUNDLED))


def widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def quiet_env(tmp_path, **extra) -> dict:
    """A user's environment: the store in tmp_path, the bundled results, no log level chosen beforehand."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "PYTHONWARNINGS")}
    return env | {"RNNLAB_STORE": str(tmp_path / "s.sqlite"), "RNNLAB_BASELINE": str(BUNDLED)} | extra


def cli(*args, env, timeout=300):
    return subprocess.run([sys.executable, "-m", "rnnlab", *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=str(ROOT))


# -- the flags -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv,wide,verbose", [
    (["results"], False, False),
    (["--wide", "results"], True, False),
    (["results", "--wide"], True, False),
    (["--verbose", "claims"], False, True),
    (["claims", "--verbose", "--wide"], True, True),
    (["--wide", "list", "--verbose"], True, True),
    (["export", "--format", "md", "--out", "x.md", "--verbose"], False, True),
])
def test_wide_and_verbose_are_global_and_per_command(argv, wide, verbose):
    args = build_parser().parse_args(argv)
    assert (args.wide, args.verbose) == (wide, verbose)


def test_width_is_120_when_piped_and_none_when_wide():
    class Pipe:
        def isatty(self):
            return False

    assert _output.width(stream=Pipe()) == 120 and _output.width(True) is None


# -- the table fitter ------------------------------------------------------------------------------------------------
def _view(n_metrics=12, error="", check=""):
    cols = [T.VARIANT, T.WHAT_RUNS] + [f"metric number {i} (ms)" for i in range(n_metrics)] + \
           [T.ratio_column(m, label, "tf1_dynamic") for m, label in T.RATIO_METRICS[:2]] + [T.CHECK_COLUMN, T.ERROR]
    rows = []
    for v in ("tf1_static", "tf2_unrolled+xla", "keras_cell"):
        rows.append([v, "a long description of what runs in this variant, " * 2] + [f"{i}.25" for i in range(n_metrics)]
                    + ["0.63x (0.60–0.66)", "1.06x (0.96–1.17)", check if v == "keras_cell" else "",
                       error if v == "tf1_static" else ""])
    return TableView(title="Static vs dynamic unrolling: " + "a configuration, " * 10, caption="ratios against "
                     "tf1_dynamic; " + "a long caption sentence, " * 12, columns=cols, rows=rows)


def test_a_wide_table_is_fitted_with_the_columns_that_matter_and_says_what_it_left_out():
    sentence = "forward 0.1 ms for 1,000,000 steps cannot be true: faster than the machine's matmul rate " * 2
    view = _view(error="ResourceExhaustedError: out of memory while allocating a tensor of shape " * 3,
                 check=sentence)
    text = _output.table(view, W)
    assert widest(text) <= W, text
    head = text.splitlines()[text.splitlines().index(next(x for x in text.splitlines() if x.startswith("variant")))]
    for col in ("variant", "forward vs ref", "train vs ref", "check", "error"):
        assert col in head, head
    assert "…" in text  # the error was clipped, not dropped
    assert " ".join(sentence.split()) in " ".join(text.split())  # a "check" sentence is never cut: under the table
    left = [x for x in text.splitlines() if _output.WIDE in x]
    assert len(left) == 1 and re.match(r"\d+ more columns \(--wide shows every column\): metric number", left[0]), left
    wide = _output.table(view, None)
    head = wide.splitlines()[1]
    assert all(c in head for c in view.columns) and view.rows[0][-1].strip() in wide and sentence.strip() in wide
    assert _output.WIDE not in wide and widest(wide) > W


def test_a_table_that_fits_is_left_whole():
    view = TableView(title="t", caption="c", columns=["variant", "forward (ms)", "error"],
                     rows=[["keras", "1.00", ""], ["tf1_static", "2.00", ""]])
    text = _output.table(view, W)
    assert "forward (ms)" in text and _output.WIDE not in text and "error" not in text  # empty column: nothing lost


# -- the commands --------------------------------------------------------------------------------------------------
@pytest.mark.slow  # every bundled table, three times over (about 12 s)
def test_results_fits_120_columns_and_wide_keeps_every_column(bundled, capsys):
    from rnnlab.judge import select
    from rnnlab.present import report, tables
    from rnnlab.core.store import Store

    assert main(["results"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") > 100 and widest(out) <= W, max(out.splitlines(), key=len)
    assert _output.WIDE in out and re.search(r"^tf1_static +\S+", out, re.M)
    assert main(["results", "--wide"]) == 0
    wide = capsys.readouterr().out
    assert widest(wide) > W and _output.WIDE not in wide
    recs = select.combined(Store())
    heads = [line for line in wide.splitlines() if line.startswith("variant  ")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        views = [tables.without_bounds(v) for name in dict.fromkeys(r.experiment for r in recs)
                 for v in report.experiment_views([r for r in recs if r.experiment == name])[0]]
    assert len(heads) == len(views)
    for head, view in zip(heads, views):
        assert all(c in head for c in view.columns), (view.title, head)


@pytest.mark.slow  # a command over every bundled result
def test_claims_fit_120_columns(bundled, capsys):
    assert main(["claims"]) == 0
    out = capsys.readouterr().out
    assert "All claims:" in out and widest(out) <= W, max(out.splitlines(), key=len)
    assert main(["claims", "--wide"]) == 0
    wide = capsys.readouterr().out
    assert re.sub(r"\s", "", wide) == re.sub(r"\s", "", out)  # the same text: only the line breaks differ


def test_list_fits_120_columns_and_wide_keeps_each_line_whole(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert widest(out) <= W and "uniform:A-B" in out
    assert main(["list", "--wide"]) == 0
    wide = capsys.readouterr().out
    assert widest(wide) > W and set(wide.split()) == set(out.split())


def test_env_fits_120_columns(monkeypatch, capsys):
    from rnnlab.engine import api

    env = {"tf": "2.21.0", "keras": "3", "tf_keras": "2", "python": "3.11", "rnnlab": "0", "cores": 2,
           "cpu": "Intel(R) Xeon(R) Processor @ 2.20GHz with a very long model name " * 3, "gpu": None, "cuda": None,
           "cudnn": None, "device": "CPU", "device_name": "cpu", "matmul_gflops": 100.0}
    monkeypatch.setattr(api, "environment", lambda *a, **k: dict(env))
    assert main(["env"]) == 0
    out = capsys.readouterr().out
    assert widest(out) <= W and "very long model name" in out
    assert main(["--wide", "env"]) == 0
    assert widest(capsys.readouterr().out) > W


def test_import_fits_120_columns(tmp_path, capsys):
    from rnnlab import experiments
    from tests.factories import ENV, record

    rec = record("unroll", "tf1_static", experiments.get("unroll").params.fill({"seq_len": 5}), env=ENV,
                 key="b" * 64, created_at="2026-01-01T00:00:00Z", fwd_ms=1.0)
    deep = tmp_path / ("a-folder-with-a-long-name-" * 3) / ("another-one-" * 4)
    deep.mkdir(parents=True)
    f = deep / "records-from-the-other-machine.json"
    f.write_text(json.dumps([rec.to_dict(with_transient=False)]))
    assert main(["import", str(f)]) == 0
    out = capsys.readouterr().out
    assert widest(out) <= W and "imported 1 record" in out


@pytest.mark.slow  # every bundled unroll record's tables
def test_run_prints_its_tables_and_progress_within_120_columns(bundled, monkeypatch, capsys):
    import io

    from rnnlab.commands import run as cmd
    from rnnlab.core import baseline
    from rnnlab.engine import api
    from rnnlab.engine.runner import Progress

    recs = [r for r in baseline.load() if r.experiment == "unroll"]
    monkeypatch.setattr(api, "estimate", lambda plan, **k: api.Estimate(3, 90.0, 0, True, True))
    monkeypatch.setattr(api, "run", lambda plan, **kw: recs)
    assert main(["run", "unroll", "--preset", "seed"]) == 0
    out, err = capsys.readouterr()
    assert "variant" in out and widest(out) <= W and widest(err) <= W, max(out.splitlines(), key=len)
    assert main(["run", "unroll", "--preset", "seed", "--wide"]) == 0
    assert widest(capsys.readouterr().out) > W
    stream = io.StringIO()
    bar = cmd.ProgressBar(stream)
    bar(Progress("unroll", "keras_unroll+xla", "importing TensorFlow and building the graph " * 3, 3, 12, 61.0,
                 point=2, n_points=5, round=1, n_rounds=3))
    bar(Progress("unroll", "", "warning: machine busy (load 3.9 on 2 cores): figures measured now may be slow " * 2,
                 0, 12, 1.0))
    lines = stream.getvalue().splitlines()
    assert len(lines) >= 3 and widest(stream.getvalue()) <= W and lines[1].startswith("rnnlab: warning: machine busy")


def test_our_own_warnings_still_show_and_third_party_ones_do_not():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with _output.quiet(verbose=False):
            warnings.warn_explicit("altair says so", UserWarning, "core.py", 1, module="altair.utils.core")
            warnings.warn_explicit("rnnlab says so", UserWarning, "store.py", 1, module="rnnlab.core.store")
            warnings.warn_explicit("a leak", ResourceWarning, "runner.py", 1, module="rnnlab.engine.runner")
        assert [str(w.message) for w in seen] == ["rnnlab says so", "a leak"]  # under "always": rnnlab's all pass
        with _output.quiet(verbose=True):
            warnings.warn_explicit("altair says so", UserWarning, "core.py", 1, module="altair.utils.core")
        assert [str(w.message) for w in seen][-1] == "altair says so"


@pytest.mark.slow  # two fresh interpreters over every bundled record (about 9 s)
def test_results_and_export_keep_stderr_clean(tmp_path):
    """A fresh interpreter, as a user runs it: no Altair UserWarning, nothing but the answer."""
    env = quiet_env(tmp_path)
    r = cli("results", env=env)
    assert r.returncode == 0 and widest(r.stdout) <= W
    assert r.stderr == "", r.stderr[:2000]
    r = cli("export", "--format", "csv", "--out", str(tmp_path / "out") + "/", env=env)
    assert r.returncode == 0, r.stderr
    assert not NOISE.search(r.stderr), r.stderr[:2000]


@pytest.mark.slow  # TensorFlow
def test_convert_keeps_tensorflow_logs_off_stderr_unless_verbose(tmp_path):
    """The convert command imports TensorFlow in its own process: its loading lines and absl/C++ logs, and TF's
    Python deprecation warnings, stay off stderr; ``--verbose`` lets them through."""
    from tests.factories import UNITS, build_tf1, rc

    prefix = tmp_path / "ckpt" / "model.ckpt"
    build_tf1(lambda: rc.BasicLSTMCell(UNITS), 1, save_to=prefix)  # in this process: the two commands are the test
    deep = tmp_path / ("a-folder-with-a-long-name-" * 3) / "converted"
    deep.mkdir(parents=True)  # --out names a file in a folder that exists (core.outpath creates none unasked)
    r = cli("convert", str(prefix), "--out", str(deep / "model.keras"), env=quiet_env(tmp_path))
    assert r.returncode == 0 and "PASS" in r.stdout, r.stderr[-2000:]
    assert r.stderr == "", r.stderr[:2000]
    assert widest(r.stdout) <= W, r.stdout
    r = cli("--verbose", "convert", str(prefix), "--out", str(tmp_path / "again.keras"), env=quiet_env(tmp_path))
    assert r.returncode == 0 and "PASS" in r.stdout
    assert NOISE.search(r.stderr), "--verbose shows what TensorFlow says"


def test_a_heading_breaks_between_phrases_never_inside_one():
    title = "Static vs dynamic unrolling: rnn, 3x128, batch 32, 200 steps, 64 in"
    assert _output.heading(title, 60) == ["Static vs dynamic unrolling: rnn, 3x128, batch 32,", "  200 steps, 64 in"]
    assert _output.heading(title, 30) == ["Static vs dynamic unrolling:", "  rnn, 3x128, batch 32,",
                                          "  200 steps, 64 in"]
    view = TableView(title=title, caption="", columns=("variant", "forward (ms)"), rows=(("tf1_static", "1.00"),))
    fitted, _ = _output.fit(view, 55)
    assert fitted.title.split("\n")[1] == "  200 steps, 64 in"  # a table's title: "batch 32, 200" / "steps" before
    assert _output.heading(title, None) == [title] and _output.heading("x" * 70, 60)[0] == "x" * 60


@pytest.mark.slow  # a command over every bundled result
def test_claims_on_a_narrow_terminal_put_the_claim_under_its_verdict(bundled, capsys):
    from rnnlab.commands import claims

    text = claims.run(width=70)
    assert widest(text) <= 70
    lines = text.splitlines()
    first = next(i for i, x in enumerate(lines) if x.startswith("holds "))
    assert lines[first + 1].startswith("    ") and not lines[first + 1].startswith("     ")  # its text, whole lines
    assert not any(x.strip() in ("cores))", "1 ·") for x in lines)


def _rows(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.startswith("    ") and " default " in x]


@pytest.mark.parametrize("width", [120, 90, None])
def test_list_keeps_its_columns_whatever_a_default_or_the_terminal(width):
    from rnnlab.commands import list_

    data = list_.run()
    data[0]["params"][0] = dict(data[0]["params"][0], default="uniform:1-2000,and-a-very-long-default")
    text = list_.text(data, width)
    rows = _rows(text)
    starts = {x.index(" default ") for x in rows}
    assert len(starts) == 1, starts  # the type and default columns at one place in every experiment
    ok = [x for x in rows if len(x.split(" default ", 1)[1]) > list_.DEFAULT_MAX]  # default and limits on one line
    limits_at = {x.index(x.split(" default ", 1)[1].split("  ")[0]) + list_.DEFAULT_MAX + 2 for x in ok}
    assert len(limits_at) <= 1
    assert "uniform:1-2000,and-a-very-long-default" in text
    if width is not None:
        assert widest(text) <= width
        lines = text.splitlines()
        i = next(i for i, x in enumerate(lines) if "and-a-very-long-default" in x)
        col = len(lines[i + 1]) - len(lines[i + 1].lstrip())  # the long default's limits: under the limits column
        assert lines[i + 1].strip().startswith("one of") and col in limits_at | {4 + max(len(p["name"]) for e in data
                                                                                            for p in e["params"]) + 2}


def test_env_says_what_it_measures_before_the_silent_probe(monkeypatch, capsys):
    from rnnlab.commands import env as env_cmd
    from rnnlab.engine import api

    said = []
    monkeypatch.setattr(api, "needs_probe", lambda store, device: True)
    monkeypatch.setattr(env_cmd, "Store", lambda **k: object())

    def probe(*a, **k):
        said.append("probe")
        return {"tf": "2", "keras": "3", "tf_keras": "2", "python": "3.11", "rnnlab": "0", "cores": 2, "cpu": "x",
                "gpu": None, "cuda": None, "cudnn": None, "device": "CPU", "device_name": "cpu",
                "matmul_gflops": 100.0}

    monkeypatch.setattr(api, "environment", probe)
    env_cmd.run(say=said.append)
    assert said == [env_cmd.PROBING, "probe"]  # said first, then measured
    assert main(["env"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("rnnlab: measuring this machine once") and err.count("\n") <= 2


def test_run_ends_with_what_its_page_says_first_and_json_carries_it(bundled, monkeypatch, capsys):
    """The answer spoken: the findings of the page's "In short" at the end of ``run``'s stdout, and on every record
    of ``--json``."""
    import json

    from rnnlab.commands.run import answer_text
    from rnnlab.core import baseline
    from rnnlab.engine import api
    from rnnlab.judge import findings, select
    from rnnlab.present import unrolling

    groups = select.groups([r for r in baseline.load() if r.experiment == "unroll"])
    group = select.headline(groups, seed=findings.SEED, need=("keras", "keras_unroll"))
    recs = [group.records["keras"], group.records["keras_unroll"]]
    monkeypatch.setattr(api, "estimate", lambda plan, **k: api.Estimate(6, 40.0, 0, True, True))
    monkeypatch.setattr(api, "run", lambda plan, **kw: recs)
    monkeypatch.setattr(api, "reference_records", lambda plan, records, store=None: [])
    argv = ["run", "unroll", "--set", "layers=3", "--variants", "keras,keras_unroll", "--ref", "keras"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    said = unrolling.findings_text(recs)
    assert said and "Keras with unroll=True builds" in said[0].text
    flat = " ".join(out.split())
    assert " ".join(answer_text(said, None).split()) in flat and flat.index("In short") > flat.index("variant")
    assert widest(out) <= W
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["variant"] for r in data] == ["keras", "keras_unroll"]
    assert all([f["text"] for f in r["findings"]] == [s.text for s in said] for r in data)
