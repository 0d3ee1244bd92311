"""The FLP-M loss -> performance network (Chen et al., Sec. 4.2), in pure numpy.

"A two-layer neural network with a hidden layer size of 3 and the ReLU activation ... regression
loss with L2 regularization and the Adam optimizer, a learning rate of 0.05 that linearly decays
to 0 within 2,000 steps and a weight decay of 0.01." Read as (docs/flp.md): one hidden layer,
P = W2 relu(W1 x + b1) + b2; full-batch MSE; Adam (beta 0.9/0.999, eps 1e-8) with L2 weight
decay added to the gradient (torch.optim.Adam(weight_decay=0.01) semantics, all parameters);
lr_t = 0.05 (1 - t/2000); PyTorch's default Linear initialisation U(+-1/sqrt(fan_in)).
Not stated in the paper, our choices: inputs and target are standardised on the training data,
and `n_init` seeded networks are trained together (vectorised) and the one with the lowest
training loss is kept, which guards against a hidden size of 3 starting with dead ReLUs.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..uncertainty.resample import resample_counts


class TwoLayerNetwork:
    """Hidden-size-`hidden` ReLU regressor trained as in Sec. 4.2; deterministic given `seed`."""

    def __init__(
        self,
        hidden: int = 3,
        lr: float = 0.05,
        steps: int = 2000,
        weight_decay: float = 0.01,
        n_init: int = 5,
        seed: int = 0,
    ) -> None:
        if hidden < 1 or steps < 1 or n_init < 1:
            raise InputError("hidden, steps and n_init must be >= 1")
        if not lr > 0 or weight_decay < 0:
            raise InputError(f"need lr > 0 and weight_decay >= 0, got {lr}, {weight_decay}")
        self.hidden, self.lr, self.steps = int(hidden), float(lr), int(steps)
        self.weight_decay, self.n_init, self.seed = float(weight_decay), int(n_init), int(seed)

    def _init(self, K: int):
        rng = np.random.default_rng(self.seed)
        R, H = self.n_init, self.hidden
        b1, b2 = 1.0 / np.sqrt(K), 1.0 / np.sqrt(H)
        return [
            rng.uniform(-b1, b1, (R, K, H)),
            rng.uniform(-b1, b1, (R, 1, H)),
            rng.uniform(-b2, b2, (R, H, 1)),
            rng.uniform(-b2, b2, (R, 1, 1)),
        ]

    def fit(self, X, y) -> TwoLayerNetwork:
        """Train on X (n, K) domain losses and y (n,) scores; full batch, all networks at once."""
        X = np.asarray(X, float)
        y = np.asarray(y, float).ravel()
        if X.ndim != 2 or X.shape[0] != y.size or y.size < 2:
            raise InputError(f"network needs X (n, K) and y (n,), n >= 2; got {X.shape}, {y.shape}")
        self.x_mean_, self.x_std_ = X.mean(0), X.std(0)
        self.x_std_[self.x_std_ == 0] = 1.0
        self.y_mean_, self.y_std_ = float(y.mean()), float(y.std() or 1.0)
        Z = (X - self.x_mean_) / self.x_std_
        t = ((y - self.y_mean_) / self.y_std_)[None, :, None]  # (1, n, 1)
        params = self._train(Z, t, self._init(X.shape[1]), None)
        Zb = np.broadcast_to(Z, (self.n_init, *Z.shape))
        mse = self._mse_all(params, Zb, t)
        best = int(np.argmin(mse))
        self.params_ = [p[best] for p in params]
        self.train_mse_ = float(mse[best] * self.y_std_**2)
        self.init_mse_ = (mse * self.y_std_**2).tolist()
        return self

    def _train(self, Z, t, params, weights):
        """Full-batch Adam on all R networks at once; `weights` (R, n, 1) are per-network sample
        weights with mean 1 (bootstrap counts), None for plain MSE."""
        R = params[0].shape[0]
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        b1, b2, eps, wd = 0.9, 0.999, 1e-8, self.weight_decay
        n = Z.shape[0]
        Zb = np.ascontiguousarray(np.broadcast_to(Z, (R, *Z.shape)))
        ZbT = np.ascontiguousarray(Zb.transpose(0, 2, 1))
        for step in range(self.steps):
            W1, c1, W2, c2 = params
            pre = Zb @ W1 + c1  # (R, n, H)
            h = np.maximum(pre, 0.0)
            out = h @ W2 + c2  # (R, n, 1)
            g_out = (2.0 / n) * (out - t)
            if weights is not None:
                g_out = g_out * weights
            g_W2 = h.transpose(0, 2, 1) @ g_out
            g_c2 = g_out.sum(1, keepdims=True)
            g_h = (g_out @ W2.transpose(0, 2, 1)) * (pre > 0)
            g_W1 = ZbT @ g_h
            g_c1 = g_h.sum(1, keepdims=True)
            lr = self.lr * (1.0 - step / self.steps)
            k = step + 1
            c_m, c_v = 1.0 - b1**k, 1.0 - b2**k
            for i, g in enumerate((g_W1, g_c1, g_W2, g_c2)):
                g = g + wd * params[i]
                m[i] = b1 * m[i] + (1 - b1) * g
                v[i] = b2 * v[i] + (1 - b2) * g * g
                params[i] = params[i] - lr * (m[i] / c_m) / (np.sqrt(v[i] / c_v) + eps)
        return params

    def fit_bootstrap(self, X, y, n_boot: int = 50, seed: int = 0) -> TwoLayerNetwork:
        """Bootstrap ensemble for forecast intervals: `n_boot` resamples of the training points
        (multinomial counts as sample weights), one seeded network each, all trained together.
        Resamples whose network ends with a weighted training MSE above 3x the main fit's (a
        dead or stuck 3-unit ReLU layer) are discarded. Uses the main `fit`'s standardisation."""
        if not hasattr(self, "params_"):
            raise RuntimeError("call fit() before fit_bootstrap()")
        X = np.asarray(X, float)
        y = np.asarray(y, float).ravel()
        n = y.size
        Z = (X - self.x_mean_) / self.x_std_
        t = ((y - self.y_mean_) / self.y_std_)[None, :, None]
        rng = np.random.default_rng(np.random.SeedSequence([seed, 7919]))
        W = resample_counts(rng, n, size=n_boot).astype(float)[:, :, None]
        saved = self.n_init, self.seed
        self.n_init, self.seed = n_boot, int(rng.integers(2**31))
        try:
            params = self._train(Z, t, self._init(X.shape[1]), W)
        finally:
            self.n_init, self.seed = saved
        W1, c1, W2, c2 = params
        out = np.maximum(Z[None] @ W1 + c1, 0.0) @ W2 + c2
        wmse = np.mean(W * (out - t) ** 2, axis=(1, 2)) * self.y_std_**2
        ok = wmse <= 3.0 * self.train_mse_ + 1e-12
        self.boot_params_ = [p[ok] for p in params]
        self.n_boot_discarded_ = int((~ok).sum())
        return self

    def predict_bootstrap(self, X) -> np.ndarray:
        """(B, n) predictions of the bootstrap ensemble."""
        X = np.atleast_2d(np.asarray(X, float))
        W1, c1, W2, c2 = self.boot_params_
        Z = (X - self.x_mean_) / self.x_std_
        out = np.maximum(Z[None] @ W1 + c1, 0.0) @ W2 + c2
        return out[:, :, 0] * self.y_std_ + self.y_mean_

    @staticmethod
    def _mse_all(params, Zb, t):
        W1, c1, W2, c2 = params
        out = np.maximum(Zb @ W1 + c1, 0.0) @ W2 + c2
        return np.mean((out - t) ** 2, axis=(1, 2))

    def predict(self, X) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, float))
        W1, c1, W2, c2 = self.params_
        Z = (X - self.x_mean_) / self.x_std_
        out = np.maximum(Z @ W1 + c1, 0.0) @ W2 + c2
        return out[:, 0] * self.y_std_ + self.y_mean_

    # ---- persistence (exact JSON) --------------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "config": {
                "hidden": self.hidden,
                "lr": self.lr,
                "steps": self.steps,
                "weight_decay": self.weight_decay,
                "n_init": self.n_init,
                "seed": self.seed,
            },
            "x_mean": self.x_mean_.tolist(),
            "x_std": self.x_std_.tolist(),
            "y_mean": self.y_mean_,
            "y_std": self.y_std_,
            "params": [p.tolist() for p in self.params_],
            "train_mse": self.train_mse_,
            "init_mse": self.init_mse_,
            "boot_params": [p.tolist() for p in getattr(self, "boot_params_", [])],
            "n_boot_discarded": getattr(self, "n_boot_discarded_", 0),
        }

    @classmethod
    def from_dict(cls, d: dict) -> TwoLayerNetwork:
        net = cls(**d["config"])
        net.x_mean_, net.x_std_ = np.array(d["x_mean"]), np.array(d["x_std"])
        net.y_mean_, net.y_std_ = d["y_mean"], d["y_std"]
        net.params_ = [np.array(p, float) for p in d["params"]]
        net.train_mse_, net.init_mse_ = d["train_mse"], d["init_mse"]
        if d.get("boot_params"):
            net.boot_params_ = [np.array(p, float) for p in d["boot_params"]]
            net.n_boot_discarded_ = d.get("n_boot_discarded", 0)
        return net


