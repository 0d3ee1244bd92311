"""Functional forms of FLP / FLP-M (Chen et al., "Scaling Laws for Predicting Downstream
Performance in LLMs").

- `flp-power`: L(C) = (C/C_N)^alpha_N (Eq. 1, FLOPs -> loss); also the FP baseline
  P(C) = (C/C_M)^alpha_M (Eq. 3) and the Llama-3 stage 1 FLOPs -> NLL (App. D). Fitted on log y.
- `flp-linear`: P(L) = w0 + w1 L (Eq. 2, loss -> performance), fitted on P.
- `flp-gpt4`: -log P(C) = (C/C_M)^alpha_M with P a fraction (App. C, Eq. 6, sign read as in
  Achiam et al. 2023; see docs/flp.md). Observations are scores in percentage points.
- `flp-sigmoid`: P(nll) = r + (100 - r) sigmoid(-k (nll - m)) (Llama-3 stage 2, App. D).
- `flpm-m1` ... `flpm-m4`: FLOPs per source -> domain loss (Table 3; M4 = Eq. 5), generalised
  from (general, code) to K sources. Source compute is floored at `ratio_floor` x total compute
  in the terms that take a single source's own compute (M2, M4), so ratio-0 runs are defined.
"""

from __future__ import annotations

import numpy as np

from . import register_law
from .base import Law, LinearBlock, Parameter, safe_log


class PowerLaw(Law):
    """y(C) = (C/C_N)^alpha, fitted on log y = alpha (log C - log C_N) (Eq. 1 / Eq. 3)."""

    name = "flp-power"
    inputs = ("C",)
    parameters = (
        Parameter("log_C_N", -200.0, 2000.0, "C_N", "exp"),
        Parameter("alpha", -5.0, 5.0),
    )
    citation = "Chen et al., Eq. 1 (FLOPs -> loss) and Eq. 3 (FP baseline)"

    def default_grid(self):
        return {"log_C_N": np.array([0.0, 20.0, 40.0, 80.0, 160.0, 400.0]), "alpha": _ALPHAS}

    def predict_target(self, theta, X):
        theta = np.atleast_2d(theta)
        return theta[:, 1:2] * (np.log(X["C"])[None, :] - theta[:, 0:1])

    def predict_and_jacobian(self, theta, X):
        theta = np.atleast_2d(theta)
        lc = np.log(X["C"])[None, :]
        d = lc - theta[:, 0:1]
        a = theta[:, 1:2]
        J = np.stack([np.broadcast_to(-a, d.shape), d], axis=-1)
        return a * d, J

    def jacobian(self, theta, X):
        return self.predict_and_jacobian(theta, X)[1]

    def linear_blocks(self, X):
        """At fixed alpha, y = K C^alpha is linear in K = C_N^-alpha >= 0 (variable projection,
        fitting/varpro.py); observations are exp(target) (-log P for `flp-gpt4`)."""
        lc = np.log(np.asarray(X["C"], float))

        def basis(nl, X):
            return np.exp(nl[:, :1] * lc)[..., None]

        def theta(nl, c, X):
            a = nl[:, 0]
            return np.stack([-safe_log(c[:, 0]) / a, a], axis=-1)

        grid = np.concatenate([-_VP_ALPHAS[::-1], _VP_ALPHAS])[:, None]
        return [LinearBlock(grid, basis, theta)]

    @staticmethod
    def ols_start(C, y) -> np.ndarray:
        """Closed-form least squares on log y = a log C + b, as a fit-space start."""
        lc, ly = np.log(np.asarray(C, float)), np.log(np.asarray(y, float))
        a, b = np.polyfit(lc, ly, 1)
        if abs(a) < 1e-9:
            a = -1e-9 if a <= 0 else 1e-9
        return np.array([-b / a, a])


_VP_ALPHAS = np.geomspace(1e-4, 2.0, 60)
_ALPHAS = np.array([-1.0, -0.3, -0.1, -0.03, 0.03, 0.1, 0.3, 1.0])


class GPT4Form(PowerLaw):
    """-log(P/100) = (C/C_M)^alpha_M (App. C, Eq. 6), fitted on log(-log(P/100))."""

    name = "flp-gpt4"
    citation = "Chen et al., App. C, Eq. 6 (Achiam et al. 2023 form; sign as -log P)"

    def target_of(self, y):
        p = np.asarray(y, float) / 100.0
        return np.log(-np.log(p))

    def from_target(self, t):
        return 100.0 * np.exp(-np.exp(t))


