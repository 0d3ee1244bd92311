"""The validation layer itself: saved-fit schemas, the CLI door (internal-error guard, --debug,
bare command), atomic writes, and property-based corruption of tables and saved fits (always an
InputError or a valid, usable result; never another exception)."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmforecast import examples
from lmforecast.errors import InputError, fmt_value

REPO = Path(__file__).resolve().parents[1]
EX = examples.path("flp/runs.csv").parents[1]  # the packaged example files


# ---- valid saved results of every type, built once ------------------------------------------
@pytest.fixture(scope="module")
def fits(tmp_path_factory):
    from lmforecast.cli.main import main
    from lmforecast.distill.simulate import simulate_distillation_runs

    d = tmp_path_factory.mktemp("fits")
    rng = np.random.default_rng(1)
    N = 10 ** rng.uniform(7.5, 10.5, 30)
    D = N * 10 ** rng.uniform(0.3, 3.0, 30)
    L = (1.69 + 406.4 / N**0.34 + 410.7 / D**0.28) * np.exp(rng.normal(0, 0.004, 30))
    pd.DataFrame({"N": N, "D": D, "loss": L}).to_csv(d / "runs.csv", index=False)
    # 12 runs: the saved fit has every field a 40-run fit has (leave-one-out noise included),
    # at a third of the fitting time
    simulate_distillation_runs(n_runs=12, seed=0)[["N_S", "D_S", "L_T", "L_S"]].to_csv(
        d / "distill_runs.csv", index=False
    )
    e = str(EX)
    for argv in (
        f"supervised fit --runs {d}/runs.csv --bootstrap 4 --jobs 1 --quiet --out {d}/sup.json",
        f"distill fit --runs {d}/distill_runs.csv --supervised paper --bootstrap 3 --jobs 1 "
        f"--quiet --out {d}/dist.json",
        f"flp fit --runs {e}/flp/runs.csv --checkpoints {e}/flp/checkpoints.csv --task ARC "
        f"--bootstrap 5 --quiet --out {d}/flp.json",
        f"flpm fit --runs {e}/flp/mixture_runs.csv --checkpoints {e}/flp/mixture_checkpoints.csv "
        f"--task HumanEval --steps 50 --quiet --out {d}/flpm.json",
        f"salience fit --texts {e}/salience/texts.jsonl --losses {e}/salience/losses.jsonl "
        f"--scores {e}/salience/scores.csv --task reasoning --chance 0 --steps 20 "
        f"--bootstrap 5 --quiet --out {d}/sal.json",
    ):
        assert main(argv.split()) == 0, argv
    return d


def _use_supervised(path):
    from lmforecast.supervised import SupervisedScalingLaw

    m = SupervisedScalingLaw.load(path)
    out = [m.predict(1e9, 2e10), m.allocate(1e22).N]
    if m.result_.bootstrap:
        out += list(m.predict_interval(1e9, 2e10))
    return out


def _use_distill(path):
    from lmforecast.distill import DistillationScalingLaw

    m = DistillationScalingLaw.load(path)
    return [m.predict(1e9, 2e10, 2.2)]


def _use_flp(path):
    from lmforecast.flp.model import FLP

    m = FLP.from_json(path)
    return [m.predict(np.array([1e22])), m.summary()]


def _use_flpm(path):
    from lmforecast.flp.mixture import FLPM

    m = FLPM.from_json(path)
    return [m.summary(), m.optimize_mixture(1e21, 0.0, 0.5, 0.1)]


def _use_salience(path):
    from lmforecast.salience.result import SalienceFit

    f = SalienceFit.from_json(path)
    return [f.summary(), f.table()]


LOADERS = {
    "sup.json": _use_supervised,
    "dist.json": _use_distill,
    "flp.json": _use_flp,
    "flpm.json": _use_flpm,
    "sal.json": _use_salience,
}


@pytest.mark.parametrize("name", list(LOADERS))
def test_valid_fits_load_and_round_trip_bit_for_bit(fits, name):
    from lmforecast.distill.schema import check_distill_fit
    from lmforecast.fitting.schema import check_fit_result
    from lmforecast.flp import FLP, FLPM
    from lmforecast.flp.schema import check_flp, check_flpm, init_args
    from lmforecast.salience.schema import check_salience
    from lmforecast.store import load_json

    # read as every loader reads (a non-finite float, e.g. the NaN objective of the paper's
    # supervised law a distillation fit keeps in meta.supervised_fit, is listed under
    # "non_finite" in the strict JSON and put back by load_json)
    d = load_json(fits / name, name)
    check = {
        "sup.json": lambda d, w: check_fit_result(d, w, kind="SupervisedScalingLaw"),
        "dist.json": check_distill_fit,
        "flp.json": lambda d, w: check_flp(d, w, init_args(FLP)),
        "flpm.json": lambda d, w: check_flpm(d, w, init_args(FLPM)),
        "sal.json": check_salience,
    }[name]
    assert check(d, name) is d
    LOADERS[name](fits / name)


# ---- the hand edits, refused with the field named ----------------------------------
@pytest.mark.parametrize(
    "name, path, value, needle",
    [
        ("sup.json", ("params", "alpha"), "x", "'params.alpha': must be a number (got 'x')"),
        ("sup.json", ("params", "alpha"), 0.5, "'params.alpha': disagrees with theta"),
        ("sup.json", ("loss",), None, "'loss': must be a JSON object (got null)"),
        ("sup.json", ("bootstrap",), [[1]], "'bootstrap[0]': must have 6 entries, has 1"),
        ("sup.json", ("theta",), [1.0, 2.0], "'theta': must have 6 entries, has 2"),
        ("sup.json", ("format_version",), 2, "unknown version"),
        ("sal.json", ("gamma",), 2.0, "'gamma': must be < 1 (got 2)"),
        ("flp.json", ("stage2", "params", "w1"), float("nan"), "'stage2.params.w1': must be a"),
    ],
)
def test_hand_edited_fit_is_refused_naming_the_field(fits, tmp_path, name, path, value, needle):
    d = json.loads((fits / name).read_text())
    cur = d
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = value
    p = tmp_path / name
    p.write_text(json.dumps(d))
    with pytest.raises(InputError) as ei:
        LOADERS[name](p)
    assert needle in str(ei.value)
    assert str(p) in str(ei.value)


def test_a_long_path_is_named_whole_in_the_message(fits, tmp_path):
    # a path of 150+ characters was cut at 120 ("sal.jso: field ..."), losing the file name
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    d = json.loads((fits / "sal.json").read_text())
    d["gamma"] = 2.0
    p = deep / "salience_fit.json"
    p.write_text(json.dumps(d))
    assert len(str(p)) > 150
    with pytest.raises(InputError, match=r"salience_fit\.json: field 'gamma'") as ei:
        LOADERS["sal.json"](p)
    assert str(p) in str(ei.value)
    missing = str(deep / "no_such_fit.json")
    with pytest.raises(InputError) as ei:
        LOADERS["sup.json"](missing)
    assert f"{missing}: no such file" in str(ei.value)


def test_edited_params_no_longer_move_allocate_only(fits, tmp_path, cli):
    """The issue: editing params.alpha moved `allocate` (reads params) but not `predict` (reads
    theta). Now both refuse the file."""
    d = json.loads((fits / "sup.json").read_text())
    d["params"]["alpha"] = 0.9
    p = tmp_path / "edited.json"
    p.write_text(json.dumps(d))
    for verb in (
        ["allocate", "--flops", "1e22"],
        ["predict", "--params", "1e9", "--tokens", "2e10"],
    ):
        code, out, err = cli("supervised", verb[0], "--fit", p, *verb[1:])
        assert code == 2 and out == "" and "params.alpha" in err


def test_existing_file_named_like_json_wins_over_inline_json(fits, tmp_path):
    from lmforecast.store import load_json

    p = tmp_path / "{weird}.json"
    shutil.copy(fits / "sup.json", p)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert load_json("{weird}.json")["law"] == "chinchilla-gamma"
        assert load_json('{"a": 1}') == {"a": 1}  # inline JSON still works
    finally:
        os.chdir(cwd)


def test_fmt_value_prints_plain_numbers():
    assert fmt_value(np.float64(12480.0)) == "12480"
    assert fmt_value(np.float64("nan")) == "nan"
    assert fmt_value(np.float32(0.25)) == "0.25"
    assert fmt_value(np.int64(7)) == "7"
    assert fmt_value(2e22) == "2e+22"
    assert fmt_value(np.str_("a")) == "'a'"


def test_cli_strips_numpy_scalar_reprs_that_slip_through():
    from lmforecast.cli.main import _one_line

    msg = _one_line(InputError("N=np.float64(12480.0) x=np.int64(3) m=np.str_('a') np.True_\nend"))
    assert msg == "N=12480.0 x=3 m='a' True end"


def test_cli_shows_a_users_cell_that_reads_like_a_numpy_repr_as_it_is(cli, tmp_path):
    # a table written with repr() of numpy scalars: the message must show the cell as written,
    # not strip it to '1e+08', which would read as a valid number refused
    from lmforecast.cli.main import _one_line

    msg = _one_line(InputError("x 'np.float64(1.5)' y np.float64(2.5)"))
    assert msg == "x 'np.float64(1.5)' y 2.5"
    (tmp_path / "r.csv").write_text(
        "N,D,loss\nnp.float64(100000000.0),2e9,3.0\n2e8,4e9,2.9\n4e8,8e9,2.8\n"
    )
    code, _, err = cli(
        "supervised", "fit", "--runs", tmp_path / "r.csv", "--out", tmp_path / "f.json"
    )
    assert code == 2 and not (tmp_path / "f.json").exists()
    assert "'np.float64(100000000.0)' is not a number" in err, err


def test_supervised_duplicate_message_is_plain_and_says_how_to_fix(cli, tmp_path):
    df = pd.DataFrame({"N": [1e8, 2e8, 1e8], "D": [12480.0, 2e9, 12480.0], "loss": [3, 2.9, 3]})
    df.to_csv(tmp_path / "r.csv", index=False)
    code, _, err = cli("supervised", "fit", "--runs", tmp_path / "r.csv")
    assert code == 2
    assert "row 3 duplicates row 1 (N=1e+08, D=12480" in err and "np." not in err
    assert "--replicates mean" in err and "--replicates keep" in err  # says how to fix


def test_distill_duplicate_message_names_the_files_rows_when_supervised_rows_are_mixed(
    cli, tmp_path
):
    # rows 1 and 3 are supervised (empty L_T); the repeated distillation run is rows 2 and 5
    df = pd.DataFrame({
        "N_S": [1e8, 1e8, 2e8, 3e8, 1e8], "D_S": [1e9, 1e9, 1e9, 1e9, 1e9],
        "L_T": [None, 2.5, None, 2.5, 2.5], "L_S": [3.0, 2.9, 2.8, 2.7, 2.95],
    })  # fmt: skip
    df.to_csv(tmp_path / "r.csv", index=False)
    code, _, err = cli("distill", "fit", "--runs", tmp_path / "r.csv")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "row 5 duplicates row 2" in err and "L_S=2.95 here, 2.9 in row 2" in err
    df.loc[2, "N_S"] = 1e8  # now supervised rows 1 and 3 repeat each other
    df.loc[4, "L_T"] = 2.6  # and row 5 is a distinct distillation run
    df.to_csv(tmp_path / "r.csv", index=False)
    code, _, err = cli("distill", "fit", "--runs", tmp_path / "r.csv")
    assert code == 2 and "row 3 duplicates row 1" in err


@pytest.mark.parametrize(
    "name, path, value, field",
    [
        ("flp.json", ("stage2", "meta", "r2"), "", "stage2.meta.r2"),
        ("flp.json", ("stage2", "meta", "r2"), [], "stage2.meta.r2"),
        ("flpm.json", ("stage1", None, "meta", "share_range"), {"general": [0, 1]}, "share_range"),
        ("flpm.json", ("stage1", None, "meta", "share_range", "code"), [0.5, 0.1], "share_range"),
    ],
)
def test_fields_read_after_loading_are_validated(fits, tmp_path, name, path, value, field):
    # found by the hypothesis test below: summary() formatted an unvalidated stage-2 R^2
    d = json.loads((fits / name).read_text())
    cur = d
    for key in path[:-1]:
        cur = cur[next(iter(cur))] if key is None else cur[key]
    cur[path[-1]] = value
    p = tmp_path / name
    p.write_text(json.dumps(d))
    with pytest.raises(InputError, match=field):
        LOADERS[name](p)


# ---- the CLI door -------------------------------------------------------------------------------
def test_internal_error_is_one_line_exit_1_and_debug_shows_traceback(cli, monkeypatch, capsys):
    import lmforecast.cli.supervised as sup

    def boom(args):
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(sup, "_predict", boom)
    argv = [
        "supervised",
        "predict",
        "--preset",
        "hoffmann2022",
        "--params",
        "1e9",
        "--tokens",
        "1e10",
    ]
    code, out, err = cli(*argv)
    assert code == 1
    assert err == (
        "lmforecast: internal error: RuntimeError: kaboom second line "
        "(run with --debug for the traceback)\n"
    )
    code, out, err = cli("--debug", *argv)
    assert code == 1 and "Traceback" in err and "kaboom" in err
    code, out, err = cli(*argv, "--debug")  # accepted after the command too
    assert code == 1 and "Traceback" in err


def test_bare_command_lists_the_commands(cli):
    code, out, err = cli()
    assert code == 2
    for c in ("supervised", "distill", "flp", "flpm", "osl", "salience", "zoo", "report"):
        assert c in err


def test_osl_imputation_is_said_and_can_be_refused(cli):
    b1 = REPO / "src/lmforecast/data/bundled/osl/table_b1_base_models.csv"
    code, out, err = cli("osl", "pca", "--benchmarks", b1)
    assert code == 0 and "were imputed by iterative PCA as the paper does (App. B.3)" in err
    code, out, err = cli("osl", "pca", "--benchmarks", b1, "--missing", "refuse")
    assert code == 2 and "--missing refuse" in err and out == ""


# ---- writes -------------------------------------------------------------------------------------
def test_new_files_get_the_umask_mode_not_0600(tmp_path):
    from lmforecast.cli.common import atomic_write_text

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "a.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o644


def test_failed_write_leaves_previous_file(tmp_path, monkeypatch):
    from lmforecast.cli import common

    p = tmp_path / "fit.json"
    p.write_text("old")

    def fail(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(common.os, "replace", fail)
    with pytest.raises(OSError):
        common.atomic_write_text(p, "new")
    assert p.read_text() == "old" and sorted(x.name for x in tmp_path.iterdir()) == ["fit.json"]


@pytest.mark.parametrize("with_other_files", [False, True])
def test_report_pair_is_never_half_replaced(tmp_path, monkeypatch, with_other_files):
    from lmforecast import store as common
    from lmforecast.report.builder import write_report_files

    out = tmp_path / "rep"
    write_report_files(out, {"report.html": "old html", "report.json": "old json"})
    if with_other_files:
        (out / "notes.txt").write_text("mine")
    real = common.atomic_write_text
    calls = []

    def flaky(path, text):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(common, "atomic_write_text", flaky)
    real_write_bytes = Path.write_bytes

    def flaky_bytes(self, data):
        if self.name == "report.json":
            raise OSError(28, "No space left on device")
        return real_write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", flaky_bytes)
    with pytest.raises(OSError):
        write_report_files(out, {"report.html": "new html", "report.json": "new json"})
    assert (out / "report.html").read_text() == "old html"
    assert (out / "report.json").read_text() == "old json"
    leftovers = [x.name for x in tmp_path.iterdir() if x.name != "rep"]
    assert leftovers == []
    assert sorted(x.name for x in out.iterdir()) == sorted(
        ["report.html", "report.json"] + (["notes.txt"] if with_other_files else [])
    )


def test_report_folder_swap_writes_both_files(tmp_path):
    from lmforecast.report.builder import write_report_files

    out = tmp_path / "rep"
    write_report_files(out, {"report.html": "a", "report.json": "b"})
    write_report_files(out, {"report.html": "c", "report.json": "d"})
    assert (out / "report.html").read_text() == "c" and (out / "report.json").read_text() == "d"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["rep"]


# ---- property-based corruption -------------------------------------------------------------------
def _corrupt(data: bytes, how: str, pos: float, byte: int) -> bytes:
    if not data:
        return data
    i = min(int(pos * len(data)), len(data) - 1)
    if how == "truncate":
        return data[:i]
    if how == "flip":
        return data[:i] + bytes([byte]) + data[i + 1 :]
    if how == "delete":
        return data[:i] + data[i + 1 :]
    return data[:i] + bytes([byte]) * 3 + data[i:]  # insert


CORRUPTION = st.tuples(
    st.sampled_from(["truncate", "flip", "delete", "insert"]),
    st.floats(0, 1, allow_nan=False),
    st.integers(0, 255),
)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("tables")
    df = pd.read_csv(EX / "flp" / "runs.csv")
    df.to_csv(d / "t.csv", index=False)
    df.to_csv(d / "t.tsv", index=False, sep="\t")
    df.to_json(d / "t.jsonl", orient="records", lines=True)
    df.to_parquet(d / "t.parquet")
    return d


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ext=st.sampled_from(["csv", "tsv", "jsonl", "parquet"]), c=st.lists(CORRUPTION, max_size=3))
def test_read_table_corrupted_is_input_error_or_a_table(tables, tmp_path, ext, c):
    from lmforecast.data.io import read_table

    data = (tables / f"t.{ext}").read_bytes()
    for how, pos, byte in c:
        data = _corrupt(data, how, pos, byte)
    p = tmp_path / f"x.{ext}"
    p.write_bytes(data)
    try:
        df = read_table(p)
    except InputError as exc:
        msg = str(exc)
        # the CLI prints it as one line: non-empty, no line break, naming the file it read
        assert msg.strip() and "\n" not in msg.strip(), msg
        assert p.name in msg, msg
        return
    assert isinstance(df, pd.DataFrame) and len(df) > 0


def _json_mutations():
    """A structural edit of a JSON tree: drop a key, change a value's type, or replace it."""
    values = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=3),
        st.just([]),
        st.just({}),
        st.just([[1.0]]),
    )
    return st.tuples(st.sampled_from(["drop", "set"]), st.integers(0, 10**6), values)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list) and obj and len(obj) < 50:
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))
    elif isinstance(obj, list) and obj:
        yield from _paths(obj[0], prefix + (0,))


