"""The Capability Salience Vector estimator (Ge, Xing et al., Sec. 3 and Algorithm 2).

- Eq. 1: C_m = (1/N_c) sum_{s,i} w_{s,i} l_{m,s,i}, with l the model's losses mapped to the
  scoring LM's tokens (Algorithm 1) and N_c the number of characters of the whole text.
- Eq. 2: A = gamma + (1 - gamma) sigmoid(alpha (C - beta))  (`laws.salience`), with A and gamma
  fractions as the paper writes them.
- Eq. 3: w = act(H theta + b), a linear layer plus a positivity-keeping activation (softplus by
  default, sigmoid optional) on cached final hidden states H.
- Algorithm 2: alternate (i) Levenberg-Marquardt on alpha, beta with theta fixed (Eq. 4) and
  (ii) one Adam (or SGD) step on theta with alpha, beta fixed (Eq. 5); keep the parameters with
  the lowest validation-model MSE.

All gradients are analytic numpy: dJ/dtheta = H^T [act'(z) * (L^T dJ/dC) / N_c].

Units: scores and the chance level are percentage points (0-100) at the public boundary, as
every estimator of the package takes them (`lmforecast.scores`); a score table in fractions is
converted at the door (``score_unit``). Eq. 2, Eq. 4-5 and Algorithm 2 run on fractions inside,
unchanged, and forecasts, intervals and MSEs come back in points (points^2 for MSEs).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ..errors import InputError, fmt_value, not_fitted
from ..estimator import Estimator, point
from ..fitting.result import FitResult
from ..laws.salience import lm_fit
from ..params import CHANCE_POINTS, check
from ..scores import check_unit, fraction, scale_of
from ..store import Checker
from .law import bootstrap_law, eq2_interval, fit_salience_sigmoid, residual_scale, sigmoid_law

ACTIVATIONS = ("softplus", "sigmoid")
OPTIMIZERS = ("adam", "sgd")
PRESETS = {
    # Sec. 3 / 4.1: "minimizing the MSE loss ... using SGD", "learning rate of 1e-3", "most tasks
    # converged ... within 300 steps". On hashed n-gram features (and the zoo) SGD at that rate
    # barely moves theta in 300 steps (docs/salience.md), hence Adam by default.
    "paper": {"optimizer": "sgd", "lr": 1e-3, "n_steps": 300},
    "default": {"optimizer": "adam", "lr": 1e-3, "n_steps": 300},
}


def preset_options(name: str | None, **overrides) -> dict:
    """Optimiser settings of preset `name` ("default" when None), overridden by the non-None
    `overrides` (optimizer, lr, n_steps); the preset's name is returned under "preset"."""
    key = "default" if name is None else name
    if key not in PRESETS:
        raise InputError(f"--preset (preset=) must be one of {', '.join(PRESETS)}, got {name!r}")
    out = dict(PRESETS[key])
    out.update({k: v for k, v in overrides.items() if v is not None})
    out["preset"] = key
    return out


def split_scores(
    values, unit: str = "auto", what: str = "scores"
) -> tuple[np.ndarray, np.ndarray, float]:
    """(fractions, points, scale) of a score column in `unit` ("auto", "points" or "fraction";
    `scores.scale_of` reads an all-[0, 1] column as fractions under "auto"). The fractions feed
    Eq. 2 and Algorithm 2 and the points are what a fit reports: a fraction column gives its
    fractions as they are (and x 100 for the points), a points column its points as they are
    (and / 100 for the fractions), so no value takes a round trip through the other unit."""
    v = np.asarray(values, dtype=float)
    scale = scale_of(v, unit, what)
    return (v if scale == 100.0 else v / 100.0), v * scale, scale


