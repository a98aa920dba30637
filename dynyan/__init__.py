"""dynyan: SQL queries compiled into Dynamic Yannakakis incremental views.

>>> view = load("CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);"
...             "SELECT r.a, s.c FROM r, s WHERE r.b = s.b").View()
>>> view.insert("r", (1, 10)); view.insert("s", (10, 7)); view.insert("s", (10, 8))
>>> sorted(view.rows())
[(1, 7), (1, 8)]
"""

from __future__ import annotations

from .compiler import compile_query, compile_sql, explain, load

__all__ = ["compile_query", "compile_sql", "explain", "follow", "load"]


def follow(target, dsn, **options):
    """Keep a view equal to a query over a PostgreSQL database (logical
    replication): see ``dynyan.pipeline.follow.follow``. The driver (the
    ``postgres`` extra) is imported only here, when following starts."""
    from .pipeline.follow import follow as _follow

    return _follow(target, dsn, **options)
