"""Compare training recipes by effective compute (the multiplier k in "B at C = A at k C")."""

from .effective import RecipeComparison, compare_recipes, frontier

__all__ = ["RecipeComparison", "compare_recipes", "frontier"]
