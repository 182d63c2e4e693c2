"""One module per paper: functions that run a table's conditions and return tidy DataFrames."""
