"""End to end: the ``mini`` zoo trains from scratch, writes its tables, and resumes exactly."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lmforecast.errors import DomainWarning  # noqa: E402
from lmforecast.zoo import build as build_mod  # noqa: E402
from lmforecast.zoo import load_zoo  # noqa: E402
from lmforecast.zoo.presets import get_preset  # noqa: E402
from lmforecast.zoo.train import load_verified  # noqa: E402

pytestmark = pytest.mark.slow

# a checkpointed run that other runs do not depend on (the cheapest one: 60 steps, its state
# saved at steps 8, 15, 22, 30, 38, ...); the resume test kills the build after KILL_AT steps,
# between two saves, so the resumed build redoes steps 31-35 from the state of step 30
VICTIM = "sup-L1d16-r10"
KILL_AT = 35


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    from lmforecast.cli.main import main

    out = tmp_path_factory.mktemp("zoo") / "mini"
    assert main(["zoo", "build", "--preset", "mini", "--out", str(out), "--quiet"]) == 0
    return out


def _stable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=[c for c in df.columns if c == "wall_s"])


def test_mini_tables_have_the_documented_schema(mini):
    z = load_zoo(mini)
    preset = get_preset("mini")
    assert list(z.runs["model"]) == [r.run_id for r in preset.runs]
    for col in ["N", "D", "C", "C_FN", "loss", "loss_prose", "loss_code", "loss_arith", "arith"]:
        assert z.runs[col].notna().all(), col
    # FLOPs by the package's own accounting
    assert (z.runs["C"] / (6 * z.runs["N"] * z.runs["D"])).sub(1).abs().max() < 1e-5
    assert (z.runs["C_FN"] > z.runs["C"]).all()  # attention and vocabulary terms add FLOPs
    # checkpoints: n_checkpoints per supervised/mixture run, the last equal to the final row
    ck = z.checkpoints
    kinds = z.runs.set_index("model")["kind"]
    assert set(ck["model"]) == set(z.runs["model"])
    for m, g in ck.groupby("model"):
        many = kinds[m] in ("supervised", "mixture")  # other kinds: the final evaluation only
        assert len(g) == (preset.n_checkpoints if many else 1) and g["final"].iloc[-1]
        final = z.runs.set_index("model").loc[m]
        assert g["loss"].iloc[-1] == pytest.approx(final["loss"], rel=1e-5)
    # distillation rows carry the teacher's measured loss
    d = z.distillation
    assert len(d) == 2 and d["L_T"].tolist() == pytest.approx(
        [z.runs.set_index("model").loc[t, "loss"] for t in d["teacher"]]
    )
    # salience: per-token losses for every final model, with character offsets
    texts = {t["text_id"]: t["text"] for t in z.texts()}
    recs = z.token_losses()
    assert {r["model"] for r in recs} == set(z.runs["model"])
    for r in recs:
        off = r["offsets"]
        assert off[0][0] == 0 and off[-1][1] == len(texts[r["text_id"]])
        assert len(off) == len(r["losses"]) and min(r["losses"]) >= 0
    meta = z.metadata
    assert meta["preset"] == "mini" and "torch" in meta["versions"] and meta["wall_s_total"] > 0
    assert set(z.scores["split"]) == {"train", "validation", "test"}


def test_killed_build_resumes_exactly_and_redoes_corrupt_checkpoints(mini, tmp_path, monkeypatch):
    out = tmp_path / "copy"
    shutil.copytree(mini, out)
    before = load_zoo(out)
    victim = VICTIM
    for name in ("result.json", "final.pt", "final.pt.sha256"):
        (out / "runs" / victim / name).unlink()
    kept = {p: p.stat().st_mtime_ns for p in (out / "runs").glob("*/result.json")}

    real = build_mod.train_run
    seen = {"n": 0}

    def killed_mid_run(*args, progress=None, **kw):
        def tick(n):
            seen["n"] += n
            if seen["n"] >= KILL_AT:
                raise KeyboardInterrupt

        return real(*args, progress=tick, **kw)

    monkeypatch.setattr(build_mod, "train_run", killed_mid_run)
    with pytest.raises(KeyboardInterrupt):
        build_mod.build_zoo("mini", out, progress=False)
    state = out / "runs" / victim / "state.pt"
    assert load_verified(state)["step"] == 30  # the last save before the kill
    monkeypatch.setattr(build_mod, "train_run", real)

    build_mod.build_zoo("mini", out, progress=False)  # resume from the saved state
    after = load_zoo(out)
    pd.testing.assert_frame_equal(_stable(after.runs), _stable(before.runs))
    pd.testing.assert_frame_equal(after.checkpoints, before.checkpoints)
    assert {p: p.stat().st_mtime_ns for p in kept} == kept  # finished runs were not retrained

    # a corrupt partial checkpoint is detected and the run redone from scratch, same result
    for name in ("result.json", "final.pt", "final.pt.sha256"):
        (out / "runs" / victim / name).unlink()
    shutil.copy(mini / "runs" / "sup-L1d24-r10" / "final.pt", state)  # wrong bytes
    (out / "runs" / victim / "state.pt.sha256").write_text("0" * 64)
    with pytest.warns(DomainWarning, match="corrupt or partial"):
        build_mod.build_zoo("mini", out, progress=False)
    again = load_zoo(out)
    pd.testing.assert_frame_equal(_stable(again.runs), _stable(before.runs))


def test_rerun_of_a_finished_build_is_a_no_op_and_show_reads_it(mini, cli):
    code, out, err = cli("zoo", "build", "--preset", "mini", "--out", mini, "--quiet", "--json")
    assert code == 0, err
    assert json.loads(out)["runs"] == len(get_preset("mini").runs)
    code, out, _ = cli("zoo", "show", mini, "--json")
    info = json.loads(out)
    assert code == 0 and info["preset"] == "mini" and info["runs"]["distilled"] == 2


def test_parallel_build_gives_the_serial_tables(mini, tmp_path, cli):
    # --jobs 2: forked workers, students after their teachers; every run depends only on
    # (seed, run, step) and its teacher's weights, so the tables equal the serial build's
    out = tmp_path / "mini-j2"
    # the runs that are nobody's teacher and repeat a kind the workers also train are there
    # finished, so the workers train seven: one run of every kind, both teachers (two
    # supervised runs at once) before their students, and the tokenizer
    (out / "runs").mkdir(parents=True)
    shutil.copy(mini / "build.json", out / "build.json")
    done = ("sup-L1d16-r10", "sup-L1d16-r30", "sup-L1d24-r30", "sup-L2d24-r30",
            "mix-L1d24-r10-c0.1", "byte-L1d24-r10")  # fmt: skip
    for run in done:
        shutil.copytree(mini / "runs" / run, out / "runs" / run)
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", out, "--jobs", "2", "--quiet")
    assert code == 0, err
    serial, parallel = load_zoo(mini), load_zoo(out)
    for name in ("runs", "checkpoints", "distillation", "scores"):
        pd.testing.assert_frame_equal(
            _stable(getattr(serial, name)), _stable(getattr(parallel, name)), check_exact=True
        )
    assert serial.token_losses() == parallel.token_losses()
    # a bad --jobs is refused before anything is written
    bad = tmp_path / "bad"
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", bad, "--jobs", "0")
    assert code == 2 and "--jobs" in err and "0" in err and not bad.exists()


class _Payload:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_resume_refuses_a_crafted_state_with_a_matching_sidecar(mini, tmp_path, cli):
    # security: resuming must never execute code found in the build folder
    from lmforecast.zoo.train import save_verified

    out = tmp_path / "crafted"
    shutil.copytree(mini, out)
    victim = VICTIM
    for name in ("result.json", "final.pt", "final.pt.sha256"):
        (out / "runs" / victim / name).unlink()
    marker = tmp_path / "PWNED"
    save_verified({"run_id": victim, "x": _Payload(marker)}, out / "runs" / victim / "state.pt")
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", out, "--quiet")
    assert code == 2 and not marker.exists()
    assert err.count("\n") == 1 and "state.pt: refused to load" in err
