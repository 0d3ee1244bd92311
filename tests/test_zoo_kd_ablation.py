"""App. G knobs of the zoo's distilled runs (lambda, tau, KL direction) and their ablation."""

from dataclasses import replace

import numpy as np
import pytest

from lmforecast.errors import InputError
from lmforecast.zoo.presets import RunSpec, get_preset

torch = pytest.importorskip("torch")


def _dst(**kw):
    return RunSpec("s", "distilled", "bpe", 1, 16, 1000, teacher="t", **kw)


def test_knobs_are_validated_with_one_line_errors():
    for kw, msg in (
        ({"kd_lambda": 1.5}, "kd_lambda must be in \\[0, 1\\], got 1.5"),
        ({"kd_lambda": -0.1}, "kd_lambda must be in"),
        ({"kd_lambda": float("nan")}, "kd_lambda must be in"),
        ({"kd_tau": 0.0}, "kd_tau must be > 0, got 0.0"),
        ({"kd_tau": float("inf")}, "kd_tau must be > 0"),
        ({"kd_kl": "sideways"}, "kd_kl must be one of forward, reverse"),
    ):
        with pytest.raises(InputError, match=msg) as e:
            _dst(**kw)
        assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="need a teacher"):
        RunSpec("s", "supervised", "bpe", 1, 16, 1000, kd_tau=2.0)
    assert _dst(kd_lambda=0, kd_tau=0.5, kd_kl="reverse").kd_lambda == 0


def test_default_knobs_leave_the_preset_hash_and_run_ids_unchanged():
    for name in ("full", "mini"):
        p = get_preset(name)
        explicit = replace(
            p, runs=tuple(replace(r, kd_lambda=1.0, kd_tau=1.0, kd_kl="forward") for r in p.runs)
        )
        assert explicit.config_hash() == p.config_hash()
        assert all("kd_tau" not in r for r in p.to_dict()["runs"])
        changed = replace(p, runs=tuple(replace(r, kd_tau=2.0) if r.teacher else r for r in p.runs))
        assert changed.config_hash() != p.config_hash()


def test_objectives_against_hand_computation():
    """Eq. 6 (forward, cross-entropy form), reverse KL (App. G.5) and Eq. 7's mixing."""
    from lmforecast.zoo.train import distillation_loss, kd_objective, reverse_distillation_loss

    g = torch.Generator().manual_seed(0)
    zs, zt = torch.randn(5, 7, generator=g), torch.randn(5, 7, generator=g)
    s, t = zs.double().numpy(), zt.double().numpy()

    def sm(z, tau):
        e = np.exp(z / tau - (z / tau).max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    for tau in (0.5, 1.0, 2.0):
        ps, pt = sm(s, tau), sm(t, tau)
        fwd = -(tau**2) * (pt * np.log(ps)).sum(-1).mean()
        rev = tau**2 * (ps * (np.log(ps) - np.log(pt))).sum(-1).mean()
        assert float(distillation_loss(zs, zt, tau)) == pytest.approx(fwd, rel=1e-5)
        assert float(reverse_distillation_loss(zs, zt, tau)) == pytest.approx(rev, rel=1e-5)
    assert float(reverse_distillation_loss(zt, zt, 2.0)) == pytest.approx(0.0, abs=1e-6)
    ntp = torch.tensor(3.0)
    kd = float(distillation_loss(zs, zt, 1.0))
    for lam in (0.0, 0.5, 1.0):
        got = float(kd_objective(_dst(kd_lambda=lam), zs, zt, ntp))
        assert got == pytest.approx((1 - lam) * 3.0 + lam * kd, rel=1e-6)


@pytest.mark.slow
def test_kd_ablation_on_the_mini_preset(tmp_path):
    """One mini teacher, six tiny students (~25 s): lambda in {0, 0.5, 1} at tau = 1, tau in
    {0.5, 2} at lambda = 1, reverse KL. Measured (docs/zoo.md): the paper's lambda = 1, tau = 1
    beats lambda = 0 and 0.5 and tau = 0.5; tau = 2 is within 0.005 nats of it; reverse KL is
    far worse (Table 7's direction). Asserted: what would fail for a wrong objective."""
    from lmforecast.zoo.kd_ablation import kd_ablation

    df = kd_ablation(tmp_path / "abl", "mini")
    assert len(df) == 6 and np.isfinite(df["loss"]).all()
    assert df["N_S"].nunique() == 1 and df["D_S"].nunique() == 1 and df["L_T"].nunique() == 1
    paper = df[(df.kd_lambda == 1) & (df.kd_tau == 1) & (df.kd_kl == "forward")]
    assert list(paper["model"]) == ["dst-L1d16-b10-Tsup-L1d24-r10"]  # the mini zoo's run id
    assert df["model"].is_unique
    by = df.set_index(["kd_lambda", "kd_tau", "kd_kl"])["delta_vs_paper"]
    assert by[(0.0, 1.0, "forward")] > 0.005  # distillation beats next-token prediction
    assert by[(1.0, 1.0, "reverse")] > 0.2  # forward KL >> reverse KL (Table 7: 0.28 nats)
    assert by[(1.0, 0.5, "forward")] > 0.05  # a sharp teacher distribution hurts
    assert abs(by[(1.0, 2.0, "forward")]) < 0.05
