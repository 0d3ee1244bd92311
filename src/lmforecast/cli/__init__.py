"""Command-line interface: `lmforecast <method> <verb>`."""
