"""Bad-input corpus of the output policy (no output names an input or
replaces a non-file; a report writes only its own files; `examples copy` never writes through a
link or outside its folder; every file follows the umask), bounded work on large inputs and
the remaining accepted/traceback cases. Each case names the behaviour it holds."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from lmforecast.errors import InputError
from lmforecast.store import safe_write


@pytest.fixture
def ex(tmp_path):
    from lmforecast.examples import copy

    copy(tmp_path / "ex")
    return tmp_path / "ex"


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.startswith("lmforecast: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# --- the output policy -------------------------------------------------------------------


def test_plot_naming_the_input_is_refused_and_input_kept(cli, ex):
    runs = ex / "supervised" / "runs.csv"
    before = runs.read_bytes()
    code, _, err = cli("backtest", "--runs", runs, "--plot", runs, "--quiet")
    _one_line_error(code, err, "--plot", "input")
    assert runs.read_bytes() == before


def test_plot_and_out_the_same_file_is_refused(cli, ex, tmp_path):
    runs = ex / "supervised" / "runs.csv"
    o = tmp_path / "same.csv"
    code, _, err = cli("backtest", "--runs", runs, "--out", o, "--plot", o, "--quiet")
    _one_line_error(code, err, "--plot", "--out")
    assert not o.exists()


def test_out_symlink_is_refused_and_kept_a_link(cli, ex, tmp_path):
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    runs = ex / "supervised" / "runs.csv"
    code, _, err = cli("supervised", "fit", "--runs", runs, "--no-intervals", "--out", link)
    _one_line_error(code, err, "symbolic link", "--follow-symlinks")
    assert link.is_symlink() and target.read_text() == "old"


def test_writer_refuses_symlink_unless_followed(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    link = tmp_path / "l.txt"
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        safe_write.write_bytes(link, b"new")
    assert target.read_text() == "old"
    old = safe_write.set_follow_symlinks(True)
    try:
        safe_write.write_bytes(link, b"new")
    finally:
        safe_write.set_follow_symlinks(old)
    assert link.is_symlink() and target.read_text() == "new"


def test_device_is_written_in_place_never_replaced(tmp_path):
    """A private /dev/null-like node (mknod needs root; skipped otherwise). Never the real
    /dev/null: the code before the fix, run as root, would replace it."""
    from lmforecast.cli.common import atomic_write_text, check_writable

    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("cannot create a device node here")
    assert check_writable(dev) == dev
    atomic_write_text(dev, "x" * 100)
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    assert [q.name for q in tmp_path.iterdir()] == ["null"]  # no temporary file left


def test_real_dev_null_passes_the_check_without_a_folder_probe():
    from lmforecast.cli.common import check_writable

    assert check_writable("/dev/null") == Path("/dev/null")  # no write attempted
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


def test_fifo_is_written_in_place_and_one_without_reader_is_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="no reader"):
        safe_write.write_bytes(fifo, b"data")
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    for _ in range(200):  # the reader opens the FIFO
        try:
            safe_write.write_bytes(fifo, b"data")
            break
        except InputError:
            threading.Event().wait(0.01)
    reader.join(10)
    assert got == [b"data"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_dev_stdout_link_is_refused_or_written_through_to_the_pipe(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from lmforecast.store import safe_write\n"
        "from lmforecast.errors import InputError\n"
        "try:\n"
        "    safe_write.write_bytes('/dev/stdout', b'refused?')\n"
        "except InputError:\n"
        "    pass\n"
        "safe_write.set_follow_symlinks(True)\n"
        "safe_write.write_bytes('/dev/stdout', b'through the pipe')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"through the pipe"
    assert os.path.islink("/dev/stdout")


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_new_files_follow_the_umask(tmp_path, mask):
    import pandas as pd

    from lmforecast.cli.common import atomic_write_text
    from lmforecast.data.evals import write_evals_table

    old = os.umask(mask)
    try:
        atomic_write_text(tmp_path / "a.txt", "x")
        write_evals_table(pd.DataFrame({"a": [1.0]}), tmp_path / "t.csv")
        with safe_write.output_file(tmp_path / "p.png") as tmp:
            tmp.write_bytes(b"png")
    finally:
        os.umask(old)
    for name in ("a.txt", "t.csv", "p.png"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o666 & ~mask, name


def test_replaced_file_keeps_its_mode(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("old")
    os.chmod(p, 0o640)
    safe_write.write_bytes(p, b"new")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640 and p.read_text() == "new"


# --- report: only its own two files ------------------------------------------------------


def test_report_never_deletes_other_files_in_its_folder(tmp_path):
    from lmforecast.report.builder import write_report_files

    out = tmp_path / "r"
    out.mkdir()
    (out / "report.json").mkdir()  # "a file inside a folder named r/report.json"
    (out / "report.json" / "keep.txt").write_text("mine")
    (out / "notes.txt").write_text("mine too")
    with pytest.raises((InputError, OSError)):
        write_report_files(out, {"report.json": "{}", "report.html": "<p>"})
    assert (out / "report.json" / "keep.txt").read_text() == "mine"
    assert (out / "notes.txt").read_text() == "mine too"
    assert not (out / "report.html").exists()
    assert sorted(q.name for q in out.iterdir()) == ["notes.txt", "report.json"]
    (out / "report.json" / "keep.txt").unlink()
    (out / "report.json").rmdir()
    write_report_files(out, {"report.json": "{}", "report.html": "<p>"})
    assert sorted(q.name for q in out.iterdir()) == ["notes.txt", "report.html", "report.json"]


def test_report_out_symlink_refused_unless_followed_and_no_debris(tmp_path):
    from lmforecast.report.builder import write_report_files

    old = tmp_path / "old-report"
    old.mkdir()
    (old / "report.json").write_text("old")
    (old / "report.html").write_text("old")
    lnk = tmp_path / "lnk"
    lnk.symlink_to(old)
    with pytest.raises(InputError, match="symbolic link"):
        write_report_files(lnk, {"report.json": "{}", "report.html": "<p>"})
    assert lnk.is_symlink() and (old / "report.json").read_text() == "old"
    prev = safe_write.set_follow_symlinks(True)
    try:
        write_report_files(lnk, {"report.json": "{}", "report.html": "<p>"})
    finally:
        safe_write.set_follow_symlinks(prev)
    assert lnk.is_symlink() and (old / "report.json").read_text() == "{}"
    names = sorted(q.name for q in tmp_path.iterdir()) + sorted(q.name for q in old.iterdir())
    assert names == ["lnk", "old-report", "report.html", "report.json"]


# --- examples copy -----------------------------------------------------------------------


def _tree(root: Path) -> dict[str, bytes | str]:
    out = {}
    for q in sorted(root.rglob("*")):
        if q.is_symlink():
            out[str(q.relative_to(root))] = "link->" + os.readlink(q)
        elif q.is_file():
            out[str(q.relative_to(root))] = q.read_bytes()
    return out


@pytest.mark.parametrize("hostile", ["linked-folder", "dangling-file", "dir-link"])
def test_examples_copy_never_writes_through_links(cli, tmp_path, hostile):
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    if hostile == "linked-folder":
        (dest / "supervised").symlink_to(outside)
    elif hostile == "dangling-file":
        (dest / "flp").mkdir()
        (dest / "flp" / "runs.csv").symlink_to(outside / "runs.csv")
    else:
        dest.rmdir()
        dest.symlink_to(outside)
    before = _tree(tmp_path)
    code, _, err = cli("examples", "copy", dest)
    _one_line_error(code, err, "symbolic link")
    assert _tree(tmp_path) == before  # nothing written anywhere, DIR as it was
    assert list(outside.iterdir()) == []


def test_examples_copy_failure_leaves_dir_as_it_was(cli, tmp_path):
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "osl").write_text("a file where a method folder goes")
    (dest / "mine.txt").write_text("mine")
    before = _tree(tmp_path)
    code, _, err = cli("examples", "copy", dest)
    _one_line_error(code, err, "osl")
    assert _tree(tmp_path) == before
    assert [q.name for q in tmp_path.iterdir()] == ["dest"]  # no temporary folder left


def test_examples_copy_midway_failure_rolls_back(tmp_path, monkeypatch):
    from lmforecast import examples

    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "mine.txt").write_text("mine")
    calls = []
    real = examples._place

    def failing(src, target):
        calls.append(target)
        if len(calls) == 5:
            raise OSError(28, "No space left on device")
        real(src, target)

    monkeypatch.setattr(examples, "_place", failing)
    with pytest.raises(OSError):
        examples.copy(dest)
    assert [q.name for q in dest.iterdir()] == ["mine.txt"]
    assert [q.name for q in tmp_path.iterdir()] == ["dest"]


def test_examples_copy_into_new_and_existing_folder(tmp_path):
    from lmforecast.examples import copy, names

    written = copy(tmp_path / "a" / "b")
    assert sorted(str(p.relative_to(tmp_path / "a" / "b")) for p in written) == names()
    assert copy(tmp_path / "a" / "b") == []  # identical files: nothing to do
    assert [q.name for q in tmp_path.iterdir()] == ["a"]
    assert [q.name for q in (tmp_path / "a").iterdir()] == ["b"]


# --- bounded work on large inputs --------------------------------------------------------


def test_choose_teacher_chunked_intervals_equal_one_shot_and_top_keeps_the_best(monkeypatch):
    import numpy as np
    import pandas as pd

    from lmforecast.distill import DistillationScalingLaw, planning

    m = DistillationScalingLaw.from_spec("busbridge2025")
    rng = np.random.default_rng(1)
    t = pd.DataFrame({"N_T": 10 ** rng.uniform(8, 11, 300), "D_T": 10 ** rng.uniform(10, 13, 300)})
    full = planning.choose_teacher(m, t, 1e9, D_S=2e10)
    lo, hi = m.predict_interval(  # teachers by size and tokens: forecast losses, drawn
        np.full(len(full), 1e9), full["D_S"].to_numpy(), N_T=full["N_T"], D_T=full["D_T"]
    )
    np.testing.assert_array_equal(full["L_S_lo"].to_numpy(), lo)  # whole table, one shot
    np.testing.assert_array_equal(full["L_S_hi"].to_numpy(), hi)
    monkeypatch.setattr(planning, "CHOOSE_CHUNK_ELEMENTS", 7 * len(m.parameter_draws()))
    chunked = planning.choose_teacher(m, t, 1e9, D_S=2e10)  # chunks of 7 teachers
    pd.testing.assert_frame_equal(chunked, full)
    top = planning.choose_teacher(m, t, 1e9, D_S=2e10, top=5)
    pd.testing.assert_frame_equal(top, full.head(5))
    assert full["L_S"].is_monotonic_increasing


def test_choose_teacher_top_says_it_shows_a_subset(cli, ex):
    code, out, err = cli(
        "distill", "choose-teacher", "--student-params", "1e9", "--student-tokens", "2e10",
        "--teachers", ex / "distill" / "teachers.csv", "--top", "1", "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert len(d["ranking"]) == 1 and "showing the best 1 of" in err


@pytest.mark.parametrize("name_col", ["model", "name", "teacher"])
def test_choose_teacher_contradictory_named_duplicate_is_refused(cli, tmp_path, name_col):
    p = tmp_path / "t.csv"
    p.write_text(f"{name_col},N_T,D_T\na,1e9,2e10\na,2e9,2e10\n")
    code, _, err = cli(
        "distill", "choose-teacher", "--student-params", "1e9", "--student-tokens", "2e10",
        "--teachers", p,
    )  # fmt: skip
    _one_line_error(code, err, "row 2", "contradicts", "N_T")


def test_runs_table_over_the_row_limit_is_refused_up_front(cli, ex, tmp_path):
    import pandas as pd

    runs = pd.read_csv(ex / "supervised" / "runs.csv")
    big = tmp_path / "big.csv"
    pd.concat([runs] * (100_000 // len(runs) + 1)).to_csv(big, index=False)
    n = sum(1 for _ in open(big)) - 1
    for argv in (["supervised", "fit", "--runs", big], ["backtest", "--runs", big]):
        code, _, err = cli(*argv, "--quiet")
        _one_line_error(code, err, f"{n:,} rows", "--max-rows")
    code, _, err = cli(
        "supervised", "fit", "--runs", ex / "supervised" / "runs.csv", "--max-rows", "10"
    )
    _one_line_error(code, err, "limit of 10", "--max-rows")


def test_ratio_grid_asking_for_terabytes_is_refused_before_allocating():
    from lmforecast.flp.mixture_scan import ratio_grid

    with pytest.raises(InputError, match="coarser step"):
        ratio_grid(2, 0.0, 1.0, 1e-12)
    with pytest.raises(InputError, match="coarser step"):
        ratio_grid(5, 0.0, 1.0, 1e-3)
    assert ratio_grid(2, 0.0, 0.5, 0.01).shape == (51, 2)  # the paper's scan still runs


# --- remaining accepted / traceback cases ------------------------------------------------


def test_saved_fit_with_a_5000_digit_number_is_one_line(cli, tmp_path):
    from lmforecast.store import load_json

    p = tmp_path / "fit.json"
    p.write_text('{"kind": "FitResult", "n_obs": ' + "9" * 5000 + "}")
    with pytest.raises(InputError, match="4,300 digits"):
        load_json(p)
    code, _, err = cli("supervised", "predict", "--fit", p, "--params", "1e9", "--tokens", "2e10")
    _one_line_error(code, err, "4,300 digits")


@pytest.mark.parametrize("text", ['{\n "law": "chinchilla",\n "theta": [1, 2]\n}', "[1,\n2]"])
def test_inline_json_given_to_fit_is_one_short_line(cli, text):
    code, _, err = cli(
        "supervised", "predict", "--fit", text, "--params", "1e9", "--tokens", "1e10"
    )
    line = _one_line_error(code, err, "--fit", "file path")
    assert len(err.splitlines()) == 1 and len(line) < 200


def test_oserror_with_a_multiline_file_name_is_one_line(capsys):
    from lmforecast.cli import main as cli_main

    def boom(args):
        raise OSError(36, "File name too long", "{\n" * 50)

    args = cli_main.build_parser().parse_args(["examples", "list"])
    args.handler = boom
    assert cli_main.run_handler(args) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "File name too long" in err and len(err) < 200


@pytest.mark.parametrize("device", ["cuda:99", "nosuch", "cuda:-1"])
def test_salience_token_losses_bad_device_is_one_line(cli, ex, tmp_path, device):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    model = tmp_path / "model"
    model.mkdir()
    code, _, err = cli(
        "salience", "token-losses", "--model", model, "--texts", ex / "salience" / "texts.jsonl",
        "--out", tmp_path / "tl.jsonl", "--device", device,
    )  # fmt: skip
    _one_line_error(code, err, "--device")
    assert not (tmp_path / "tl.jsonl").exists()


def test_osl_short_row_is_refused_and_na_tokens_are_counted_as_imputed(cli, ex, tmp_path):
    import csv

    rows = list(csv.reader(open(ex / "osl" / "base_models.csv")))
    mmlu = rows[0].index("MMLU")
    short = [list(r) for r in rows]
    short[3] = short[3][:mmlu]
    p = tmp_path / "short.csv"
    csv.writer(open(p, "w", newline="")).writerows(short)
    code, _, err = cli("osl", "pca", "--benchmarks", p)
    _one_line_error(code, err, "row 3", "field")

    base = [list(r) for r in rows]
    n_empty = sum(1 for r in base[1:] for v in r[mmlu:] if v.strip() in ("", "-"))
    tokens = [list(r) for r in rows]
    tokens[1][mmlu], tokens[2][mmlu] = "NA", "null"
    q = tmp_path / "tokens.csv"
    csv.writer(open(q, "w", newline="")).writerows(tokens)
    code, _, err = cli("osl", "pca", "--benchmarks", q)
    assert code == 0, err
    assert f"{n_empty + 2} empty cell(s)" in err and "imputed" in err  # said, and counted
    code, _, err = cli("osl", "pca", "--benchmarks", q, "--missing", "refuse")
    _one_line_error(code, err, "MMLU", "row 1")


def _zoo_numbers():
    from lmforecast.zoo.build import _RESULT_NUMBERS

    return _RESULT_NUMBERS


@pytest.mark.parametrize(
    "text,why",
    [
        ("[]", "not a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "corrupt"),
        ('{"model": ' + "9" * 5000 + "}", "corrupt"),
        ("OTHER", "names run 'r2'"),
        ("NAN", "'loss'"),
        ("STR", "'N'"),
        ("NOCK", "checkpoints"),
    ],
)
def test_zoo_resume_redoes_a_hostile_result_file(tmp_path, text, why):
    from lmforecast.errors import DomainWarning
    from lmforecast.zoo.resume import load_result

    good = {"model": "r1", **{k: 1.0 for k in _zoo_numbers()}}
    good |= {"checkpoints": [{"step": 1}], "token_losses": []}
    variants = {
        "OTHER": {**good, "model": "r2"},
        "NAN": {**good, "loss": float("nan")},
        "STR": {**good, "N": "1e9"},
        "NOCK": {**good, "checkpoints": "x"},
    }
    p = tmp_path / "result.json"
    p.write_text(json.dumps(variants[text]) if text in variants else text)
    with pytest.warns(DomainWarning, match=why):
        assert load_result(p, "r1", _zoo_numbers()) is None
    p.write_text(json.dumps(good))
    assert load_result(p, "r1", _zoo_numbers()) == good


def test_zoo_marker_that_is_not_an_object_is_one_line(tmp_path):
    from lmforecast.zoo.build import MARKER, prepare_out_dir
    from lmforecast.zoo.presets import get_preset

    out = tmp_path / "zoo"
    out.mkdir()
    (out / MARKER).write_text('"a string"')
    with pytest.raises(InputError, match="not a JSON object"):
        prepare_out_dir(out, get_preset("mini"))


def test_report_refuses_a_folder_or_link_in_place_of_its_files_before_building(cli, tmp_path):
    out = tmp_path / "r"
    (out / "report.json").mkdir(parents=True)
    (out / "report.json" / "keep.txt").write_text("mine")
    code, _, err = cli("report", "--out", out, "--sections", "supervised", "--quick", "--quiet")
    _one_line_error(code, err, "report.json", "directory")
    assert (out / "report.json" / "keep.txt").read_text() == "mine"
    assert sorted(q.name for q in out.iterdir()) == ["report.json"]
    (out / "report.json" / "keep.txt").unlink()
    (out / "report.json").rmdir()
    (out / "report.html").symlink_to(tmp_path / "elsewhere.html")
    code, _, err = cli("report", "--out", out, "--sections", "supervised", "--quick", "--quiet")
    _one_line_error(code, err, "symbolic link")
    assert not (tmp_path / "elsewhere.html").exists()