class LinearMap(Law):
    """P(L) = w0 + w1 L (Eq. 2), least squares on P."""

    name = "flp-linear"
    inputs = ("L",)
    parameters = (Parameter("w0", -1e6, 1e6), Parameter("w1", -1e6, 1e6))
    target = "identity"
    citation = "Chen et al., Eq. 2 (loss -> performance)"

    def default_grid(self):
        return {"w0": np.array([0.0, 100.0, 300.0]), "w1": np.array([-100.0, -10.0, 0.0])}

    def predict_target(self, theta, X):
        theta = np.atleast_2d(theta)
        return theta[:, 0:1] + theta[:, 1:2] * X["L"][None, :]

    def jacobian(self, theta, X):
        theta = np.atleast_2d(theta)
        L = np.broadcast_to(X["L"][None, :], (theta.shape[0], X["L"].size))
        return np.stack([np.ones_like(L), L], axis=-1)

    @staticmethod
    def ols_start(L, P) -> np.ndarray:
        w1, w0 = np.polyfit(np.asarray(L, float), np.asarray(P, float), 1)
        return np.array([w0, w1])


class SigmoidMap(Law):
    """P(nll) = r + (100 - r) / (1 + exp(k (nll - m))) (Llama-3 stage 2, App. D)."""

    name = "flp-sigmoid"
    inputs = ("nll",)
    parameters = (Parameter("log_k", -10.0, 10.0, "k", "exp"), Parameter("m", -50.0, 50.0))
    target = "identity"
    citation = "Chen et al., App. D (Dubey et al. 2024 two-stage approach)"

    def __init__(self, chance: float = 0.0) -> None:
        self.chance = float(chance)

    def default_grid(self):
        return {"log_k": np.linspace(-2.0, 3.0, 11), "m": np.linspace(0.0, 5.0, 21)}

    def predict_target(self, theta, X):
        theta = np.atleast_2d(theta)
        k = np.exp(theta[:, 0:1])
        z = k * (X["nll"][None, :] - theta[:, 1:2])
        r = self.chance
        return r + (100.0 - r) / (1.0 + np.exp(np.clip(z, -500, 500)))


# ---- FLP-M: FLOPs per source -> domain loss (Table 3), K sources ----------------------------


