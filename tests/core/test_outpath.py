"""Every path a command writes is checked before any work (core/outpath.py): a device, a folder files cannot be
created in, the file system's root, a missing folder; each one line, nothing measured, read or rendered first."""

from pathlib import Path

import pytest

from rnnlab.cli import main
from rnnlab.core import outpath
from rnnlab.core.errors import RnnlabError


def test_a_missing_folder_is_named_and_never_created_unless_asked(tmp_path):
    target = tmp_path / "no" / "such" / "dir" / "x.csv"
    with pytest.raises(RnnlabError, match=r"no such folder .*no/such/dir; create it first or pass --mkdir"):
        outpath.check(target, mkdir=False)
    with pytest.raises(RnnlabError, match=r"no such folder .*no/such/dir; create it first$"):
        outpath.check(target, flag="--keep")
    assert not (tmp_path / "no").exists()
    assert outpath.check(target, mkdir=True) == target and target.parent.is_dir()
    assert list(target.parent.iterdir()) == [], "the probe file is gone"
    assert outpath.check(str(tmp_path / "new") + "/") == tmp_path / "new"  # one folder named by a trailing "/"


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc")
def test_a_folder_no_file_can_be_created_in_is_refused_at_once():
    with pytest.raises(RnnlabError, match=r"^--out /proc/x: cannot create a file in /proc"):
        outpath.check("/proc/x")


def test_the_file_systems_root_is_never_written_into():
    with pytest.raises(RnnlabError, match=r"^--out /: the file system's root"):
        outpath.check("/")


def _never(*a, **k):
    raise AssertionError("work started before the path was checked")


@pytest.mark.parametrize("argv,says", [
    (["calibrate", "--keep", "/dev/full"], "--keep /dev/full is a device or a pipe"),
    (["calibrate", "--keep", "no/such/dir/k.json"], "--keep no/such/dir/k.json: no such folder no/such/dir"),
    (["export", "--format", "csv", "--out", "/"], "--out /: the file system's root"),
    (["export", "--format", "csv", "--out", "no/such/dir/x.csv"], "no such folder no/such/dir; create it first or"
                                                                   " pass --mkdir"),
] + ([(["export", "--format", "md", "--out", "/proc/x"], "--out /proc/x: cannot create a file in /proc")]
     if Path("/proc/self").exists() else []))
def test_commands_refuse_a_bad_path_before_any_work(argv, says, monkeypatch, capsys, tmp_path):
    from rnnlab.commands import calibrate
    from rnnlab.judge import select

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(calibrate, "run", _never)
    monkeypatch.setattr(select, "combined", _never)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0], err
    assert list(tmp_path.iterdir()) == []
