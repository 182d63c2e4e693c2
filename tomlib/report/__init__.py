"""Paper reference tables, the results contract, side-by-side comparisons and the results report."""

from tomlib.report._orders import SEAT_METRICS, llm_orders, order_row, orders_table
from tomlib.report._plots import plot_compare, save_figure
from tomlib.report._report import build_report, readings_of
from tomlib.report._tables import (
    PAPER_IDS,
    ResultsContractError,
    attach_paper_values,
    compare,
    condition_columns,
    paper_table,
    paper_table_index,
    read_results,
    side_by_side,
    validate_results,
    write_table,
)

__all__ = [
    "PAPER_IDS",
    "SEAT_METRICS",
    "ResultsContractError",
    "attach_paper_values",
    "build_report",
    "compare",
    "condition_columns",
    "llm_orders",
    "order_row",
    "orders_table",
    "paper_table",
    "paper_table_index",
    "plot_compare",
    "read_results",
    "readings_of",
    "save_figure",
    "side_by_side",
    "validate_results",
    "write_table",
]
