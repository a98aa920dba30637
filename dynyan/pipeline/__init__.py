"""The data pipeline: TPC data (`data`), update streams built with Spark
(`streams`) or generated (`synthetic`), replay into a view with checkpoints
(`replay`, `checkpoint`), and planner statistics of Parquet tables (`stats`).

Needs the ``pipeline`` extra (pyarrow, DuckDB, tqdm); building TPC streams
needs the ``spark`` extra (PySpark, tpcgen-cli).
"""