def _mutate(d, op, k, value):
    paths = [p for p in _paths(d) if p]
    path = paths[k % len(paths)]
    cur = d
    for key in path[:-1]:
        cur = cur[key]
    if op == "drop" and isinstance(cur, dict):
        del cur[path[-1]]
    else:
        cur[path[-1]] = value


def _must_be_input_error_or_usable(loader, p):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            loader(p)
        except InputError:
            pass


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(list(LOADERS)), muts=st.lists(_json_mutations(), min_size=1, max_size=3)
)
def test_fit_file_with_changed_types_or_dropped_keys(fits, tmp_path, name, muts):
    d = json.loads((fits / name).read_text())
    for op, k, value in muts:
        _mutate(d, op, k, value)
    p = tmp_path / f"m-{name}"
    p.write_text(json.dumps(d))
    _must_be_input_error_or_usable(LOADERS[name], p)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.sampled_from(list(LOADERS)), c=st.lists(CORRUPTION, min_size=1, max_size=3))
def test_fit_file_with_corrupted_bytes(fits, tmp_path, name, c):
    data = (fits / name).read_bytes()
    for how, pos, byte in c:
        data = _corrupt(data, how, pos, byte)
    p = tmp_path / f"b-{name}"
    p.write_bytes(data)
    _must_be_input_error_or_usable(LOADERS[name], p)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(which=st.sampled_from(["texts", "losses"]), c=st.lists(CORRUPTION, min_size=1, max_size=3))
