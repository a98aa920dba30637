"""The data pipeline: TPC data (`data`), update streams built with Spark
(`streams`) or generated (`synthetic`), replay into a view with checkpoints
(`replay`, `checkpoint`), planner statistics of Parquet tables (`stats`), and
live views over PostgreSQL (`follow`, with `pgcatalog` and `pgoutput`).

Needs the ``pipeline`` extra (pyarrow, DuckDB, tqdm); building TPC streams
needs the ``spark`` extra (PySpark, tpcgen-cli); following PostgreSQL the
``postgres`` extra (psycopg2).
"""
