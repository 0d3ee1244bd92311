"""Report sections, one module per method, each exposing build_section(ctx) -> Section."""
