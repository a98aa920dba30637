"""Resolve every table and column name, then qualify them all.

Unknown, ambiguous or misplaced names are refused with a message in SQL
terms (sqlglot's own would be terse); then sqlglot's `qualify` writes every
column as `alias.column`, every table with an alias and every SELECT item
with its name, across subqueries (an outer column inside a correlated
subquery keeps its outer alias), so later passes never guess.

>>> import sqlglot
>>> from dynyan.compiler.frontend.context import Context
>>> from dynyan.compiler.frontend.statements import parse_schema
>>> ctx = Context(parse_schema("CREATE TABLE r (a INT, b INT); CREATE TABLE s (b INT, c INT);"))
>>> tree = sqlglot.parse_one("SELECT a, c FROM r JOIN s ON r.b = s.b", read="duckdb")
>>> print(qualify_names(tree, ctx).sql("duckdb"))
SELECT r.a AS a, s.c AS c FROM r AS r JOIN s AS s ON r.b = s.b
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify

from ....errors import SqlError
from ..context import Context
from ..diagnostics import DIALECT, line_col, sql_error, unsupported

# The schemas an unqualified declared table is in: DuckDB's and PostgreSQL's
# default (`dynyan follow` reads a table on the search path by its name).
DEFAULT_SCHEMAS = ("main", "public")


def qualify_names(tree: exp.Expression, ctx: Context) -> exp.Expression:
    _Names(ctx).check(tree, [])
    schema = {r.name: dict.fromkeys(r.columns, "INT") for r in ctx.relations.values()}
    inner_using = {id(s) for s in tree.find_all(exp.Select) if _inner_using(s)}
    try:
        tree = qualify(
            tree,
            schema=schema,
            dialect=DIALECT,
            quote_identifiers=False,
            validate_qualify_columns=True,
        )
    except OptimizeError as err:
        message = str(err).split(". Line")[0]
        if message.startswith("Cannot automatically join: "):
            column = message.split(": ", 1)[1]
            message = (
                f"USING ({column}): the tables on both sides of the join need "
                f"a column {column}"
            )
        raise SqlError(message, *line_col(str(err))) from None
    for select in tree.find_all(exp.Select):
        if id(select) in inner_using:
            _plain_using_columns(select)
    _unshadow(tree)
    return tree


def _unshadow(tree: exp.Expression) -> None:
    """Give a subquery's source that has the alias of a source around it
    (`FROM r WHERE r.a > ANY (SELECT r.a FROM r …)`) a fresh alias, so a
    pass that moves an outer column into the subquery (ANY/ALL, IN as
    EXISTS, unnesting) cannot have it captured by the inner source."""
    taken = {t.alias_or_name.lower() for t in tree.find_all(exp.Table)}
    taken |= {a.name.lower() for a in tree.find_all(exp.TableAlias)}
    for select in list(tree.find_all(exp.Select)):  # outer SELECTs first
        if not _in_condition(select):
            continue  # a derived table: the same text names the same view
        around = set()
        node = select.parent
        while node is not None:
            if isinstance(node, exp.Select):
                around.update(_source_items(node))
            node = node.parent
        own = _source_items(select)
        for alias, item in own.items():
            if alias not in around:
                continue
            n = 2  # the same subquery in two places gets the same name
            while f"{alias}_{n}" in taken | around | own.keys():
                n += 1
            fresh = f"{alias}_{n}"
            named = item.args.get("alias")
            if isinstance(named, exp.TableAlias):  # keeps AS t(a, b)'s columns
                named.set("this", exp.to_identifier(fresh))
            else:
                item.set("alias", exp.TableAlias(this=exp.to_identifier(fresh)))
            _rename_columns(select, alias, fresh)


def _in_condition(select: exp.Select) -> bool:
    """Whether `select` is a subquery of an expression (not a FROM item)."""
    node = select.parent
    while isinstance(node, (exp.Union, exp.Intersect, exp.Except)):
        node = node.parent
    if isinstance(node, exp.Subquery):
        return not isinstance(node.parent, (exp.From, exp.Join, exp.Lateral))
    return isinstance(node, (exp.Exists, exp.Any, exp.All, exp.In))


def _source_items(select: exp.Select) -> dict[str, exp.Expression]:
    """alias -> the FROM or JOIN item that defines it."""
    from_ = select.args.get("from_") or select.args.get("from")
    items = [from_.this] if from_ is not None else []
    items += [j.this for j in select.args.get("joins") or []]
    return {
        i.alias_or_name.lower(): i
        for i in items
        if isinstance(i, (exp.Table, exp.Subquery, exp.Lateral)) and i.alias_or_name
    }


def _rename_columns(select: exp.Select, alias: str, fresh: str) -> None:
    """alias.c -> fresh.c in `select` and the subqueries in it that do not
    define `alias` again."""
    stack = [select]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Column) and node.table.lower() == alias:
            node.set("table", exp.to_identifier(fresh))
        for child in node.iter_expressions():
            if isinstance(child, exp.Select) and alias in _source_items(child):
                continue
            stack.append(child)


def expand_stars(select: exp.Select, ctx: Context) -> bool:
    """Write `*` and `alias.*` of `select` as the columns they name, each
    qualified by its source (for passes that move a SELECT's items before
    names are qualified). False, and `select` unchanged, where a star is
    not that plain: USING or NATURAL merge columns, EXCLUDE/REPLACE/RENAME
    rewrite them."""
    stars = [e for e in select.expressions if is_star(e)]
    if not stars:
        return True
    joins = select.args.get("joins") or []
    if any(j.args.get("using") or j.args.get("method") for j in joins) or any(
        any(s.args.get(k) for k in ("except", "replace", "rename"))
        for e in stars
        for s in ([e] if isinstance(e, exp.Star) else [e.this])
    ):
        return False
    sources = _Names(ctx)._sources(select)
    items = []
    for e in select.expressions:
        if not is_star(e):
            items.append(e)
            continue
        named = [e.table.lower()] if isinstance(e, exp.Column) else list(sources)
        for alias in named:
            if alias not in sources:
                raise sql_error(f"{alias}.* names no table or subquery in FROM", e)
            items += [exp.column(c, table=alias) for c in sources[alias][1]]
    select.set("expressions", items)
    return True


def is_star(e: exp.Expression) -> bool:
    return isinstance(e, exp.Star) or (
        isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
    )


def _inner_using(select: exp.Select) -> bool:
    """Whether `select` joins with USING or NATURAL, every join inner."""
    joins = select.args.get("joins") or []
    return any(
        j.args.get("using") or j.args.get("method") == "NATURAL" for j in joins
    ) and all(not j.args.get("side") for j in joins)


def _plain_using_columns(select: exp.Select) -> None:
    """`qualify` writes a USING column as COALESCE(r.b, s.b); after inner
    joins, where r.b = s.b holds, it is r.b: a plain column (multiplicity()
    and the plain-column paths stay available). Only where the join
    conditions make the columns equal."""
    equal = set()
    for join in select.args.get("joins") or []:
        on = join.args.get("on")
        for eq in on.flatten() if isinstance(on, exp.And) else [on]:
            if isinstance(eq, exp.EQ) and all(
                isinstance(c, exp.Column) for c in (eq.this, eq.expression)
            ):
                a, b = eq.this.sql(), eq.expression.sql()
                equal |= {(a, b), (b, a)}
    for value in list(select.find_all(exp.Coalesce)):
        if value.parent_select is not select:
            continue  # (the SELECT list, GROUP BY, WHERE, … of this SELECT)
        columns = [value.this, *value.expressions]
        if all(isinstance(c, exp.Column) for c in columns) and all(
            any((c.sql(), d.sql()) in equal for d in columns[:i])
            for i, c in enumerate(columns)
            if i
        ):
            value.replace(value.this.copy())


class _Names:
    """Scope by scope: the sources of a SELECT (alias -> its columns) and
    the scopes around it (a correlated subquery sees the outer sources)."""

    def __init__(self, ctx: Context):
        self.relations = ctx.relations
        # A derived table is checked, and its output names read, once: the
        # sources of a SELECT are read both to check it and for its names,
        # which without these would double the work at every level of
        # nesting. id -> (node, result); the node keeps its id from reuse.
        self._checked: dict[int, exp.Expression] = {}
        self._outputs: dict[int, tuple[exp.Expression, tuple[str, ...]]] = {}

    def check(self, query: exp.Expression, outer: list[dict]) -> None:
        if isinstance(query, exp.Subquery):
            return self.check(query.this, outer)
        if isinstance(query, exp.SetOperation):
            self.check(query.this, outer)
            self.check(query.expression, outer)
            return
        if not isinstance(query, exp.Select):
            return
        sources = self._sources(query, outer)
        scopes = [sources, *outer]
        for inner in query.find_all(exp.Select):
            if (
                inner is not query
                and inner.parent_select is query
                and not _in_from(inner, query)
            ):
                self.check(inner, scopes)
        for col in query.find_all(exp.Column):
            if col.parent_select is query and not isinstance(col.this, exp.Star):
                self._resolve(col, query, scopes)

    def _sources(
        self, select: exp.Select, outer: list[dict] = ()
    ) -> dict[str, tuple[str, tuple[str, ...]]]:
        """alias -> (what it is, its column names), in FROM order (a LATERAL
        subquery sees the sources before it, and the scopes `outer`)."""
        sources: dict[str, tuple[str, tuple[str, ...]]] = {}
        from_ = select.args.get("from_") or select.args.get("from")
        items = [from_.this] if from_ is not None else []
        items += [j.this for j in select.args.get("joins") or []]
        for item in items:
            if isinstance(item, exp.Table):
                what, columns, alias = self._table(item)
            elif isinstance(item, exp.Lateral) and isinstance(item.this, exp.Subquery):
                self.check(item.this.this, [dict(sources), *outer])
                alias = item.alias.lower()
                if not alias:  # DuckDB names it; its columns are read unqualified
                    alias = f"__unnamed{len(sources) + 1}"
                    item.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
                columns = self.output_names(item.this.this)
                what = f"subquery {alias}"
            elif isinstance(item, exp.Subquery):
                if self._checked.get(id(item.this)) is not item.this:
                    self.check(item.this, [])
                    self._checked[id(item.this)] = item.this
                alias = item.alias.lower()
                if not alias:  # DuckDB names it; its columns are read unqualified
                    alias = f"__unnamed{len(sources) + 1}"
                    item.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
                renames = [c.name.lower() for c in item.args["alias"].columns]
                columns = tuple(renames) or self.output_names(item.this)
                what = f"subquery {alias}"
            else:
                raise unsupported("only tables may appear in FROM", item)
            if alias in sources:
                if isinstance(item, exp.Table) and not item.alias:
                    raise sql_error(
                        f"table {alias} appears twice in FROM: give each an alias "
                        f"(FROM {alias} {alias}1, {alias} {alias}2)",
                        item,
                    )
                raise sql_error(f"alias {alias} is used twice in FROM", item)
            sources[alias] = (what, columns)
        return sources

    def _table(self, table: exp.Table):
        name = table.name.lower()
        db = table.args.get("db")
        if (
            db is not None
            and db.name.lower() in DEFAULT_SCHEMAS
            and table.args.get("catalog") is None
            and name in self.relations
        ):
            table.set("db", None)  # main.r (DuckDB), public.r (PostgreSQL): r
        # A name in another schema (other.r) is not a declared table.
        if name not in self.relations or table.args.get("db"):
            declared = sorted(self.relations)
            shown = ".".join(part.name for part in table.parts)
            if not declared:
                raise sql_error(
                    f"unknown table {shown}: no table is declared (write CREATE "
                    "TABLE statements in the query file, or name a schema file "
                    "with --schema FILE or a `-- schema: PATH` line)",
                    table,
                )
            raise sql_error(
                f"unknown table {shown} (declared tables: {', '.join(declared)})",
                table,
            )
        return (
            f"table {name}",
            self.relations[name].columns,
            (table.alias or table.name).lower(),
        )

    def output_names(self, query: exp.Expression) -> tuple[str, ...]:
        """The column names a query gives (`*` expanded)."""
        if isinstance(query, exp.Subquery):
            return self.output_names(query.this)
        if isinstance(query, exp.SetOperation):
            return self.output_names(query.this)
        if not isinstance(query, exp.Select):
            return ()
        known = self._outputs.get(id(query))
        if known is not None and known[0] is query:
            return known[1]
        sources = self._sources(query)
        names: list[str] = []
        for e in query.expressions:
            if isinstance(e, exp.Star):
                names += [c for _, cols in sources.values() for c in cols]
            elif isinstance(e, exp.Column) and isinstance(e.this, exp.Star):
                names += list(sources.get(e.table.lower(), ("", ()))[1])
            else:
                names.append(e.alias_or_name.lower())
        self._outputs[id(query)] = (query, tuple(names))
        return tuple(names)

    def _resolve(self, col: exp.Column, select: exp.Select, scopes) -> None:
        name = col.name.lower()
        if col.table:
            alias = col.table.lower()
            for sources in scopes:
                if alias in sources:
                    what, columns = sources[alias]
                    if name not in columns:
                        raise sql_error(f"{what} has no column {name}", col)
                    return
            if _outer_alias(select, alias):
                raise unsupported(
                    "a derived table in FROM reads a column of the query around "
                    f"it ({_shown(col)}): a correlated derived table is not "
                    "supported; correlate the subquery itself instead (its WHERE "
                    "comparing its own columns with the outer query's)",
                    col,
                )
            raise sql_error(f"unknown table or alias {col.table} in {col.sql()}", col)
        order = col.find_ancestor(exp.Order, exp.Select)
        if isinstance(order, exp.Order) and _is_select_alias(select, name):
            return  # ORDER BY names an output column first (SQL)
        for sources in scopes:
            owners = sorted(a for a, (_, cols) in sources.items() if name in cols)
            if sources is scopes[0] and name in _merged(select, sources):
                return  # USING (k), NATURAL: one column k (as SQL reads it)
            if len(owners) > 1:
                raise sql_error(
                    f"ambiguous column {name} (in {', '.join(owners)}); qualify it", col
                )
            if owners:
                return
            if sources is scopes[0] and _is_select_alias(select, name):
                return
        raise sql_error(f"unknown column {name}", col)


def _merged(select: exp.Select, sources: dict) -> set[str]:
    """The columns `JOIN … USING (…)` and NATURAL joins of `select` merge:
    each one column, read unqualified. A NATURAL join merges the columns
    its table shares with the sources before it."""
    merged, before = set(), set()
    aliases = list(sources)
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is not None and aliases:
        before |= set(sources[aliases[0]][1])
    for i, join in enumerate(select.args.get("joins") or [], 1):
        own = set(sources[aliases[i]][1]) if i < len(aliases) else set()
        if join.args.get("using"):
            merged |= {u.name.lower() for u in join.args["using"]}
        elif join.args.get("method") == "NATURAL":
            merged |= own & before
        before |= own
    return merged


def _outer_alias(select: exp.Select, alias: str) -> bool:
    """Whether a SELECT around `select` has a source named `alias` (which a
    derived table cannot see: its scope starts afresh)."""
    node = select.parent
    while node is not None:
        if isinstance(node, exp.Select) and any(
            t.alias_or_name.lower() == alias
            for t in node.find_all(exp.Table, exp.Subquery)
            if t.parent_select is node
        ):
            return True
        node = node.parent
    return False


def _shown(col: exp.Column) -> str:
    """A column as a message shows it (a name the compiler made, __x, as
    the outer query's column)."""
    return "a column of the outer query" if col.table.startswith("__") else col.sql()


def _in_from(inner: exp.Select, select: exp.Select) -> bool:
    """Whether `inner` is (inside) a derived table of `select`."""
    node = inner
    while node.parent is not None and node.parent is not select:
        parent = node.parent
        if isinstance(parent, (exp.From, exp.Join)) and node is parent.this:
            return parent.parent is select
        node = parent
    return False


def _is_select_alias(select: exp.Select, name: str) -> bool:
    return any(
        e.alias_or_name.lower() == name
        for e in select.expressions
        if isinstance(e, exp.Alias)
    )
