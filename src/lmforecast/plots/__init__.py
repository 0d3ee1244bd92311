"""Plots, one module per method; each function takes data/results and returns a Figure."""