def fraction_chance_hint(chance: float, scale: float, what: str = "chance") -> None:
    """Refuse a chance level in (0, 1) given with scores in fractions: the chance level is in
    points, so 0.25 would be a quarter of a point, and a fraction-scored table makes it far
    likelier that 0.25 meant 25% (a chance level of exactly 1 can only be a point, 0 is 0 in
    either unit)."""
    if scale == 100.0 and 0.0 < chance < 1.0:
        raise InputError(
            f"{what} {chance:g} is in points (0-100) but the scores are fractions: "
            f"for a chance of {100 * chance:g}% give {what}{' ' if what.startswith('-') else '='}"
            f"{100 * chance:g}"
        )


def _act(z: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(activation, derivative) of the head's non-linearity."""
    s = expit(z)
    if kind == "softplus":
        return np.logaddexp(0.0, z), s
    return s, s * (1.0 - s)


def _inverse_act(w: float, kind: str) -> float:
    if kind == "softplus":
        return float(np.log(np.expm1(w)))
    return float(np.log(w / (1.0 - w)))


def _matvec(H, v: np.ndarray) -> np.ndarray:
    """H @ v in H's own float precision (float32 hidden states are not copied to float64)."""
    dt = H.dtype if H.dtype in (np.float32, np.float64) else np.float64
    return np.asarray(H @ v.astype(dt, copy=False), dtype=float).ravel()


def _grad_z(C, A, alpha_beta, gamma, L, n_chars, dw) -> tuple[float, np.ndarray]:
    """Eq. 5 MSE over the rows of L and its gradient in the head's pre-activations z."""
    a, b = float(alpha_beta[0]), float(alpha_beta[1])
    s = expit(a * (C - b))
    r = gamma + (1 - gamma) * s - A
    gC = 2.0 / len(A) * r * (1 - gamma) * s * (1 - s) * a
    return float(np.mean(r**2)), (L.T @ gC) / n_chars * dw


def head_objective(
    theta: np.ndarray,
    bias: float,
    H,
    L: np.ndarray,
    A: np.ndarray,
    n_chars: float,
    alpha_beta,
    gamma: float,
    activation: str = "softplus",
    *,
    HT=None,
    l2: float = 0.0,
) -> tuple[float, np.ndarray, float]:
    """Eq. 5 objective (mean squared error over the models of L) and its analytic gradient
    in (theta, bias), with alpha, beta fixed: J = mean_m (A(C_m) - A_hat_m)^2 + l2 |theta|^2."""
    w, dw = _act(_matvec(H, theta) + bias, activation)
    J, gz = _grad_z(L @ w / n_chars, A, alpha_beta, gamma, L, n_chars, dw)
    g_theta = _matvec(H.T if HT is None else HT, gz) + 2 * l2 * theta
    return J + float(l2 * theta @ theta), g_theta, float(gz.sum())


class CapabilitySalience(Estimator):
    """Learn per-token weights W whose weighted loss predicts a task's accuracy (Algorithm 2).

    Units: `chance`, the scores `fit` takes (in `score_unit`), and the forecasts, intervals and
    MSEs it returns are percentage points (0-100; MSEs in points^2), the package's one score
    unit (`lmforecast.scores`). Eq. 2 is written in fractions (A, gamma in [0, 1]) and runs on
    fractions inside: ``gamma_ = chance / 100``; nothing in the equations is rescaled.

    Parameters
    ----------
    chance : the task's chance level in points, in [0, 100) (gamma of Eq. 2 times 100, the
        paper's random-guess accuracy; not fitted). With scores given in fractions a chance in
        (0, 1) is refused: it would be under one point, and 0.25 most likely meant 25.
    score_unit : unit of the scores given to `fit`: "auto" (default: a column whose finite
        values all lie in [0, 1] is read as fractions, any other as points), "points" or
        "fraction" (`lmforecast.scores.UNITS`).
    activation : "softplus" (default) or "sigmoid"; keeps weights positive (METHODS.md 1.7.1).
    lr, n_steps : learning rate (paper: 1e-3) and number of alternations (paper: ~300).
    optimizer : "adam" (default) or "sgd" (the paper's; `from_preset("paper", ...)` gives its
        whole setting).
    l2 : optional ridge penalty on theta (0: none, as in the paper).
    init_weight : initial weight of every token (theta = 0, bias = act^-1(init_weight)), so
        optimisation starts from the character-normalised all-token loss.
    bootstrap, seed : resamples of the train models refitting alpha, beta with W fixed (the
        intervals of `predict_interval`; 0: none).
    """

    @classmethod
    def from_preset(cls, name: str, chance: float, **options) -> CapabilitySalience:
        """`CapabilitySalience` with the optimiser of preset `name` ("paper": SGD, lr 1e-3,
        300 steps as in Sec. 3/4.1; "default": Adam, lr 1e-3, 300 steps); `options` override."""
        opts = preset_options(
            name, **{k: options.pop(k, None) for k in ("optimizer", "lr", "n_steps")}
        )
        opts.pop("preset")
        return cls(chance, **opts, **options)

    def __init__(
        self,
        chance: float,
        *,
        activation: str = "softplus",
        lr: float = 1e-3,
        n_steps: int = 300,
        optimizer: str = "adam",
        l2: float = 0.0,
        init_weight: float = 0.5,
        bootstrap: int = 200,
        seed: int = 0,
        score_unit: str = "auto",
    ):
        check("bootstrap", bootstrap)
        self.bootstrap, self.seed = bootstrap, seed
        self.chance = chance
        self.score_unit = check_unit(score_unit)
        self.activation = activation
        self.lr = lr
        self.n_steps = n_steps
        self.optimizer = optimizer
        self.l2 = l2
        self.init_weight = init_weight

    # ---- validation ------------------------------------------------------------------------
    def _check_config(self) -> float:
        """Eq. 2's gamma (a fraction) from the checked settings."""
        g = float(self.chance)
        if CHANCE_POINTS.failure(g) is not None:
            raise InputError(f"chance must be {CHANCE_POINTS.bounds()} points, got {self.chance!r}")
        check_unit(self.score_unit)
        if self.activation not in ACTIVATIONS:
            raise InputError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.optimizer not in OPTIMIZERS:
            raise InputError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if not (np.isfinite(self.lr) and self.lr > 0):
            raise InputError(f"lr must be > 0, got {self.lr!r}")
        if int(self.n_steps) < 0:
            raise InputError(f"n_steps must be >= 0, got {self.n_steps!r}")
        if self.activation == "sigmoid" and not 0 < self.init_weight < 1:
            raise InputError("init_weight must be in (0, 1) with the sigmoid activation")
        if not self.init_weight > 0:
            raise InputError(f"init_weight must be > 0, got {self.init_weight!r}")
        return fraction(g)

    # ---- fitting ---------------------------------------------------------------------------
    def fit(self, H, L: np.ndarray, n_chars: int, scores, splits) -> CapabilitySalience:
        """Run Algorithm 2.

        H : (T, d) features of the T target tokens (dense or sparse); L : (M, T) losses of M
        models mapped to those tokens; n_chars : N_c of Eq. 1; scores : (M,) accuracies in
        `score_unit` (points or fractions); splits : (M,) "train" / "validation" / "test".
        """
        gamma = self._check_config()
        L = np.asarray(L, float)
        A = np.asarray(scores, float)
        splits = np.asarray(splits).astype(str)
        if L.ndim != 2:
            raise InputError(f"losses must be a (models x tokens) matrix, got shape {L.shape}")
        M, T = L.shape
        if not sp.issparse(H):
            H = np.asarray(H)
        if H.ndim != 2 or H.shape[0] != T:
            raise InputError(f"features have shape {H.shape}, losses have {T} tokens")
        if A.shape != (M,) or splits.shape != (M,):
            raise InputError("scores and splits need one entry per model")
        if not np.all(np.isfinite(L)):
            raise InputError("losses contain NaN or infinite values")
        bad = ~(np.isfinite(A) & (A >= 0) & (A <= 100))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                f"score of model {i} is {fmt_value(A[i])}; scores must be points in [0, 100] "
                "or fractions in [0, 1]"
            )
        A, A_points, scale = split_scores(A, self.score_unit)  # Eq. 2 runs on fractions
        fraction_chance_hint(float(self.chance), scale)
        unknown = sorted(set(splits) - {"train", "validation", "test"})
        if unknown:
            raise InputError(f"unknown split {unknown[0]!r}; use train, validation or test")
        if not n_chars > 0:
            raise InputError("the text has no characters")
        tr = splits == "train"
        va = splits == "validation"
        if tr.sum() < 2:
            raise InputError(f"need at least 2 train models, got {int(tr.sum())}")
        below = int(np.sum(A[tr] <= gamma))
        if below > tr.sum() / 2:  # Eq. 2 lives above gamma: a floor above most scores
            warnings.warn(  # gives a degenerate fit (alpha ~ 0, beta ~ 1e17)
                f"{below} of {int(tr.sum())} training scores are at or below chance "
                f"{float(self.chance):g} points, the floor of Eq. 2: is it right (in points, e.g. "
                "25 for four choices)?",
                stacklevel=2,
            )
        sel = va if va.any() else tr
        Ltr, Atr = L[tr], A[tr]
        Hs = sp.csr_matrix(H) if sp.issparse(H) else np.asarray(H)
        if not sp.issparse(Hs) and Hs.dtype not in (np.float32, np.float64):
            Hs = Hs.astype(float)
        HT = Hs.T.tocsr() if sp.issparse(Hs) else Hs.T
        d = Hs.shape[1]

        theta = np.zeros(d)
        bias = _inverse_act(float(self.init_weight), self.activation)
        m_t, v_t, m_b, v_b = np.zeros(d), np.zeros(d), 0.0, 0.0
        b1, b2, eps = 0.9, 0.999, 1e-8
        lr, nc = float(self.lr), float(n_chars)
        ab = None
        best = (np.inf, -1, theta.copy(), bias, None)
        history = []
        for step in range(int(self.n_steps) + 1):
            w, dw = _act(_matvec(Hs, theta) + bias, self.activation)
            C = L @ w / nc
            # (i) Levenberg-Marquardt on alpha, beta with theta fixed (Eq. 4), warm-started
            ab, _, _ = lm_fit(C[tr], Atr, gamma, [ab] if ab is not None else None)
            pred = sigmoid_law(C, ab[0], ab[1], gamma)
            tr_mse = float(np.mean((pred[tr] - Atr) ** 2))
            sel_mse = float(np.mean((pred[sel] - A[sel]) ** 2))
            history.append((step, tr_mse, sel_mse))
            if sel_mse < best[0]:
                best = (sel_mse, step, theta.copy(), bias, ab.copy())
            if step == int(self.n_steps):
                break
            # (ii) one gradient step on theta with alpha, beta fixed (Eq. 5)
            _, gz = _grad_z(C[tr], Atr, ab, gamma, Ltr, nc, dw)
            g_theta = _matvec(HT, gz) + 2 * self.l2 * theta
            g_bias = float(gz.sum())
            if self.optimizer == "sgd":
                theta -= lr * g_theta
                bias -= lr * g_bias
            else:
                t = step + 1
                m_t = b1 * m_t + (1 - b1) * g_theta
                v_t = b2 * v_t + (1 - b2) * g_theta**2
                m_b = b1 * m_b + (1 - b1) * g_bias
                v_b = b2 * v_b + (1 - b2) * g_bias**2
                c1, c2 = 1 - b1**t, 1 - b2**t
                theta -= lr * (m_t / c1) / (np.sqrt(v_t / c2) + eps)
                bias -= lr * (m_b / c1) / (np.sqrt(v_b / c2) + eps)

        _, self.best_step_, self.theta_, self.bias_, _ = best
        self.weights_ = _act(_matvec(Hs, self.theta_) + self.bias_, self.activation)[0]
        C = L @ self.weights_ / nc
        # final Eq. 4 fit at the selected theta, as a FitResult of the shared engine
        self.law_: FitResult = fit_salience_sigmoid(C[tr], Atr, gamma, starts=[best[4]])
        self.alpha_, self.beta_ = self.law_.theta
        self.gamma_ = gamma
        self.n_chars_ = int(n_chars)
        self.capability_ = C
        self.history_ = np.array(history, float)
        self.history_[:, 1:] *= 1e4  # MSE of fractions -> points^2
        self.scores_, self.splits_ = A_points, splits
        self.bootstrap_ = bootstrap_law(
            C, A, splits, gamma, int(self.bootstrap), self.seed, self.law_
        )
        return self

    # ---- prediction ------------------------------------------------------------------------
    def _check(self):
        if not hasattr(self, "weights_"):
            raise not_fitted(self)

    def capability_score(self, L: np.ndarray) -> np.ndarray:
        """Eq. 1 for each row of L (models x target tokens)."""
        self._check()
        return np.asarray(L, float) @ self.weights_ / self.n_chars_

    def predict(self, L: np.ndarray) -> np.ndarray | float:
        """Eq. 2 at the capability scores of the rows of L, in points (one model's losses, a
        1-D row, give a float)."""
        A = 100.0 * sigmoid_law(self.capability_score(L), self.alpha_, self.beta_, self.gamma_)
        return point(A) if np.ndim(L) == 1 else np.asarray(A, float)

    def predict_interval(self, L: np.ndarray, *, level: float = 0.9, kind: str = "prediction"):
        """Percentile interval of the accuracy of the rows of L in points (`eq2_interval`, run
        on fractions): Eq. 2 over the bootstrap (alpha, beta) ("confidence"), plus Student-t
        noise of the validation models' RMSE ("prediction", default; dof-corrected train RMSE
        without them)."""
        self._check()
        level, kind = self._interval_args(level, kind)
        if not self.bootstrap_:
            raise InputError("this fit has no bootstrap samples (fit with bootstrap > 0)")
        C = np.atleast_1d(self.capability_score(L))
        pred = sigmoid_law(self.capability_, self.alpha_, self.beta_, self.gamma_)
        scale, dof = residual_scale(pred, fraction(self.scores_), self.splits_)
        lo, hi = eq2_interval(self.bootstrap_, C, self.gamma_, level, kind, scale, dof)
        centre = sigmoid_law(C, self.alpha_, self.beta_, self.gamma_)
        return 100.0 * np.fmin(lo, centre), 100.0 * np.fmax(hi, centre)

    def contract(self) -> dict:
        """The learned head as JSON fields: Eq. 2's alpha, beta, gamma (a fraction) and the
        chance level (points), the selected step of Algorithm 2 with its train and selection MSE
        (points^2; and step 0's, all weights equal), the number of token weights, N_c, and the
        optimiser's settings."""
        self._check()
        step = int(self.best_step_)
        return {
            "params": {"alpha": float(self.alpha_), "beta": float(self.beta_)},
            "gamma": float(self.gamma_),
            "chance": float(self.chance),
            "best_step": step,
            "train_mse": float(self.history_[step, 1]),
            "selection_mse": float(self.history_[step, 2]),
            "equal_weights_mse": [float(self.history_[0, 1]), float(self.history_[0, 2])],
            "n_weights": int(np.size(self.weights_)),
            "n_chars": int(self.n_chars_),
            "optimizer": {"name": self.optimizer, "lr": float(self.lr), "n_steps": self.n_steps},
            "activation": self.activation,
            "bootstrap": len(self.bootstrap_),
        }

    # ---- persistence -----------------------------------------------------------------------
    saved_label = "saved salience head"
    _FITTED = (
        "weights",
        "theta",
        "bias",
        "best_step",
        "n_chars",
        "capability",
        "history",
        "scores",
        "splits",
        "bootstrap",
        "law",
    )

    def to_dict(self) -> dict:
        """The constructor arguments (chance in points) and the learned head (token weights,
        theta, the Eq. 2 law as a `FitResult` on fractions, the optimisation history with MSEs
        in points^2, the scores in points, the bootstrap (alpha, beta))."""
        self._check()
        f = {k: getattr(self, f"{k}_") for k in self._FITTED[:-1]}
        f = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in f.items()}
        f.update(bias=float(self.bias_), best_step=int(self.best_step_), law=self.law_.to_dict())
        return {
            "kind": "CapabilitySalience",
            "format_version": 1,
            "config": self.get_params(),
            "fitted": f,
        }

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved salience head") -> CapabilitySalience:
        """A head from `to_dict`, checked field by field."""
        c = Checker(where)
        c.kind(c.obj(d), "CapabilitySalience", label=cls.saved_label)
        c.keys(d, ("kind", "format_version", "config", "fitted"))
        cfg = c.obj(c.get(d, "config"), "config")
        c.keys(cfg, cls._param_names(), "config")
        f = c.obj(c.get(d, "fitted"), "fitted")
        c.keys(f, cls._FITTED, "fitted")
        for k in cls._FITTED:
            c.get(f, k, "fitted")
        est = cls(**cfg)
        est._check_config()
        T = len(c.nums(f["weights"], "fitted.weights"))
        est.weights_ = np.asarray(f["weights"], float)
        est.theta_ = np.asarray(c.nums(f["theta"], "fitted.theta"), float)
        est.bias_ = c.num(f["bias"], "fitted.bias")
        est.n_chars_ = c.int_(f["n_chars"], "fitted.n_chars", lo=1)
        est.best_step_ = c.int_(f["best_step"], "fitted.best_step", lo=0)
        M = len(c.nums(f["capability"], "fitted.capability"))
        est.capability_ = np.asarray(f["capability"], float)
        est.scores_ = np.asarray(c.nums(f["scores"], "fitted.scores", M), float)
        est.splits_ = np.asarray(
            [
                c.str_(s, "fitted.splits", ("train", "validation", "test"))
                for s in c.list_(f["splits"], "fitted.splits")
            ]
        )
        est.history_ = np.asarray(c.matrix(f["history"], "fitted.history", 3), float)
        est.bootstrap_ = [
            list(map(float, r)) for r in c.matrix(f["bootstrap"], "fitted.bootstrap", 2)
        ]
        est.law_ = FitResult.from_dict(f["law"], where, "fitted.law")
        est.alpha_, est.beta_ = est.law_.theta
        est.gamma_ = est._check_config()
        if T == 0 or len(est.splits_) != M:
            c.fail("fitted", "weights must be non-empty and splits one per model")
        return est

    def summary(self) -> str:
        """The learned head (Algorithm 2): its token weights, the Eq. 2 law at the selected
        step, and the alternating optimisation's train / selection MSE."""
        self._check()
        w = np.asarray(self.weights_, float)
        step = int(self.best_step_)
        _, tr_mse, sel_mse = self.history_[step]
        return "\n".join(
            [
                f"Capability Salience head (Algorithm 2; {self.optimizer}, lr {self.lr:g}, "
                f"{int(self.n_steps)} alternations, {self.activation} weights)",
                f"token weights: {w.size} tokens, min {w.min():.4g}, median {np.median(w):.4g}, "
                f"max {w.max():.4g}; N_c = {self.n_chars_} characters (Eq. 1)",
                f"Eq. 2: alpha = {self.alpha_:.4g}, beta = {self.beta_:.4g}, "
                f"gamma = {self.gamma_:.4g} (chance {float(self.chance):g} points, fixed)",
                f"selected step {step} of {int(self.n_steps)}: train MSE {tr_mse:.4g}, "
                f"selection MSE {sel_mse:.4g} points^2 (step 0, all weights equal: "
                f"{self.history_[0, 1]:.4g} / {self.history_[0, 2]:.4g})",
            ]
        )
