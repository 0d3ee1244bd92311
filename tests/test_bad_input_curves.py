"""Bad input for `lmforecast curves` and the curves table of `runs import`: exit status 2,
exactly one stderr line naming the run, row and column (or the flag), and no new or changed file
in the working folder."""

from __future__ import annotations

import json
import shlex
import shutil

import pytest

from lmforecast import examples

GOOD = "run,step,lr,loss\na,100,1e-3,3.0\na,200,1e-3,2.9\na,300,5e-4,2.8\na,400,1e-4,2.7\n"

#: name -> content of the malformed tables (curves and schedules)
FILES = {
    "back.csv": "run,step,lr,loss\na,10,1e-3,3\na,20,1e-3,2.9\na,15,1e-3,2.8\n",
    "neg_lr.csv": "run,step,lr,loss\na,10,1e-3,3\na,20,-1e-3,2.9\n",
    "inf_lr.csv": "run,step,lr,loss\na,10,1e-3,3\na,20,inf,2.9\n",
    "no_lr.csv": "run,step,lr,loss\na,10,1e-3,3\na,20,1e-3,2.9\nb,10,,3\nb,20,,2.9\n",
    "dup.csv": "run,step,lr,loss\na,10,1e-3,3\na,10,1e-3,2.9\n",
    "some_n.csv": "run,step,lr,loss,N\na,10,1e-3,3,1e7\na,20,1e-3,2.9,1e7\nb,10,1e-3,3,\n",
    "no_loss_col.csv": "run,step,lr\na,10,1e-3\n",
    "text_lr.csv": "run,step,lr,loss\na,10,fast,3\n",
    "sched_no_step.csv": "run,step,lr\na,100,1e-3\nb,,1e-3\n",
    "sched_back.csv": "run,step,lr\na,300,1e-3\na,200,1e-3\n",
    "sched_neg.csv": "run,step,lr\nx,100,-1e-3\n",
    "sched_dup.csv": "run,step,lr\nx,100,1e-3\nx,100,1e-3\n",
    "sched_empty.csv": "run,step,lr\n",
    "sched_some_n.csv": "run,step,lr,N\nx,100,1e-3,2.5e7\ny,100,1e-3,\n",
    "sched_no_lr_col.csv": "run,step\nx,100\n",
    "good.csv": GOOD,
}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    from lmforecast.cli.main import main

    d = tmp_path_factory.mktemp("curves_bad")
    for name in ("curves.csv", "schedule.csv"):
        shutil.copy(examples.path(f"curves/{name}"), d / name)
    for name, text in FILES.items():
        (d / name).write_text(text)
    (d / "not_a_fit.json").write_text(json.dumps({"kind": "supervised", "params": {}}))
    (d / "lr.jsonl").write_text("".join(
        json.dumps({"step": s, "tokens": s, "loss": 3 - s / 100}) + "\n" for s in range(1, 5)
    ))  # fmt: skip
    assert main(["curves", "fit", "--runs", str(d / "curves.csv"), "--out", str(d / "fit.json"),
                 "--quiet"]) == 0  # fmt: skip
    return d


@pytest.fixture
def work(base, tmp_path, monkeypatch):
    w = tmp_path / "w"
    shutil.copytree(base, w)
    monkeypatch.chdir(w)
    return w


