"""Issue 13: no traceback on any input. Huge sweeps refused from the lists' lengths, echoed values cut to 80
characters, a full disk / a closed pipe / a name too long on the command line: one line or a quiet exit."""

import errno
import os
import subprocess
import sys

import pytest

from rnnlab.cli import main
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip
from rnnlab.core.params import MAX_POINTS, ParamSet, check_sweep, sweep_size
from rnnlab.engine import api
from rnnlab import experiments


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "rnnlab", *args], capture_output=True, text=True, timeout=120, **kw)


def test_clip_cuts_with_an_ellipsis():
    assert clip("abc") == "abc"
    assert clip("x" * 80) == "x" * 80
    cut = clip("x" * 100_000)
    assert len(cut) == 80 and cut.endswith("…")
    assert clip("y" * 300, 255) == "y" * 254 + "…"


def test_sweep_size_is_counted_from_the_lengths():
    assert sweep_size({"seq_len": list(range(2000)), "units": list(range(500)), "cell": "lstm"}) == 1_000_000
    check_sweep({"seq_len": list(range(MAX_POINTS))})
    with pytest.raises(RnnlabError, match=r"sweep too large: seq_len 2000 x units 500 = 1,000,000 points"):
        check_sweep({"seq_len": list(range(2000)), "units": list(range(500))})


def test_plan_refuses_a_huge_sweep_before_building_it(monkeypatch):
    built = []

    def fill(self, values):  # every point of the product goes through fill: none may be built
        built.append(values)
        raise AssertionError("the cross product was being built")

    monkeypatch.setattr(ParamSet, "fill", fill)
    with pytest.raises(RnnlabError, match="sweep too large"):
        api.plan("unroll", overrides={"seq_len": list(range(1, 2001)), "units": list(range(1, 501))})
    assert built == []


def test_parse_assignments_refuses_a_long_list_before_parsing_it(monkeypatch):
    params = experiments.get("unroll").params
    parsed = []
    real = type(params["seq_len"]).parse
    monkeypatch.setattr(type(params["seq_len"]), "parse", lambda self, t: parsed.append(t) or real(self, t))
    many = ",".join(str(i) for i in range(1, 2001))
    with pytest.raises(RnnlabError, match="sweep too large: seq_len 2000"):
        params.parse_assignments([f"seq_len={many}"])
    assert parsed == []
    with pytest.raises(RnnlabError, match="sweep too large: seq_len 30 x units 30 = 900 points"):
        params.parse_assignments(["seq_len=" + ",".join(map(str, range(1, 31))),
                                  "units=" + ",".join(map(str, range(1, 31)))])


@pytest.mark.parametrize("assignment", ["seq_len=" + "x" * 100_000, "x" * 100_000 + "=3", "y" * 100_000,
                                        "lengths=" + "z" * 100_000])
def test_values_echoed_in_errors_are_cut_to_80_characters(assignment):
    params = experiments.get("unroll").params
    with pytest.raises(RnnlabError) as e:
        params.parse_assignments([assignment])
    msg = str(e.value)
    assert "…" in msg and len(msg) < 400, msg[:300]


@pytest.mark.slow  # a Python process of its own
def test_cli_huge_sweep_is_one_line(tmp_path):
    many = ",".join(str(i) for i in range(1, 2001))
    units = ",".join(str(i) for i in range(1, 501))
    r = _cli("run", "unroll", "--set", f"seq_len={many}", "--set", f"units={units}")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "rnnlab: error: sweep too large: seq_len 2000 = 2,000 points, at most 500 in one run; sweep fewer values"]


@pytest.mark.slow  # a Python process of its own
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_to_a_full_disk_is_one_line_and_exit_2():
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "rnnlab", "list"], stdout=full, stderr=subprocess.PIPE, text=True,
                           timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        "rnnlab: error: cannot write the output: the disk is full (No space left on device)"]


@pytest.mark.slow  # a Python process of its own
def test_stdout_to_a_closed_pipe_exits_quietly():
    p = subprocess.Popen([sys.executable, "-m", "rnnlab", "list", "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first byte is written (`| head -0`)
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0
    assert err == "", err


def test_an_os_error_in_a_command_is_one_line(monkeypatch, capsys):
    from rnnlab.commands import list_

    name = "/tmp/" + "a" * 300 + ".md"

    def boom(args):
        raise OSError(errno.ENAMETOOLONG, "File name too long", name)

    monkeypatch.setattr(list_, "main", boom)
    assert main(["list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rnnlab: error: /tmp/aaa") and err[0].endswith("…: File name too long")


def test_export_to_a_name_too_long_is_an_rnnlab_error(tmp_path):
    from rnnlab.exporters import export
    from tests.factories import make_report

    with pytest.raises(RnnlabError, match=r"^cannot write .*…: File name too long$"):
        export(make_report(), "md", str(tmp_path / ("a" * 300 + ".md")))


@pytest.mark.parametrize("args,fragment", [
    (["run", "unroll", "--variants", ",,"], "--variants: no variant names given; known: tf1_static"),
    (["run", "unroll", "--variants", ""], "--variants: no variant names given"),
    (["claims", "--status", "s" * 300], "status 'sss"),
    (["claims", "--seed", "s" * 300], "seed 'sss"),
    (["export", "--format", "md", "--experiment", "z" * 5000, "--out", "x/"], "unknown experiment or page 'zzz"),
])
def test_junk_flags_are_one_short_line(args, fragment, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
    assert len(err[0]) < 300, err[0][:300]
