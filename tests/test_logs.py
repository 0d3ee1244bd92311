"""Training-log import: real-format files written here following each format's
public specification, and the zoo's own training logs round-tripped into its tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmforecast.data.logs import import_logs, read_log
from lmforecast.errors import InputError

ZOO = Path(__file__).resolve().parents[1] / "src" / "lmforecast" / "data" / "bundled" / "zoo"


def _history_rows(n_steps=100, every=25, tokens_per_step=4096, a=5.0):
    """What a training loop logs: train loss every 5 steps, eval loss every `every` steps
    (separate log calls at the same step, as wandb.log / a JSONL logger write them)."""
    rows = []
    for s in range(5, n_steps + 1, 5):
        rows.append({"step": s, "train/loss": a - s / 100, "tokens": s * tokens_per_step})
        if s % every == 0:
            rows.append({"step": s, "eval/loss": a + 0.1 - s / 100})
    return rows


def test_wandb_history_export(tmp_path):
    # run.history() / "Export as CSV": _step, _runtime, _timestamp, one column per logged key;
    # keys not logged at a step are empty cells
    rows = _history_rows()
    df = pd.DataFrame(rows).rename(columns={"step": "_step"})
    df.insert(1, "_runtime", np.arange(len(df)) * 1.5)
    df.insert(2, "_timestamp", 1.7e9 + np.arange(len(df)))
    p = tmp_path / "run-7.csv"
    df.to_csv(p, index=False)
    res = import_logs([p], "wandb", loss="eval/loss", params="1.2e8", train_loss="train/loss")
    r = res.runs.iloc[0]
    assert r["model"] == "run-7" and r["loss"] == pytest.approx(5.1 - 1.0)
    assert r["D"] == 100 * 4096 and r["C"] == pytest.approx(6 * 1.2e8 * 100 * 4096)
    ck = res.checkpoints
    assert ck["step"].tolist() == [25, 50, 75, 100]  # eval rows, merged with train rows
    assert ck["train_loss"].tolist() == pytest.approx([4.75, 4.5, 4.25, 4.0])
    assert res.columns["step"] == "_step"


def test_wandb_panel_export_and_summary(tmp_path):
    # a chart panel's "Download CSV": Step, "<run> - <key>" (+ __MIN/__MAX), one column per run
    steps = np.arange(100, 1001, 100)
    panel = pd.DataFrame({"Step": steps})
    for run, a in (("small", 4.0), ("big", 3.0)):
        panel[f"{run} - eval/loss"] = a - steps / 1e4
        panel[f"{run} - eval/loss__MIN"] = a - steps / 1e4 - 0.01
        panel[f"{run} - eval/loss__MAX"] = a - steps / 1e4 + 0.01
    panel.loc[9, "small - eval/loss"] = np.nan  # the small run stopped earlier
    p = tmp_path / "panel.csv"
    panel.to_csv(p, index=False)
    models = pd.DataFrame({"model": ["small", "big"], "N": [1e7, 1e8], "N_total": [2e7, 1.3e8]})
    res = import_logs([p], "wandb", loss="eval/loss", tokens_per_step=1e6, models=models)
    got = res.runs.set_index("model")
    assert got.loc["small", "loss"] == pytest.approx(4.0 - 0.09)
    assert got.loc["small", "D"] == 900 * 1e6 and got.loc["big", "D"] == 1000 * 1e6
    assert got.loc["big", "N_total"] == 1.3e8 and got.loc["big", "N"] == 1e8
    # the project's runs table export: Name, State, ..., config and summary keys
    summ = pd.DataFrame({"Name": ["a", "b"], "State": ["finished"] * 2, "Notes": ["-"] * 2,
                         "Runtime": [100, 200], "n_params": [1e7, 4e7],
                         "tokens": [2e8, 8e8], "eval/loss": [3.5, 3.1]})  # fmt: skip
    q = tmp_path / "wandb_export.csv"
    summ.to_csv(q, index=False)
    res = import_logs([q], "wandb", loss="eval/loss", params="n_params")
    assert res.checkpoints is None
    assert res.runs[["model", "N", "D", "loss"]].values.tolist() == [
        ["a", 1e7, 2e8, 3.5], ["b", 4e7, 8e8, 3.1]]  # fmt: skip


def test_tensorboard_event_files_written_by_tensorboards_own_writer(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    for run, a in (("n1e7", 4.0), ("n1e8", 3.2)):
        w = EventFileWriter(str(tmp_path / "logs" / run))
        for s in range(10, 101, 10):
            vals = [Summary.Value(tag="eval/loss", simple_value=a - s / 1000),
                    Summary.Value(tag="tokens", simple_value=s * 2048.0)]  # fmt: skip
            w.add_event(Event(step=s, wall_time=1.7e9 + s, summary=Summary(value=vals)))
        w.close()
    models = pd.DataFrame({"model": ["n1e7", "n1e8"], "N": [1e7, 1e8]})
    res = import_logs([tmp_path / "logs"], "tensorboard", models=models)
    got = res.runs.set_index("model")
    assert got.loc["n1e7", "loss"] == pytest.approx(4.0 - 0.1, abs=1e-6)  # float32 storage
    assert got.loc["n1e8", "D"] == 100 * 2048 and got.loc["n1e8", "steps"] == 100
    assert len(res.checkpoints) == 20


def test_jsonl_mean_of_last_k_and_schedules(tmp_path):
    p = tmp_path / "run.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in _history_rows(every=10)))
    res = import_logs([p], "jsonl", loss="eval/loss", params=5e7, final="mean:3")
    assert res.runs["loss"].iloc[0] == pytest.approx(np.mean([5.1 - 0.8, 5.1 - 0.9, 5.1 - 1.0]))
    assert res.runs["n_final"].iloc[0] == 3
    assert res.n_invalid_checkpoints == 9 and res.checkpoints["valid"].sum() == 1
    const = import_logs([p], "jsonl", loss="eval/loss", params=5e7, schedule="constant")
    assert const.checkpoints["valid"].all() and const.n_invalid_checkpoints == 0
    wsd = import_logs([p], "jsonl", loss="eval/loss", params=5e7, schedule="wsd",
                      cooldown_ends=[50])  # fmt: skip
    assert wsd.checkpoints.loc[wsd.checkpoints["valid"], "step"].tolist() == [50, 100]


def test_cli_writes_tables_and_warns_once_in_one_line(cli, tmp_path):
    p = tmp_path / "run.csv"
    pd.DataFrame(_history_rows(every=10)).to_csv(p, index=False)
    out, ck = tmp_path / "runs.csv", tmp_path / "ck.csv"
    code, stdout, err = cli("runs", "import", p, "--format", "csv", "--loss", "eval/loss",
                            "--params", "5e7", "--out", out, "--checkpoints-out", ck)  # fmt: skip
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "9 of 10 checkpoints are mid-run under a cosine" in lines[0]
    assert pd.read_csv(out)["loss"].tolist() == pytest.approx([4.1])
    assert pd.read_csv(ck)["valid"].tolist() == [False] * 9 + [True]
    code, _, err = cli("runs", "import", p, "--format", "csv", "--loss", "eval/loss", "--params",
                       "5e7", "--out", out, "--checkpoints-out", ck, "--constant-lr")  # fmt: skip
    assert code == 0 and err == ""


def test_zoo_training_logs_round_trip_into_the_zoo_tables(tmp_path):
    # each zoo run's training log is the list of evaluation rows train_run records (step,
    # tokens, C, C_FN, train_loss, per-domain losses, loss, task scores): write them as JSONL
    runs = pd.read_csv(ZOO / "runs.csv")
    ck = pd.read_csv(ZOO / "checkpoints.csv")
    logged = ["step", "tokens", "C", "C_FN", "train_loss", "loss_prose", "loss_code",
              "loss_arith", "loss", "hellaswag_like", "code_mc", "arith"]  # fmt: skip
    files = []
    for m, g in ck.groupby("model", sort=False):
        f = tmp_path / f"{m}.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in g[logged].to_dict("records")))
        files.append(f)
    tasks = ["hellaswag_like", "arith", "code_mc"]
    res = import_logs(files, "jsonl", models=runs[["model", "N", "N_total"]],
                      train_loss="train_loss", keep=tasks)  # fmt: skip
    got = res.runs.set_index("model").loc[runs["model"]]
    want = runs.set_index("model")
    for c in ["N", "N_total", "D", "loss", "steps", *tasks]:
        np.testing.assert_array_equal(got[c].to_numpy(), want[c].to_numpy(), err_msg=c)
    np.testing.assert_allclose(got["C"], want["C"], rtol=1e-5)  # the zoo writes %.6g
    mine = res.checkpoints.set_index(["model", "step"]).loc[list(zip(ck["model"], ck["step"]))]
    for c in ["tokens", "N", "loss", "train_loss", "final"]:
        np.testing.assert_array_equal(mine[c].to_numpy(), ck[c].to_numpy(), err_msg=c)
    np.testing.assert_allclose(mine["C"], ck["C"], rtol=1e-5)


def test_missing_columns_are_listed(tmp_path):
    p = tmp_path / "run.jsonl"
    p.write_text(json.dumps({"it": 1, "val": 3.0}) + "\n")
    with pytest.raises(InputError, match=r"no step column .*the log has columns: it, val"):
        import_logs([p], "jsonl", params=1e6)
    with pytest.raises(InputError, match=r"no column 'loss2' \(--loss\).*columns: it, val"):
        import_logs([p], "jsonl", step="it", loss="loss2", params=1e6)


def test_read_log_names_runs_by_file(tmp_path):
    p = tmp_path / "alpha.jsonl"
    p.write_text(json.dumps({"step": 1, "loss": 2.0}) + "\n")
    assert read_log(p, "jsonl")["run"].tolist() == ["alpha"]


def test_tensorboard_without_the_extra_names_it(tmp_path, monkeypatch):
    import sys

    from lmforecast.errors import OptionalDependencyError

    (tmp_path / "events.out.tfevents.1.host").write_bytes(b"\x00" * 16)
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # as if not installed
    with pytest.raises(OptionalDependencyError, match=r"lmforecast\[tensorboard\]"):
        read_log(tmp_path, "tensorboard")


def test_example_logs_import_and_fit_back_the_law_they_were_simulated_from(tmp_path):
    # examples/files/logs: eight noise-free runs of the Chinchilla law (Hoffmann et al. 2022,
    # Approach 3); the runs table built from the logs must give the law back
    from lmforecast import examples
    from lmforecast.supervised import SupervisedScalingLaw

    folder = examples.path("logs/models.csv").parent
    res = import_logs(sorted(folder.glob("*.jsonl")), "jsonl",
                      models=pd.read_csv(folder / "models.csv"))  # fmt: skip
    ratio = (res.runs["D"] / res.runs["N"]).to_numpy()  # 10 or 30, rounded up to whole steps
    assert (
        len(ratio) == 8
        and (np.isclose(ratio, 10, rtol=0.3) | np.isclose(ratio, 30, rtol=0.1)).all()
    )
    law = SupervisedScalingLaw(form="chinchilla", intervals=False, progress=False).fit(res.runs)
    p = law.params_
    assert p["E"] == pytest.approx(1.69, rel=1e-3) and p["A"] == pytest.approx(406.4, rel=1e-2)
    assert p["alpha"] == pytest.approx(0.34, rel=1e-3) and p["beta"] == pytest.approx(
        0.28, rel=1e-3
    )


def test_tensorboard_tf2_style_tensor_scalars(tmp_path):
    # TF2's tf.summary.scalar writes a tensor with the "scalars" plugin, not simple_value
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
    from tensorboard.util import tensor_util

    md = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    w = EventFileWriter(str(tmp_path / "tf2run"))
    for s in range(10, 51, 10):
        vals = [
            Summary.Value(tag="eval/loss", metadata=md,
                          tensor=tensor_util.make_tensor_proto(np.float32(4 - s / 100))),
            Summary.Value(tag="tokens", metadata=md,
                          tensor=tensor_util.make_tensor_proto(np.float64(s * 1000))),
        ]  # fmt: skip
        w.add_event(Event(step=s, wall_time=1.7e9 + s, summary=Summary(value=vals)))
    w.close()
    res = import_logs([tmp_path], "tensorboard", params=1e6)
    r = res.runs.iloc[0]
    assert (r["model"], r["D"], r["steps"]) == ("tf2run", 50000.0, 50)
    assert r["loss"] == pytest.approx(3.5, abs=1e-6)


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _curve(n=10, loss_key="loss"):
    return [{"step": 10 * (i + 1), "tokens": 1e4 * (i + 1), loss_key: 5.0 - 0.1 * i}
            for i in range(n)]  # fmt: skip


def test_a_run_without_the_loss_key_is_named_not_dropped(tmp_path):
    a = _jsonl(tmp_path / "a.jsonl", _curve())
    b = _jsonl(tmp_path / "b.jsonl", _curve(loss_key="val_loss"))
    with pytest.raises(InputError, match=r"run 'b' has no values in column 'loss'"):
        import_logs([a, b], "jsonl", params=1e8)  # imported 1 of the 2 runs, silently


def test_a_diverged_loss_is_refused_not_read_as_a_shorter_run(tmp_path):
    rows = _curve()
    text = "".join(json.dumps(r) + "\n" for r in rows[:-1])
    text += '{"step": 100, "tokens": 100000.0, "loss": NaN}\n'  # what json.dumps(nan) writes
    (tmp_path / "d.jsonl").write_text(text)
    with pytest.raises(InputError, match="row 10.*NaN.*diverged"):
        import_logs([tmp_path / "d.jsonl"], "jsonl", params=1e8)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda r: r[5].update(loss=-2.0), "row 6.*a loss must be > 0"),
        (lambda r: r[5].update(tokens=10.0), "row 6: tokens go down"),
    ],
)
def test_impossible_curves_are_refused_by_row(tmp_path, edit, match):
    rows = _curve()
    edit(rows)
    with pytest.raises(InputError, match=match):
        import_logs([_jsonl(tmp_path / "x.jsonl", rows)], "jsonl", params=1e8)


def test_final_mean_needs_as_many_evaluations(tmp_path):
    p = _jsonl(tmp_path / "x.jsonl", _curve())
    with pytest.raises(InputError, match="mean:50.*only 10 evaluation"):
        import_logs([p], "jsonl", params=1e8, final="mean:50")
    res = import_logs([p], "jsonl", params=1e8, final="mean:3")
    assert res.runs["loss"].iloc[0] == pytest.approx(np.mean([4.3, 4.2, 4.1]))


def test_conflicting_flags_and_a_log_given_twice_are_refused(tmp_path):
    p = _jsonl(tmp_path / "x.jsonl", _curve())
    with pytest.raises(InputError, match="same log is given twice"):  # said "step goes backwards"
        import_logs([p, p], "jsonl", params=1e8)
    with pytest.raises(InputError, match="--tokens-per-step only for logs without one"):
        import_logs([p], "jsonl", params=1e8, tokens_per_step=5)  # was ignored silently
    with pytest.raises(InputError, match="total parameters 5e\\+07.*fewer than"):
        import_logs([p], "jsonl", params=1e8, params_total=5e7)
    assert import_logs([p], "jsonl", params=1e8, params_total=2e8).runs["N_total"].iloc[0] == 2e8


def test_nan_for_a_step_without_evaluation_is_read_as_missing(tmp_path):
    # json.dumps writes NaN for the keys a step did not log: not a divergence (the run goes on)
    lines = []
    for i in range(1, 11):
        ev = 5.0 - 0.1 * i if i % 2 == 0 else "NaN"
        lines.append(f'{{"step": {10 * i}, "tokens": {1e4 * i}, "train_loss": {5.1 - 0.1 * i}, '
                     f'"eval_loss": {ev}}}')  # fmt: skip
    (tmp_path / "w.jsonl").write_text("\n".join(lines) + "\n")
    res = import_logs([tmp_path / "w.jsonl"], "jsonl", params=1e8, loss="eval_loss",
                      train_loss="train_loss")  # fmt: skip
    assert res.runs["loss"].iloc[0] == pytest.approx(4.0) and len(res.checkpoints) == 5
    # the last step not evaluated, but trained (finite training loss): still not a divergence
    (tmp_path / "w2.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1].replace(
        '"eval_loss": 4.0', '"eval_loss": NaN') + "\n")  # fmt: skip
    res = import_logs([tmp_path / "w2.jsonl"], "jsonl", params=1e8, loss="eval_loss",
                      train_loss="train_loss")  # fmt: skip
    assert res.runs["loss"].iloc[0] == pytest.approx(4.2)


def test_import_log_files_writes_the_tables_asked_for(tmp_path):
    from lmforecast.data.logs.files import (
        check_import_outputs,
        curves_summary,
        import_counts,
        import_log_files,
        import_schedule,
    )

    rows = [dict(r, lr=1e-3 * (1 - r["step"] / 200)) for r in _history_rows(every=10)]
    p = tmp_path / "run.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, ck, cv = (tmp_path / f"{n}.csv" for n in ("runs", "ck", "curves"))
    with pytest.warns(UserWarning, match="9 of 10 checkpoints are mid-run under a cosine"):
        res = import_log_files([p], "jsonl", out=out, checkpoints_out=ck, curves_out=cv,
                               loss="eval/loss", params=5e7, keep="train/loss, ")  # fmt: skip
    assert pd.read_csv(out)["loss"].tolist() == pytest.approx([4.1])
    assert pd.read_csv(ck)["valid"].tolist() == [False] * 9 + [True]
    curves = pd.read_csv(cv)  # every logged step, the loss where it was evaluated
    assert curves["lr"].tolist()[:2] == pytest.approx([0.000975, 0.00095])
    assert curves["loss"].tolist()[1] == pytest.approx(5.0)
    assert import_counts(res) == {"runs": 1, "checkpoints": 10, "invalid_checkpoints": 9,
                                  "curves": 20, "columns": res.columns,
                                  "schedule": "cosine"}  # fmt: skip
    alone = tmp_path / "alone.csv"
    only = import_log_files([p], "jsonl", curves_out=alone, loss="eval/loss")
    assert import_counts(only)["runs"] is None and import_counts(only)["curves"] == 20
    assert curves_summary(only) == "20 rows of 1 run(s); columns: run, step, lr, loss, tokens"
    assert pd.read_csv(alone)["step"].tolist() == list(range(5, 101, 5))
    assert check_import_outputs(None, None, alone) is True
    with pytest.raises(InputError, match="--checkpoints-out goes with --out"):
        check_import_outputs(None, ck, alone)
    assert import_schedule("wsd", cooldown_ends="50, 80") == ("wsd", [50.0, 80.0])
    assert import_schedule("cosine", constant_lr=True) == ("constant", [])
    with pytest.raises(InputError, match="--constant-lr contradicts --schedule wsd"):
        import_schedule("wsd", constant_lr=True)
    with pytest.raises(InputError, match="--cooldown-ends goes with --schedule wsd"):
        import_schedule("cosine", cooldown_ends="50")
    before = out.read_bytes()
    with pytest.raises(InputError, match="--tokens-per-step must be positive, got -1"):
        import_log_files([p], "jsonl", out=out, tokens_per_step=-1.0, params=5e7)
    assert out.read_bytes() == before
