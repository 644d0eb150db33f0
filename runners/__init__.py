"""The runtime: metric library, matchers, aggregators and per-benchmark readers."""

from runners._types import GoldSet, InvalidPredictions, ItemScore, PredictionWarning, Problem
from runners.registry import Component, Param, component

__all__ = ["Component", "GoldSet", "InvalidPredictions", "ItemScore", "Param", "PredictionWarning", "Problem", "component"]