PRED = "curves predict --fit fit.json --schedule"
PLAN = "curves plan --fit fit.json"
CASES = [
    # the curves table (curves fit)
    ("steps not increasing", "curves fit --runs back.csv --out o.json",
     "run 'a' row 3: column 'step': step 15 does not increase"),
    ("negative lr", "curves fit --runs neg_lr.csv --out o.json",
     "run 'a' row 2: column 'lr': -0.001 is negative"),
    ("non-finite lr", "curves fit --runs inf_lr.csv --out o.json",
     "run 'a' row 2: column 'lr': inf is not finite"),
    ("losses but no lr", "curves fit --runs no_lr.csv --out o.json",
     "run 'b' row 3: column 'lr'"),
    ("duplicate run and step", "curves fit --runs dup.csv --out o.json",
     "run 'a' row 2: column 'step': step 10 duplicates row 1"),
    ("N for some runs only", "curves fit --runs some_n.csv --out o.json",
     "run 'b' row 3: column 'N'"),
    ("no loss column", "curves fit --runs no_loss_col.csv --out o.json", "'loss'"),
    ("text lr", "curves fit --runs text_lr.csv --out o.json", "column 'lr': 'fast'"),
    ("too few points", "curves fit --runs good.csv --out o.json", "at least"),
    ("fit unknown law", "curves fit --runs curves.csv --law cubic", "--law"),
    ("fit one resample", "curves fit --runs curves.csv --bootstrap 1", "--bootstrap"),
    ("fit out not json", "curves fit --runs curves.csv --out fit.csv", "fit.csv"),
    ("fit out is the input", "curves fit --runs curves.csv --out curves.csv", "is also an input"),
    ("fit out folder missing", "curves fit --runs curves.csv --out nope/f.json", "nope"),
    ("fit runs missing", "curves fit --runs missing.csv --out o.json", "missing.csv"),
    ("fit runs a folder", "curves fit --runs . --out o.json", "folder"),
    # schedules (curves predict)
    ("schedule run with no step", f"{PRED} sched_no_step.csv", "run 'b' row 2: column 'step'"),
    ("schedule steps back", f"{PRED} sched_back.csv", "run 'a' row 2: column 'step'"),
    ("schedule negative lr", f"{PRED} sched_neg.csv", "row 1: column 'lr'"),
    ("schedule duplicate step", f"{PRED} sched_dup.csv", "row 2: column 'step'"),
    ("schedule without rows", f"{PRED} sched_empty.csv", "no rows"),
    ("schedule N for some runs only", f"{PRED} sched_some_n.csv", "run 'y' row 2: column 'N'"),
    ("schedule without lr column", f"{PRED} sched_no_lr_col.csv", "'lr'"),
    ("schedule missing", f"{PRED} missing.csv", "missing.csv"),
    ("predict fit missing", "curves predict --fit none.json --schedule schedule.csv",
     "none.json"),
    ("predict fit of another method",
     "curves predict --fit not_a_fit.json --schedule schedule.csv", "not_a_fit.json"),
    ("predict level above 1", f"{PRED} schedule.csv --level 1.5", "--level"),
    ("predict out png", f"{PRED} schedule.csv --out fc.png", "fc.png"),
    ("predict out is the schedule", f"{PRED} schedule.csv --out schedule.csv", "is also an input"),
    ("predict label without ledger", f"{PRED} schedule.csv --label x", "--label"),
    ("predict ledger not a ledger", f"{PRED} schedule.csv --ledger curves.csv --label x",
     "curves.csv"),
    # planning
    ("plan zero steps", f"{PLAN} --steps 0", "--steps"),
    ("plan too many steps", f"{PLAN} --steps 1e12", "--steps"),
    ("plan steps not whole", f"{PLAN} --steps 10.5", "--steps"),
    ("plan unknown run", f"{PLAN} --steps 1000 --run cosine8k", "'cosine8k'"),
    ("plan negative peak", f"{PLAN} --steps 1000 --peak-lr -1", "--peak-lr"),
    ("plan floor above peak", f"{PLAN} --steps 1000 --peak-lr 1e-4 --floor-lr 1e-3",
     "floor lr"),
    ("plan warmup too long", f"{PLAN} --steps 1000 --warmup 5000", "warmup"),
    ("plan warmup not whole", f"{PLAN} --steps 1000 --warmup 10.5", "--warmup"),
    ("plan out csv", f"{PLAN} --steps 1000 --out plan.csv", "plan.csv"),
    ("plan exp cooldown to 0", f"{PLAN} --steps 1000 --decay exp --floor-lr 0", "floor lr"),
    ("plan unknown decay", f"{PLAN} --steps 1000 --decay cosine", "--decay"),
    ("plan ledger refused", f"{PLAN} --steps 1000 --ledger l.db", "--ledger"),
    # runs import: the curves table
    ("curves-out without a learning rate", "runs import lr.jsonl --format jsonl --params 1e6 "
     "--out r.csv --curves-out c.csv", "learning-rate column"),
    ("curves-out is --out", "runs import lr.jsonl --format jsonl --params 1e6 --out r.csv "
     "--curves-out r.csv", "--curves-out"),
    ("curves-out not csv", "runs import lr.jsonl --format jsonl --params 1e6 --out r.csv "
     "--curves-out c.json", "c.json"),
    ("lr column missing", "runs import lr.jsonl --format jsonl --params 1e6 --out r.csv "
     "--curves-out c.csv --lr learning_rate", "'learning_rate' (--lr)"),
]  # fmt: skip


def _snapshot(folder):
    return {str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in sorted(folder.rglob("*"))}  # fmt: skip


@pytest.mark.parametrize("cid, argv, needle", CASES, ids=[c[0] for c in CASES])
def test_one_line_exit_2_nothing_written(cid, argv, needle, work, cli):
    before = _snapshot(work)
    code, out, err = cli(*shlex.split(argv))
    errors = [ln for ln in err.splitlines() if not ln.startswith("lmforecast: warning:")]
    assert code == 2, (cid, err, out[:300])
    assert len(errors) == 1 and "error" in errors[0] and "Traceback" not in err, err
    assert needle in errors[0], errors[0]
    assert "np.float64" not in err
    assert _snapshot(work) == before, "the command wrote or changed a file"


def test_a_forecast_far_past_the_fitted_steps_and_below_the_fitted_lr_says_by_how_much(work, cli):
    sched = "run,step,lr,N\nfar,400,3e-4,2.5e7\nfar,40000,3e-4,2.5e7\nfar,48000,3e-6,2.5e7\n"
    (work / "far.csv").write_text(sched)
    code, out, err = cli("curves", "predict", "--fit", "fit.json", "--schedule", "far.csv",
                         "--json")  # fmt: skip
    assert code == 0, err
    notes = " ".join(json.loads(out)["notes"])
    assert "48000 is 6.0x the model's last fitted step 8000" in notes
    assert "below the lowest fitted learning rate" in notes


def test_report_refuses_a_malformed_curves_table_before_building(work, cli):
    before = _snapshot(work)
    code, _, err = cli("report", "--out", "rep", "--sections", "curves", "--curves", "back.csv",
                       "--quiet")  # fmt: skip
    assert code == 2 and err.count("\n") == 1
    assert "--curves back.csv: run 'a' row 3: column 'step'" in err
    assert _snapshot(work) == before
