"""lmforecast: forecast language-model loss and downstream performance before training."""

from .errors import ConvergenceWarning, DomainWarning, InputError

__version__ = "0.1.0"

__all__ = ["InputError", "ConvergenceWarning", "DomainWarning", "__version__"]
