"""The main job: `lmforecast report --out DIR` — every analysis on bundled data, as HTML + JSON."""

from .builder import SECTION_MODULES, Section, build_report

__all__ = ["build_report", "Section", "SECTION_MODULES"]
