"""WITH and CREATE VIEW: every reference becomes a derived table.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> tree = sqlglot.parse_one(
...     "WITH big AS (SELECT a FROM r WHERE a > 5) SELECT * FROM big, big b2",
...     read="duckdb")
>>> print(inline_views(tree, Context({})).sql("duckdb"))
SELECT * FROM (SELECT a FROM r WHERE a > 5) AS big, (SELECT a FROM r WHERE a > 5) AS b2
"""

from __future__ import annotations

from sqlglot import exp

from ..context import Context
from ..diagnostics import unsupported


def inline_views(tree: exp.Expression, ctx: Context) -> exp.Expression:
    """`tree` with each reference to a common table expression or a view of
    the file replaced by a copy of its query (each reference is maintained as
    its own inner view)."""
    return _inline(tree, dict(ctx.views))


def _inline(node: exp.Expression, env: dict[str, exp.Expression]) -> exp.Expression:
    key = "with_" if "with_" in node.args else "with"
    with_ = node.args.get(key)
    if isinstance(with_, exp.With):
        if with_.args.get("recursive"):
            raise unsupported("WITH RECURSIVE is not supported", with_)
        env = dict(env)
        for cte in with_.expressions:
            name = cte.alias.lower()
            body = _inline(cte.this.copy(), env)
            columns = [c.name for c in cte.args["alias"].columns]
            env[name] = _renamed(body, columns, cte) if columns else body
        node.set(key, None)
    if (
        isinstance(node, exp.Table)
        and not node.args.get("db")
        and node.name.lower() in env
    ):
        alias = node.args.get("alias") or exp.TableAlias(
            this=exp.to_identifier(node.name)
        )
        return exp.Subquery(  # a PIVOT of it stays on it (`pivots`)
            this=env[node.name.lower()].copy(),
            alias=alias,
            pivots=node.args.get("pivots"),
        )
    for arg, value in list(node.args.items()):
        if isinstance(value, exp.Expression):
            node.set(arg, _inline(value, env))
        elif isinstance(value, list):
            node.set(
                arg,
                [
                    _inline(v, env) if isinstance(v, exp.Expression) else v
                    for v in value
                ],
            )
    return node


def _renamed(body: exp.Expression, columns: list[str], cte) -> exp.Expression:
    """`WITH name (c1, c2) AS (...)`: the query's items named c1, c2."""
    if not isinstance(body, exp.Select) or len(body.expressions) != len(columns):
        raise unsupported(
            f"{len(columns)} column names for the query of {cte.alias}", cte
        )
    body.set(
        "expressions",
        [exp.alias_(e.unalias(), c) for e, c in zip(body.expressions, columns)],
    )
    return body
