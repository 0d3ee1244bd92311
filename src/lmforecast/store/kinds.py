"""The table of saved estimator kinds: a saved estimator names its class in ``kind``
(``"SupervisedScalingLaw"``, ``"DistillationScalingLaw"``, ...), and `ESTIMATORS` maps each
kind to the class that reads it, as ``"module:Class"`` text (`store` sits at the bottom of the
package and imports no method: `registry.load` imports the class by name when a file of its
kind is loaded).

Results a command saves (an OSL fit with its holdout, a salience fit, a backtest, an isoFLOP
analysis, ...) name their class the same way; `RESULTS` maps each to the class whose
``from_json`` reads it, so `registry.load` reads every file the command line writes.

Adding an estimator is one row in `ESTIMATORS` (its ``to_dict`` writes the kind, its
``from_dict`` checks it, e.g. with `Checker.kind`) and, where the command line reads it, one
row in `COMMANDS`.
"""

from __future__ import annotations

from ..errors import InputError, fmt_value

#: kind -> "module:Class" of the estimator that reads a saved file of that kind
ESTIMATORS: dict[str, str] = {
    "SupervisedScalingLaw": "lmforecast.supervised.model:SupervisedScalingLaw",
    "DistillationScalingLaw": "lmforecast.distill.model:DistillationScalingLaw",
    "DataConstrainedLaw": "lmforecast.dataconstrained.model:DataConstrainedLaw",
    "FLP": "lmforecast.flp.model:FLP",
    "FLPM": "lmforecast.flp.mixture:FLPM",
    "DownstreamForecaster": "lmforecast.downstream.forecaster:DownstreamForecaster",
    "ObservationalScalingLaw": "lmforecast.osl.model:ObservationalScalingLaw",
    "CapabilitySalience": "lmforecast.salience.model:CapabilitySalience",
    "CurveLaw": "lmforecast.curves.model:CurveLaw",
}

#: kind -> "module:Class" of a saved result (read by the class's ``from_json``)
RESULTS: dict[str, str] = {
    "OSLResult": "lmforecast.osl.result:OSLResult",
    "RobustnessResult": "lmforecast.osl.sweep_result:RobustnessResult",
    "SalienceFit": "lmforecast.salience.result:SalienceFit",
    "BacktestResult": "lmforecast.backtest.engine:BacktestResult",
    "IsoFlopResult": "lmforecast.isoflop.result:IsoFlopResult",
    "RecipeComparison": "lmforecast.recipes.effective:RecipeComparison",
    "ShapeTest": "lmforecast.shape.residual:ShapeTest",
    "NextRunAdvice": "lmforecast.nextrun.advisor:NextRunAdvice",
    "HeldOutErrors": "lmforecast.flp.study:HeldOutErrors",
    "SingleDistributionCheck": "lmforecast.flp.single_distribution:SingleDistributionCheck",
    "LossToPerformanceComparison": "lmforecast.flp.candidates:LossToPerformanceComparison",
}

#: kind -> the command group whose verbs read a saved file of that kind
COMMANDS: dict[str, str] = {
    "SupervisedScalingLaw": "lmforecast supervised",
    "DistillationScalingLaw": "lmforecast distill",
    "DataConstrainedLaw": "lmforecast data-constrained",
    "FLP": "lmforecast flp",
    "FLPM": "lmforecast flpm",
    "DownstreamForecaster": "lmforecast downstream",
    "CurveLaw": "lmforecast curves",
}


def wrong_kind(where: str, found, expected: str) -> InputError:
    """The one-line refusal of a saved file of kind `found` by the reader of `expected`: it
    names both, and for another estimator's fit, where to load it."""
    if isinstance(found, str) and found in ESTIMATORS:
        cmd = COMMANDS.get(found)
        how = "lmforecast.load" + (f" or use `{cmd}`" if cmd else "")
        return InputError(f"{where} holds a {found} fit, not a {expected}: load it with {how}")
    if isinstance(found, str):
        return InputError(f"{where} holds a saved {found!r} result, not a {expected}")
    return InputError(
        f"{where}: not a saved {expected}: it is no lmforecast result "
        f"(field 'kind' is {fmt_value(found)})"
    )


__all__ = ["COMMANDS", "ESTIMATORS", "RESULTS", "wrong_kind"]