class _MixtureLaw(Law):
    """Base of the M1-M4 forms: inputs are one compute column per source, `C_<source>`."""

    uses_total = True
    uses_each = False
    uses_weights = False

    def __init__(self, sources=("general", "code"), ratio_floor: float = 1e-3) -> None:
        self.sources = tuple(str(s) for s in sources)
        self.ratio_floor = float(ratio_floor)
        self.inputs = tuple(f"C_{s}" for s in self.sources)
        params: list[Parameter] = []
        if self.uses_weights:
            params += [Parameter(f"log_w_{s}", -30.0, 30.0, f"w_{s}", "exp") for s in self.sources]
        if self.uses_total:
            params += [
                Parameter("log_C_T", -200.0, 2000.0, "C_T", "exp"),
                Parameter("alpha_C", -5, 5),
            ]
        if self.uses_each:
            for s in self.sources:
                params += [
                    Parameter(f"log_C_{s}", -200.0, 2000.0, f"C_{s}", "exp"),
                    Parameter(f"alpha_{s}", -5.0, 5.0),
                ]
        self.parameters = tuple(params)

    def _logs(self, X):
        C = np.stack([np.asarray(X[k], float) for k in self.inputs])  # (K, n)
        tot = C.sum(axis=0)
        each = np.log(np.maximum(C, self.ratio_floor * tot))
        return C, np.log(tot), each

    def default_grid(self):
        K = len(self.sources)
        g = {}
        for p in self.parameters:
            if p.name.startswith("log_w_"):
                g[p.name] = np.array([0.0])
            elif p.name == "log_C_T":
                g[p.name] = np.array([40.0, 100.0, 400.0])
            elif p.name == "alpha_C":
                g[p.name] = _ALPHAS
            elif p.name.startswith("log_C"):
                g[p.name] = np.array([40.0, 100.0]) if K <= 3 else np.array([60.0])
            else:
                g[p.name] = np.array([-0.05, 0.0, 0.05]) if K <= 3 else np.array([0.0])
        return g

    def linear_start(self, X, y) -> np.ndarray:
        """Least squares in log space (the M1/M2/M4 forms are linear in the exponents and one
        combined intercept), mapped to a fit-space start with all constants equal."""
        _, ltot, each = self._logs(X)
        feats = []
        if self.uses_total:
            feats.append(ltot)
        if self.uses_each:
            feats.extend(each)
        A = np.column_stack(feats + [np.ones_like(ltot)])
        # rcond drops directions below the rounding noise of tabulated FLOPs (e.g. C_k = r C
        # written with 6 significant digits): min-norm along an exactly collinear design
        coef = np.linalg.lstsq(A, np.log(np.asarray(y, float)), rcond=1e-6)[0]
        alphas, b = coef[:-1], coef[-1]
        s = alphas.sum()
        c = float(np.clip(-b / s, -150.0, 1500.0)) if abs(s) > 1e-9 else 60.0
        theta = []
        if self.uses_weights:
            theta += [0.0] * len(self.sources)
        i = 0
        if self.uses_total:
            theta += [c, alphas[0]]
            i = 1
        if self.uses_each:
            for k in range(len(self.sources)):
                theta += [c, alphas[i + k]]
        return np.array(theta, float)

    def predict_and_jacobian(self, theta, X):
        theta = np.atleast_2d(theta)
        S = theta.shape[0]
        C, ltot, each = self._logs(X)
        n = ltot.size
        out = np.zeros((S, n))
        cols = []
        i = 0
        K = len(self.sources)
        if self.uses_weights:
            lw = theta[:, :K]
            i = K
            m = lw.max(axis=1, keepdims=True)
            wc = np.exp(lw - m) @ C  # (S, n): sum_k w_k C_k / exp(m)
            lmix = np.log(wc) + m
            lC, a = theta[:, i : i + 1], theta[:, i + 1 : i + 2]
            d = lmix - lC
            out += a * d
            share = (np.exp(lw - m)[:, :, None] * C[None]) / wc[:, None, :]  # (S, K, n)
            cols += [a * share[:, k] for k in range(K)]
            cols += [np.broadcast_to(-a, d.shape), d]
            i += 2
        elif self.uses_total:
            lC, a = theta[:, 0:1], theta[:, 1:2]
            d = ltot[None, :] - lC
            out += a * d
            cols += [np.broadcast_to(-a, d.shape), d]
            i = 2
        if self.uses_each:
            for k in range(K):
                lC, a = theta[:, i : i + 1], theta[:, i + 1 : i + 2]
                d = each[k][None, :] - lC
                out += a * d
                cols += [np.broadcast_to(-a, d.shape), d]
                i += 2
        return out, np.stack(cols, axis=-1)

    def predict_target(self, theta, X):
        return self.predict_and_jacobian(theta, X)[0]

    def jacobian(self, theta, X):
        return self.predict_and_jacobian(theta, X)[1]

    def identified(self, theta) -> dict[str, float]:
        """Exponents and the combined log-intercept: the constants C_T, C_k are not separately
        identified (log L = sum_j alpha_j log x_j - sum_j alpha_j log C_j), their sum is."""
        nat = self.to_natural(theta)
        th = dict(zip(self.param_names, np.asarray(theta, float).ravel()))
        out = {k: v for k, v in nat.items() if k.startswith("alpha")}
        icpt = 0.0
        for name in self.param_names:
            if name.startswith("log_C"):
                a = th["alpha_C" if name == "log_C_T" else "alpha_" + name[len("log_C_") :]]
                icpt -= a * th[name]
        out["log_intercept"] = icpt
        return out


class M1(_MixtureLaw):
    """M1 (Table 3): L = ((sum_k C_k)/C_T)^alpha_C."""

    name = "flpm-m1"
    citation = "Chen et al., Table 3, M1"


class M2(_MixtureLaw):
    """M2 (Table 3, typo C^G/C^G read as C^G/C_G): L = prod_k (C_k/C_k0)^alpha_k."""

    name = "flpm-m2"
    uses_total, uses_each = False, True
    citation = "Chen et al., Table 3, M2 (printed C^G/C^G read as C^G/C_G)"


class M3(_MixtureLaw):
    """M3 (Table 3): L = ((sum_k w_k C_k)/C_T)^alpha_C, w_k > 0."""

    name = "flpm-m3"
    uses_weights = True
    citation = "Chen et al., Table 3, M3"


class M4(_MixtureLaw):
    """M4 = Eq. 5: L = ((sum_k C_k)/C_T)^alpha_C prod_k (C_k/C_k0)^alpha_k."""

    name = "flpm-m4"
    uses_each = True
    citation = "Chen et al., Eq. 5 (= Table 3, M4)"


register_law("flp-power")(PowerLaw)
register_law("flp-gpt4")(GPT4Form)
register_law("flp-linear")(LinearMap)
register_law("flp-sigmoid")(SigmoidMap)
register_law("flpm-m1")(M1)
register_law("flpm-m2")(M2)
register_law("flpm-m3")(M3)
register_law("flpm-m4")(M4)

MIXTURE_FORMS = {"M1": "flpm-m1", "M2": "flpm-m2", "M3": "flpm-m3", "M4": "flpm-m4"}