def test_salience_jsonl_corrupted_is_input_error_or_records(tmp_path, which, c):
    from lmforecast.salience.records import loss_table, read_loss_records, read_texts

    texts = read_texts(EX / "salience" / "texts.jsonl")
    data = (EX / "salience" / f"{which}.jsonl").read_bytes()
    for how, pos, byte in c:
        data = _corrupt(data, how, pos, byte)
    p = tmp_path / f"{which}.jsonl"
    p.write_bytes(data)
    try:
        if which == "texts":
            assert isinstance(read_texts(p), dict)
        else:
            loss_table(read_loss_records(p), {k: len(v) for k, v in texts.items()})
    except InputError:
        pass


def test_schema_field_lists_are_the_result_dataclasses_fields():
    # the schemas list the fields they accept (they sit below the result classes and do not
    # import them); a field added to a dataclass without its schema fails here
    import dataclasses

    from lmforecast.fitting.result import FitResult
    from lmforecast.fitting.schema import FIT_RESULT_FIELDS
    from lmforecast.salience.result import SalienceFit
    from lmforecast.salience.schema import SALIENCE_FIELDS, SALIENCE_OPTIONAL

    envelope = {"kind", "format_version"}
    assert set(FIT_RESULT_FIELDS) == {f.name for f in dataclasses.fields(FitResult)} | envelope
    fields = {f.name for f in dataclasses.fields(SalienceFit)} | envelope
    assert set(SALIENCE_FIELDS) | set(SALIENCE_OPTIONAL) == fields


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LOADERS))
def test_fit_file_with_any_one_key_dropped(fits, tmp_path, name):
    """Exhaustive and seed-free beside the random mutations above: every dict key of the saved
    fit, dropped alone or its value replaced by a string (a random run found meta.compute_law,
    which a stack needs: KeyError)."""
    d0 = json.loads((fits / name).read_text())
    keys = [p for p in _paths(d0) if p and isinstance(_at(d0, p[:-1]), dict)]
    assert len(keys) > 5
    bad = []
    for path in keys:
        for how in ("without", "string at"):
            d = json.loads((fits / name).read_text())
            if how == "without":
                del _at(d, path[:-1])[path[-1]]
            else:
                _at(d, path[:-1])[path[-1]] = "x"
            p = tmp_path / f"edit-{name}"
            p.write_text(json.dumps(d))
            try:
                _must_be_input_error_or_usable(LOADERS[name], p)
            except Exception as exc:  # noqa: BLE001 - name every key that fails
                bad.append(f"{how} {'.'.join(map(str, path))}: {exc!r}")
    assert not bad, f"{name}: " + "; ".join(bad)


def _at(d, path):
    for key in path:
        d = d[key]
    return d
