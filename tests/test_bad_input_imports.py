"""Bad-input corpus for `runs import`: every value of a log is validated, every skipped record
is reported in a warning naming its file and record, and nothing is invented (no integer
wrap-around, no infinite compute, no boolean read as a number, no run merged into another)."""

from __future__ import annotations

import json
import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmforecast.data.logs import import_logs
from lmforecast.errors import InputError


def _rows(n=6, a=5.0):
    return [{"step": s, "tokens": s * 1000, "eval_loss": a - s * 0.1} for s in range(1, n + 1)]


def _jsonl(path: Path, rows, tail=""):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + tail)
    return path


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.startswith("lmforecast: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]


# --- JSONL: values that wrapped, overflowed or were read as numbers -------------------------


def test_step_beyond_2_53_is_refused_not_wrapped(tmp_path):
    p = _jsonl(tmp_path / "r.jsonl", [*_rows(5), {"step": 1e30, "tokens": 9000, "eval_loss": 4}])
    with pytest.raises(InputError, match="step 1e\\+30 is no step count"):
        import_logs([p], "jsonl", params=1e6)


def test_tokens_that_overflow_the_compute_are_refused(tmp_path):
    p = _jsonl(tmp_path / "r.jsonl", [*_rows(5), {"step": 6, "tokens": 1e305, "eval_loss": 4}])
    with pytest.raises(InputError, match="C = 6 N D overflow"):
        import_logs([p], "jsonl", params=1e6)


def test_a_boolean_loss_is_not_read_as_one(tmp_path):
    p = _jsonl(tmp_path / "r.jsonl", [*_rows(5), {"step": 6, "tokens": 6000, "eval_loss": True}])
    with pytest.raises(InputError, match="holds true, not a number"):
        import_logs([p], "jsonl", params=1e6)


@pytest.mark.parametrize(
    "line, needle",
    [('{"step": ' + "9" * 400 + ', "tokens": 1, "eval_loss": 2}', "400 digits"),
     ('{"a":' * 50000 + "1" + "}" * 50000, "nested too deeply")],
    ids=["400-digit-step", "deep-nesting"],
)  # fmt: skip
def test_hostile_json_lines_are_one_line_errors(cli, tmp_path, line, needle):
    p = _jsonl(tmp_path / "r.jsonl", _rows(3), tail=line + "\n")
    code, _, err = cli("runs", "import", p, "--format", "jsonl", "--params", "1e6",
                       "--out", tmp_path / "o.csv")  # fmt: skip
    _one_line_error(code, err, needle)
    assert not (tmp_path / "o.csv").exists()


def test_jsonl_last_line_cut_short_is_skipped_with_a_warning(tmp_path):
    p = _jsonl(tmp_path / "r.jsonl", _rows(5), tail='{"step": 6, "tokens": 60')
    with pytest.warns(UserWarning, match="line 6 .the last. is cut short"):
        res = import_logs([p], "jsonl", params=1e6)
    assert res.runs["steps"].iloc[0] == 5 and res.runs["loss"].iloc[0] == pytest.approx(4.5)


def test_self_symlink_and_non_utf8_names_are_one_line_errors(cli, tmp_path):
    loop = tmp_path / "self.jsonl"
    loop.symlink_to(loop.name)
    code, _, err = cli("runs", "import", loop, "--format", "jsonl", "--params", "1e6",
                       "--out", tmp_path / "o.csv")  # fmt: skip
    _one_line_error(code, err, "symbolic link loop")
    bad = Path(os.fsdecode(bytes(tmp_path) + b"/run\xff.jsonl"))
    _jsonl(bad, _rows(3))
    code, _, err = cli("runs", "import", bad, "--format", "jsonl", "--params", "1e6",
                       "--out", tmp_path / "o.csv")  # fmt: skip
    _one_line_error(code, err, "not UTF-8", "\\xff")
    assert not (tmp_path / "o.csv").exists()


def test_run_label_that_is_not_utf8_is_refused(tmp_path):
    rows = [dict(r, name="a\udcff") for r in _rows(3)]
    p = tmp_path / "r.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match="record 1: a text value is not UTF-8"):
        import_logs([p], "jsonl", params=1e6, run="name")


# --- CSV and W&B -------------------------------------------------------------------------


def test_csv_truncated_last_row_is_reported_not_dropped_silently(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("step,tokens,eval_loss\n1,1000,4.9\n2,2000,4.8\n3,3000")
    with pytest.warns(UserWarning, match="r.csv: line 4 .the last. is cut short"):
        res = import_logs([p], "csv", params=1e6)
    assert res.runs["steps"].iloc[0] == 2


def test_csv_short_row_inside_the_file_is_refused(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("step,tokens,eval_loss\n1,1000,4.9\n2,2000\n3,3000,4.7\n")
    with pytest.raises(InputError, match="line 3 has fewer fields"):
        import_logs([p], "csv", params=1e6)


def test_wandb_summary_with_two_runs_of_one_name_is_refused(tmp_path):
    p = tmp_path / "runs.csv"
    pd.DataFrame({"Name": ["a", "b", "a"], "loss": [3.0, 2.9, 2.5], "tokens": [1e9, 2e9, 3e9]}
                 ).to_csv(p, index=False)  # fmt: skip
    with pytest.raises(InputError, match="two runs are named 'a' .lines 2, 4."):
        import_logs([p], "wandb", params=1e8)


# --- TensorBoard -------------------------------------------------------------------------


def _tb_run(folder: Path, losses, start=10):
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(folder))
    for k, loss in enumerate(losses):
        s = start * (k + 1)
        vals = [Summary.Value(tag="eval/loss", simple_value=loss),
                Summary.Value(tag="tokens", simple_value=s * 1000.0)]  # fmt: skip
        w.add_event(Event(step=s, wall_time=1.7e9 + s, summary=Summary(value=vals)))
    w.close()
    (f,) = folder.glob("*tfevents*")
    return f


def _record_offsets(data: bytes) -> list[int]:
    pos, out = 0, []
    while pos < len(data):
        out.append(pos)
        (n,) = struct.unpack("<Q", data[pos : pos + 8])
        pos += 12 + n + 4
    return out


@pytest.fixture
def tb(tmp_path):
    pytest.importorskip("tensorboard")
    losses = [4.0 - 0.1 * k for k in range(10)]
    files = {r: _tb_run(tmp_path / "tb" / r, losses) for r in ("a", "b")}
    return tmp_path / "tb", files, losses


def test_tensorboard_crc_flipped_record_loses_only_that_record(tb):
    root, files, losses = tb
    data = bytearray(files["a"].read_bytes())
    off = _record_offsets(bytes(data))
    data[off[4] + 14] ^= 0xFF  # inside record 4's payload (record 0 is the file version)
    files["a"].write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="1 record.s. failing their checksum skipped .4."):
        res = import_logs([root], "tensorboard", params=1e6, schedule="constant")
    ck = res.checkpoints
    assert len(ck[ck["model"] == "a"]) == 9 and len(ck[ck["model"] == "b"]) == 10
    assert 40 not in set(ck.loc[ck["model"] == "a", "step"])
    assert res.runs.set_index("model").loc["a", "loss"] == pytest.approx(losses[-1], abs=1e-6)


def test_tensorboard_truncated_file_is_reported(tb):
    root, files, losses = tb
    data = files["a"].read_bytes()
    files["a"].write_bytes(data[:-7])
    with pytest.warns(UserWarning, match="the file ends inside it"):
        res = import_logs([root], "tensorboard", params=1e6)
    assert res.runs.set_index("model").loc["a", "steps"] == 90


def test_tensorboard_corrupt_file_among_good_ones_is_refused_not_dropped(tb):
    root, files, _ = tb
    files["a"].write_bytes(b"\x00garbage" * 40)
    with pytest.raises(InputError, match="not a TensorBoard event file"):
        import_logs([root], "tensorboard", params=1e6)


def test_tensorboard_run_ending_in_nan_is_diverged_not_healthy(tmp_path):
    pytest.importorskip("tensorboard")
    _tb_run(tmp_path / "tb" / "a", [4.0, 3.9, 3.8, float("nan")])
    with pytest.raises(InputError, match="diverged"):
        import_logs([tmp_path / "tb"], "tensorboard", params=1e6)


def test_tensorboard_clean_files_read_without_warnings(tb):
    root, _, losses = tb
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = import_logs([root], "tensorboard", params=1e6, schedule="constant")
    assert len(res.checkpoints) == 20
    np.testing.assert_allclose(
        res.checkpoints.loc[res.checkpoints["model"] == "b", "loss"], losses, atol=1e-6
    )


# --- outputs -----------------------------------------------------------------------------


def _logs(tmp_path):
    return [_jsonl(tmp_path / f"r{k}.jsonl", _rows(6, 5.0 - k)) for k in range(2)]


def test_out_and_checkpoints_out_naming_one_file_are_refused(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    logs = _logs(tmp_path)
    code, _, err = cli("runs", "import", *logs, "--format", "jsonl", "--params", "1e6",
                       "--out", "o.csv", "--checkpoints-out", "./o.csv")  # fmt: skip
    _one_line_error(code, err, "name the same file")
    assert not Path("o.csv").exists()


def test_failed_second_output_leaves_the_first_unchanged(cli, tmp_path):
    logs = _logs(tmp_path)
    out = tmp_path / "o.csv"
    out.write_text("old")
    code, _, err = cli("runs", "import", *logs, "--format", "jsonl", "--params", "1e6",
                       "--out", out, "--checkpoints-out", "/dev/full")  # fmt: skip
    _one_line_error(code, err, "--checkpoints-out /dev/full")
    assert out.read_text() == "old"


@pytest.mark.parametrize("flags", [["--out", "o.json"],
                                   ["--out", "o.csv", "--checkpoints-out", "ck.png"]])  # fmt: skip
def test_outputs_named_for_another_format_are_refused(cli, tmp_path, monkeypatch, flags):
    monkeypatch.chdir(tmp_path)
    logs = _logs(tmp_path)
    code, _, err = cli("runs", "import", *logs, "--format", "jsonl", "--params", "1e6", *flags)
    _one_line_error(code, err, "writes CSV")
    assert not any(Path(f).exists() for f in ("o.json", "o.csv", "ck.png"))
