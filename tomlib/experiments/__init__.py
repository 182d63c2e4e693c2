"""One module per paper: functions that run a table's conditions and return tidy DataFrames."""

from tomlib.experiments._checks import check_hints

__all__ = ["check_hints"]
