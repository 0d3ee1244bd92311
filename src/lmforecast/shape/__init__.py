"""Width and depth: does model shape matter beyond N (a residual test against L(N, D))."""

from .residual import ShapeTest, shape_test

__all__ = ["ShapeTest", "shape_test"]
