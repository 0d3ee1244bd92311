"""The generic uncertainty machinery every method uses (docs/architecture.md, "Where
uncertainty lives"):

- `resample`: which rows a bootstrap resample draws (rows, clusters, strata, blocks);
- `bootstrap`: row-bootstrap refits of a law (warm or multi-start), `bootstrap_fit`,
  `attach_bootstrap` (percentile intervals of the coefficients);
- `cluster`: the cluster bootstrap of model sizes, each resample fitted from scratch;
- `percentile`: percentile intervals of draws, draws plus normal noise, quantile sds,
  weighted quantiles;
- `normal`: `z_of` and the normal quantile / distribution functions and nodes;
- `coverage`: scoring forecast intervals on held-out data (coverage, width, calibration).

Nothing is imported here: `from lmforecast.uncertainty.normal import z_of` loads neither the
optimiser nor scipy nor pandas (a forecast from a saved fit stays light).
"""
