"""The contract every parametric law satisfies so the shared fitting engine can fit it.

A law is fitted in a *fit space* (e.g. log A rather than A) where the published initialisation
grids live; it predicts a *target* (e.g. log loss) for a batch of S parameter vectors at once,
which is what lets the engine score a 200,000-start grid in a few vectorised passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Parameter:
    """A named, bounded fit-space parameter; `natural` names the reported quantity."""

    name: str
    lower: float = -np.inf
    upper: float = np.inf
    natural: str | None = None  # e.g. "A" for fit-space "log_A"
    transform: str = "identity"  # "identity" | "exp": natural = exp(fit)

    @property
    def natural_name(self) -> str:
        return self.natural or self.name

    def to_natural(self, v):
        if self.transform != "exp":
            return v
        with np.errstate(over="ignore"):  # a log-coefficient at a wide bound is inf naturally
            return np.exp(v)

    def from_natural(self, v):
        return np.log(v) if self.transform == "exp" else v


@dataclass(frozen=True)
class LinearBlock:
    """Where a law is linear: at fixed *nonlinear* coordinates `nl`, the law in observation
    space is a non-negative combination of basis columns,

        exp(predict_target(theta(nl, c, X), X)) == basis(nl, X) @ c,   c >= 0,

    so the engine can solve c for a whole grid of `nl` at once (variable projection,
    `fitting.varpro`) instead of searching over it. `grid` (G, q) lists the nl points to project
    at; `basis(nl, X)` returns (G, n, k); `theta(nl, c, X)` maps (G, q), (G, k) to fit-space
    (G, P) parameters (a zero coefficient maps to -inf in log space; the engine clips to bounds).
    """

    grid: np.ndarray
    basis: Callable[[np.ndarray, Mapping[str, np.ndarray]], np.ndarray]
    theta: Callable[[np.ndarray, np.ndarray, Mapping[str, np.ndarray]], np.ndarray]


def freeze_inputs(X: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Read-only private copies of a law's input columns (what the fitting engine evaluates a
    law on): nothing can change such an array in place, so a law may keep values derived from
    it (e.g. the logs of its inputs) across the hundreds of evaluations of a polish."""
    out = {}
    for k, v in X.items():
        a = np.array(v, float)  # a copy that owns its data
        a.flags.writeable = False
        out[k] = a
    return out


def is_frozen(a) -> bool:
    """Whether `a` is an array no one can change in place (read-only and owning its data, as
    `freeze_inputs` makes them): a law caches values derived from such arrays only."""
    return isinstance(a, np.ndarray) and not a.flags.writeable and a.base is None


def safe_log(c: np.ndarray) -> np.ndarray:
    """log of non-negative coefficients, -inf at zero (clipped to the bound by the engine)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.asarray(c, float))


def product_grid(*axes) -> np.ndarray:
    """(G, q) Cartesian product of 1-D axes, 'ij' order."""
    mesh = np.meshgrid(*[np.asarray(a, float) for a in axes], indexing="ij")
    return np.stack(mesh, axis=-1).reshape(-1, len(axes))


class Law:
    """Base class: subclasses set `name`, `inputs`, `parameters` and implement `predict_target`.

    `predict_target(theta, X)` takes theta of shape (S, P) and a dict of input arrays of shape
    (n,), and returns (S, n) predictions in target space. `jacobian` returns (S, n, P); the default
    uses central finite differences, laws override it with analytic derivatives.
    """

    name: str = "law"
    inputs: tuple[str, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    target: str = "log"  # how observations map to target space: "log" or "identity"
    citation: str = ""
    # whitened pre-stage before each polish (`fitting.engine._precondition`); laws with
    # linear blocks always get it
    precondition: bool = False

    # ---- fit-space description -------------------------------------------------------------
    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.parameters]

    @property
    def natural_names(self) -> list[str]:
        return [p.natural_name for p in self.parameters]

    @property
    def bounds(self) -> list[tuple[float, float]]:
        return [(p.lower, p.upper) for p in self.parameters]

    def default_grid(self) -> dict[str, np.ndarray]:
        """The paper's grid of initialisations, keyed by fit-space parameter name."""
        raise NotImplementedError

    def linear_blocks(self, X: Mapping[str, np.ndarray]) -> list[LinearBlock]:
        """The law's linear structure for variable projection (`fitting.varpro`); [] if none.
        Laws returning blocks are fitted from projected starts instead of `default_grid()`."""
        return []

    # ---- predictions -----------------------------------------------------------------------
    def predict_target(self, theta: np.ndarray, X: Mapping[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def jacobian(self, theta: np.ndarray, X: Mapping[str, np.ndarray]) -> np.ndarray:
        theta = np.atleast_2d(np.asarray(theta, float))
        S, P = theta.shape
        out = []
        for j in range(P):
            h = 1e-6 * np.maximum(1.0, np.abs(theta[:, j]))
            tp, tm = theta.copy(), theta.copy()
            tp[:, j] += h
            tm[:, j] -= h
            out.append((self.predict_target(tp, X) - self.predict_target(tm, X)) / (2 * h)[:, None])
        return np.stack(out, axis=-1)

    def predict_and_jacobian(self, theta: np.ndarray, X: Mapping[str, np.ndarray]):
        """(predictions (S, n), jacobian (S, n, P)); override to share work between the two."""
        return self.predict_target(theta, X), self.jacobian(theta, X)

    def target_of(self, y: np.ndarray) -> np.ndarray:
        """Map observations to target space."""
        y = np.asarray(y, float)
        return np.log(y) if self.target == "log" else y

    def from_target(self, t: np.ndarray) -> np.ndarray:
        return np.exp(t) if self.target == "log" else t

    # ---- natural parameters ----------------------------------------------------------------
    def to_natural(self, theta) -> dict[str, float]:
        theta = np.asarray(theta, float).ravel()
        return {p.natural_name: float(p.to_natural(v)) for p, v in zip(self.parameters, theta)}

    def from_natural(self, params: Mapping[str, float]) -> np.ndarray:
        missing = [p.natural_name for p in self.parameters if p.natural_name not in params]
        if missing:
            raise KeyError(f"{self.name}: missing parameters {missing}")
        return np.array(
            [float(p.from_natural(params[p.natural_name])) for p in self.parameters], float
        )

    def predict(self, params: Mapping[str, float] | np.ndarray, **inputs) -> np.ndarray:
        """Predict in observation space from natural parameters (dict) or a fit-space vector."""
        theta = self.from_natural(params) if isinstance(params, Mapping) else np.asarray(params)
        X = {k: np.asarray(inputs[k], float) for k in self.inputs}
        shape = np.broadcast_shapes(*(v.shape for v in X.values())) if X else ()
        Xf = {k: np.broadcast_to(v, shape).ravel() for k, v in X.items()}
        return self.from_target(self.predict_target(theta[None, :], Xf)[0]).reshape(shape)