def naive_train(X, y, hidden=3, lr=0.05, steps=2000, weight_decay=0.01, seed=0):
    """Reference implementation for the benchmark: per-sample Python loops, one network."""
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    n, K = X.shape
    rng = np.random.default_rng(seed)
    W1 = rng.uniform(-1 / np.sqrt(K), 1 / np.sqrt(K), (K, hidden))
    c1 = rng.uniform(-1 / np.sqrt(K), 1 / np.sqrt(K), hidden)
    W2 = rng.uniform(-1 / np.sqrt(hidden), 1 / np.sqrt(hidden), hidden)
    c2 = float(rng.uniform(-1 / np.sqrt(hidden), 1 / np.sqrt(hidden)))
    state = {}
    for step in range(steps):
        gW1, gc1, gW2, gc2 = np.zeros_like(W1), np.zeros_like(c1), np.zeros_like(W2), 0.0
        for i in range(n):
            pre = X[i] @ W1 + c1
            h = np.maximum(pre, 0)
            err = 2.0 / n * (h @ W2 + c2 - y[i])
            gW2 += err * h
            gc2 += err
            gh = err * W2 * (pre > 0)
            gW1 += np.outer(X[i], gh)
            gc1 += gh
        cur = lr * (1 - step / steps)
        for name, p, g in (("W1", W1, gW1), ("c1", c1, gc1), ("W2", W2, gW2)):
            g = g + weight_decay * p
            mm, vv = state.get(name, (0.0, 0.0))
            mm = 0.9 * mm + 0.1 * g
            vv = 0.999 * vv + 0.001 * g * g
            state[name] = (mm, vv)
            p -= (
                cur
                * (mm / (1 - 0.9 ** (step + 1)))
                / (np.sqrt(vv / (1 - 0.999 ** (step + 1))) + 1e-8)
            )
        gc2 += weight_decay * c2
        mm, vv = state.get("c2", (0.0, 0.0))
        mm, vv = 0.9 * mm + 0.1 * gc2, 0.999 * vv + 0.001 * gc2 * gc2
        state["c2"] = (mm, vv)
        c2 -= (
            cur * (mm / (1 - 0.9 ** (step + 1))) / (np.sqrt(vv / (1 - 0.999 ** (step + 1))) + 1e-8)
        )
    return W1, c1, W2, c2
