"""`runs import` refuses, with a message, what would be merged, blanked or misread silently."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lmforecast.data.logs import import_logs
from lmforecast.errors import InputError


def _one_line_error(code, out, err, *needles):
    assert code == 2, (code, out, err)
    line = err.strip()
    assert "\n" not in line and "Traceback" not in err, err
    for n in needles:
        assert n in line, (n, line)
    return line


def _csv(path, text):
    path.write_text(text)
    return path


def test_rows_of_two_runs_at_one_step_are_refused_not_merged(cli, tmp_path):
    p = _csv(
        tmp_path / "multi.csv",
        "name,iteration,validation/loss,consumed_tokens\nsmall,100,4.0,1000000\n"
        "big,100,3.8,1000000\nsmall,200,3.5,2000000\nbig,200,3.2,2000000\n",
    )
    out, ck = tmp_path / "a.csv", tmp_path / "ack.csv"
    r = cli("runs", "import", p, "--format", "csv", "--params", "1e6", "--out", out,
            "--checkpoints-out", ck)  # fmt: skip
    _one_line_error(*r, "multi.csv", "run 'multi'", "step 100", "validation/loss", "--run")
    assert not out.exists() and not ck.exists()
    code, _, err = cli("runs", "import", p, "--format", "csv", "--params", "1e6", "--out", out,
                       "--run", "name")  # fmt: skip
    assert code == 0, err
    assert sorted(pd.read_csv(out)["model"]) == ["big", "small"]


def test_wandb_runs_table_with_a_step_column_is_a_runs_table(cli, tmp_path):
    p = _csv(
        tmp_path / "summ.csv",
        "Name,State,n_params,eval/loss,tokens,_step\n"
        "r-small,finished,1e6,3.3,3000000,300\nr-big,finished,4e6,3.0,3000000,300\n",
    )
    out = tmp_path / "s.csv"
    code, _, err = cli("runs", "import", p, "--format", "wandb", "--params", "n_params",
                       "--out", out, "--keep", "State")  # fmt: skip
    assert code == 0, err
    got = pd.read_csv(out).set_index("model")
    assert list(got.index) == ["r-small", "r-big"]
    assert got.loc["r-big", "N"] == 4e6 and got.loc["r-big", "loss"] == 3.0
    assert list(got["State"]) == ["finished", "finished"]  # text carried, not blanked


def test_tensorboard_split_folders_are_not_overwritten(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    for run, s in (("r1", 1.0), ("r2", 0.8)):
        for sub in ("train", "eval"):
            w = EventFileWriter(str(tmp_path / "tb2" / run / sub))
            for i in range(2, 11, 2):
                v = Summary.Value(tag="loss", simple_value=s * (4.9 - i * 0.1))
                w.add_event(Event(step=i * 100, summary=Summary(value=[v])))
            w.close()
    res = import_logs([tmp_path / "tb2"], "tensorboard", params=1e6, tokens_per_step=1000)
    got = res.runs.set_index("model")["loss"]
    assert sorted(got.index) == ["r1/eval", "r1/train", "r2/eval", "r2/train"]
    assert got["r1/eval"] == pytest.approx(3.9) and got["r2/eval"] == pytest.approx(3.12)


@pytest.mark.parametrize(
    "table, needles",
    [
        ("model,N\none,1e6\none,2e6\n", ["dup.csv", "row 2", "'one'", "twice"]),
        ("model,N\none,1M\n", ["dup.csv", "row 1", "'N'", "'1M'"]),
        ("model,N\none,-1\n", ["dup.csv", "row 1", "'N'", "-1"]),
        ("model,N,N_total\none,1e6,abc\n", ["dup.csv", "row 1", "'N_total'", "'abc'"]),
    ],
)
def test_a_bad_models_table_is_refused_by_row(cli, tmp_path, table, needles):
    log = _csv(tmp_path / "one.csv", "iteration,validation/loss,consumed_tokens\n100,4,1e6\n")
    m = _csv(tmp_path / "dup.csv", table)
    out = tmp_path / "o.csv"
    r = cli("runs", "import", log, "--format", "csv", "--models", m, "--out", out)
    _one_line_error(*r, "--models", *needles)
    assert not out.exists()


@pytest.mark.parametrize(
    "body, extra, needles",
    [
        ("100,4.0,-10,1e6\n200,3.5,-5,1e6\n", (), ["step 100", "consumed_tokens", "-10"]),
        ("100,4.0,0,1e6\n200,3.5,0,1e6\n", (), ["step 200", "consumed_tokens", "0"]),
        ("100,4.0,10,-1\n200,3.5,20,-1\n", ("--params", "np"), ["'np'", "-1"]),
    ],
)
def test_non_positive_tokens_and_params_are_refused(cli, tmp_path, body, extra, needles):
    log = _csv(tmp_path / "t.csv", "iteration,validation/loss,consumed_tokens,np\n" + body)
    out = tmp_path / "o.csv"
    argv = ["runs", "import", log, "--format", "csv", "--out", out]
    r = cli(*argv, *(extra or ("--params", "1e6")))
    _one_line_error(*r, "t.csv", "run 't'", *needles)
    assert not out.exists()


def _hf(path, eval_step_offset):
    with open(path, "w") as f:
        for s in range(10, 101, 10):
            f.write(json.dumps({"step": s, "tokens": s * 1000, "loss": 5 - s / 100}) + "\n")
            if s in (50, 100):
                at = s + eval_step_offset if s == 100 else s
                f.write(json.dumps({"step": at, "eval_loss": 4.5 - s / 100}) + "\n")
    return path


def test_an_evaluation_row_without_tokens_is_refused_by_step(cli, tmp_path):
    log = _hf(tmp_path / "hf.jsonl", 5)
    out = tmp_path / "h.csv"
    r = cli("runs", "import", log, "--format", "jsonl", "--params", "1e6", "--loss", "eval_loss",
            "--out", out)  # fmt: skip
    _one_line_error(*r, "hf.jsonl", "run 'hf'", "step 105", "'tokens'")
    assert not out.exists()


def test_eval_tokens_from_the_same_step_and_eval_loss_is_the_default(cli, tmp_path):
    log = _hf(tmp_path / "hf.jsonl", 0)
    out = tmp_path / "h.csv"
    code, stdout, err = cli("runs", "import", log, "--format", "jsonl", "--params", "1e6",
                            "--out", out)  # fmt: skip
    assert code == 0, err
    assert "loss=eval_loss" in stdout
    got = pd.read_csv(out).iloc[0]
    assert got["D"] == 100_000 and got["loss"] == pytest.approx(3.5)  # eval, not train (4.0)


def test_unmatched_cooldown_ends_are_refused(cli, tmp_path):
    log = _csv(tmp_path / "one.csv", "iteration,validation/loss,consumed_tokens\n100,4,1e6\n"
               "200,3.5,2e6\n")  # fmt: skip
    out = tmp_path / "w.csv"
    argv = ["runs", "import", log, "--format", "csv", "--params", "1e6", "--out", out,
            "--schedule", "wsd", "--cooldown-ends"]  # fmt: skip
    _one_line_error(*cli(*argv, "150"), "--cooldown-ends 150", "no evaluation", "'one'")
    assert not out.exists()
    code, _, err = cli(*argv, "100")
    assert code == 0, err


def test_a_kept_text_column_is_carried_in_a_step_log(tmp_path):
    log = _csv(tmp_path / "k.csv", "step,loss,tokens,tag\n100,4,1e6,warm\n200,3.5,2e6,done\n")
    res = import_logs([log], "csv", params=1e6, keep=["tag"])
    assert res.runs["tag"].tolist() == ["done"]
    assert res.checkpoints["tag"].tolist() == ["warm", "done"]


def test_mixed_logs_keep_the_bare_loss_when_not_every_run_logs_an_eval_loss(tmp_path):
    a = _csv(tmp_path / "a.csv", "step,loss,tokens\n100,4,1e6\n")
    b = _csv(tmp_path / "b.csv", "step,loss,val_loss,tokens\n100,4,3.9,1e6\n")
    res = import_logs([a, b], "csv", params=1e6)
    assert res.columns["loss"] == "loss"
    with pytest.raises(InputError, match="run 'a'"):
        import_logs([a, b], "csv", params=1e6, loss="val_loss")
