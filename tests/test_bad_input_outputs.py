"""The output policy seen from the verbs: a figure lands at exactly the name given, in the
format its extension names, through the same writer as every other output (so a symbolic link
beside it is never written through, a device is written in place and never gains a sibling),
outputs are compared as files, and inputs that are not regular files are refused, never read
forever."""

from __future__ import annotations

import os
import stat

import pytest

from lmforecast.errors import InputError
from lmforecast.ledger import Ledger
from lmforecast.store import safe_write


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.startswith("lmforecast: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.fixture
def led(tmp_path):
    db = tmp_path / "led.db"
    with Ledger(db, create=True) as L:
        rid = L.add(method="supervised", point=2.0, lo=1.9, hi=2.1, level=0.9)
        L.resolve(rid, 2.05)
    return db


def test_plot_without_extension_writes_that_name_not_a_png_beside_it(cli, led, tmp_path,
                                                                     monkeypatch):  # fmt: skip
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    secret = tmp_path / "secret.txt"
    secret.write_text("keep me")
    (work / "s.png").symlink_to(secret)
    code, _, err = cli("ledger", "score", "--ledger", led, "--plot", "s")
    assert code == 0, err
    assert secret.read_text() == "keep me"
    assert (work / "s").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_to_a_device_is_written_in_place_and_creates_nothing(cli, led):
    before = set(os.listdir("/dev"))
    code, _, err = cli("ledger", "score", "--ledger", led, "--plot", "/dev/null")
    assert code == 0, err
    assert set(os.listdir("/dev")) == before


def test_plot_with_an_unknown_format_is_one_line_before_any_work(cli, led, tmp_path):
    code, _, err = cli("ledger", "score", "--ledger", led, "--plot", tmp_path / "s.txt")
    _one_line_error(code, err, "unknown figure format 'txt'")
    assert not (tmp_path / "s.txt").exists()


def test_write_figure_honours_the_policy_for_links(tmp_path):
    from lmforecast.plots.style import new_figure
    from lmforecast.store.figures import write_figure

    fig = new_figure()
    fig = fig[0] if isinstance(fig, tuple) else fig
    target = tmp_path / "t.svg"
    target.write_text("old")
    link = tmp_path / "l.svg"
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        write_figure(fig, link)
    assert target.read_text() == "old"
    write_figure(fig, tmp_path / "f.svg")
    assert (tmp_path / "f.svg").read_text().lstrip().startswith("<?xml")


def test_same_file_compares_files_not_strings(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    assert safe_write.same_file("o.csv", "./o.csv")
    assert safe_write.same_file("o.csv", "sub/../o.csv")
    (tmp_path / "a.csv").write_text("x")
    os.link(tmp_path / "a.csv", tmp_path / "hard.csv")
    (tmp_path / "soft.csv").symlink_to("a.csv")
    assert safe_write.same_file("a.csv", "hard.csv") and safe_write.same_file("soft.csv", "a.csv")
    assert not safe_write.same_file("a.csv", "o.csv")


def test_write_many_leaves_every_output_as_it_was_when_one_fails(tmp_path):
    a = tmp_path / "a.csv"
    a.write_text("old")
    with pytest.raises(InputError, match="--b /dev/full"):
        safe_write.write_many([(a, b"new", "--a"), ("/dev/full", b"x" * 10, "--b")])
    assert a.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["a.csv"]


def test_salience_features_to_a_character_device_keeps_the_device(cli, tmp_path):
    from lmforecast.examples import copy

    copy(tmp_path / "ex")
    dev = tmp_path / "null"
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        dev.unlink(missing_ok=True)
        dev.symlink_to("/dev/null")
        dev = "/dev/null"
    texts = tmp_path / "ex" / "salience" / "texts.jsonl"
    code, _, err = cli("salience", "features", "--texts", texts, "--out", dev)
    assert code == 0, err
    assert stat.S_ISCHR(os.stat(dev).st_mode)


def test_shape_test_refuses_json_into_a_png(cli, tmp_path):
    from lmforecast.examples import copy

    copy(tmp_path / "ex")
    out = tmp_path / "s.png"
    code, _, err = cli("shape", "test", "--runs", tmp_path / "ex" / "shape" / "runs.csv",
                       "--out", out)  # fmt: skip
    _one_line_error(code, err, "writes JSON")
    assert not out.exists()


def test_saved_fit_that_is_a_fifo_is_refused_not_waited_on(cli, tmp_path):
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    code, _, err = cli("flp", "predict", "--fit", fifo, "--flops", "1e21")
    _one_line_error(code, err, "not a regular file")
