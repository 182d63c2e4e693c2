"""One module per paper: functions that run a table's conditions and return tidy DataFrames."""

from tomlib.experiments._checks import check_hints
from tomlib.experiments._cost import Estimate, price

__all__ = ["Estimate", "check_hints", "price"]
