"""Schedule-aware loss-curve laws: fit whole training curves with their learning-rate
schedules, forecast the rest of a run or a schedule never run, with intervals.

- `CurveLaw` (``law="mpl"``: the multi-power law of Luo et al. 2025; ``"annealing"``: the
  learning-rate annealing law of Tissue et al. 2024; ``"power"``: a power law in steps);
- `read_curves` / `read_schedule`: the one table format (run, step, lr, loss; tokens, N);
- `CurvePrior`: held decay parameters for a run its own points cannot identify (a bundled
  one, ``"mpl-25m"``, or one from a fit of other runs);
- `simulate_curves`: curves from known parameters;
- `schedules`, `plan_schedules`: schedule builders and schedule planning.
"""

from . import schedules
from .forecast import CurveForecast
from .model import CurveLaw
from .plan import SchedulePlan, plan_schedules
from .prior import CurvePrior
from .simulate import simulate_curves
from .table import read_curves, read_schedule

__all__ = [
    "CurveForecast",
    "CurveLaw",
    "CurvePrior",
    "SchedulePlan",
    "plan_schedules",
    "read_curves",
    "read_schedule",
    "schedules",
    "simulate_curves",
]
