"""What the passes of one compilation share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from ..ir import GUARD_ROWS, GUARD_TIES, Ordering, Query, Relation

# A scalar subquery without an aggregate (`passes/single_rows`): the key of
# its SELECT's meta holding what counts its rows, and the column of that
# count in its inner view (`unnest_subqueries.virtual`, `Relation.guard`).
ROWS = "dynyan_rows"
COLUMN = GUARD_ROWS
# A window that needs the rows of a partition told apart over an order that
# may tie (`passes/window_aggregates`): the table of its groups of peers is
# marked the same way, its count in the column named under this meta key
# (TIES), so the View reads nothing while two rows tie.
GUARD_COLUMN = "dynyan_guard_column"
TIES = GUARD_TIES


@dataclass
class PendingTest:
    """A condition of WHERE that reads an inner view (NOT IN, [NOT] EXISTS,
    a comparison with a scalar subquery), its expressions still SQL: the
    builder turns it into an `InnerTest` on the atom holding its columns.
    In `condition`, the inner view's columns are `__inner.cN` (N from 1).
    `null_safe`: per key, whether it is matched by IS NOT DISTINCT FROM
    (a NULL key then matches a NULL) rather than `=` (it matches nothing)."""

    kind: str
    view: str
    keys: list[exp.Expression]
    node: exp.Expression  # where the query says it (for messages)
    value: exp.Expression | None = None
    op: str = ""
    default: object = None
    condition: exp.Expression | None = None
    negated: bool = False
    null_safe: tuple[bool, ...] = ()


# meta key of a derived table's SELECT whose windows an inner view computes
# over its rows (`passes/native_windows`): what each window computes
NATIVE = "native_windows"


@dataclass
class Context:
    """The relations a SELECT may read (declared tables and the virtual
    relations its inner views produce), the views of the file, and the
    inner views made so far for the SELECT being compiled."""

    relations: dict[str, Relation]
    views: dict[str, exp.Expression] = field(default_factory=dict)
    subqueries: list[tuple[str, Query]] = field(default_factory=list)
    # Compiles a (qualified) subquery into its own `Query`: the frontend's
    # select pipeline, handed to the passes that make inner views.
    compile: Callable[[exp.Expression, "Context"], Query] | None = None
    # The outermost query (only its ORDER BY / LIMIT shape the result), and
    # the ordering the passes found for it.
    top: bool = True
    ordering: Ordering | None = None
    # Conditions on inner views the SELECT being compiled has left to build.
    tests: list[PendingTest] = field(default_factory=list)
    # The derived tables of the SELECT being compiled, by SQL text: the same
    # text read twice (a self-join of one derived table) is one inner view.
    derived: dict[str, str] = field(default_factory=dict)
    # Whether the planner joins a query's atoms as they are (else its cyclic
    # part is grouped into bags, passes/decompose_cycles.py).
    acyclic: Callable[[Query], bool] | None = None
    # The queries compiled for inner views, by SQL text and the relations
    # it reads: shared by every context of one program (see `virtual`).
    compiled: dict = field(default_factory=dict)
    # SELECTs whose LEFT JOINs were padded (`passes/outer_joins`), as they
    # were before: compiled instead where padding leaves a join the planner
    # cannot tree (a condition from the padded table to a third one).
    unpadded: dict[int, exp.Select] = field(default_factory=dict)
    # Whether a LEFT JOINed table read only in sums may stay a table whose
    # atom reads as a NULL-padded row where it has none (`Atom.padded`):
    # off when the planner found no tree for such a leaf.
    padded_leaves: bool = True
    # Table statistics (`dynyan.compiler.stats.Stats`), where the plan is
    # compiled with them: rewrites that pay off only on large groups read
    # the sizes they estimate (`passes/top_rows`). None: sizes unknown.
    stats: object = None
    # Windows over a SELECT's rows computed by a view that keeps each
    # partition in order (`passes/native_windows`); off: rewritten into
    # joins (`passes/window_aggregates`), as the peers read them.
    native_windows: bool = True

    def inner(self) -> "Context":
        """The context of a subquery: the same relations, its own inner views."""
        return Context(
            dict(self.relations),
            self.views,
            compile=self.compile,
            top=False,
            acyclic=self.acyclic,
            compiled=self.compiled,
            unpadded=self.unpadded,
            stats=self.stats,
            native_windows=self.native_windows,
        )

    def fresh_name(self, prefix: str) -> str:
        """A relation name not taken yet: prefix + a number."""
        name = f"{prefix}{len(self.subqueries) + 1}"
        while name in self.relations:
            name += "_"
        return name


def from_items(select: exp.Select) -> list[exp.Expression]:
    """The tables, derived tables and LATERALs of a SELECT's FROM and joins,
    in order."""
    from_ = select.args.get("from_") or select.args.get("from")
    items = [from_.this] if from_ is not None else []
    return items + [j.this for j in select.args.get("joins") or []]


def output_names(item: exp.Expression, relations: dict) -> list[str] | None:
    """The columns a FROM item gives, in order (None: not known here: a
    table of another schema, a derived table with `*` left in it)."""
    if isinstance(item, exp.Table) and not item.args.get("db"):
        relation = relations.get(item.name.lower())
        return list(relation.columns) if relation is not None else None
    if isinstance(item, exp.Subquery) and isinstance(item.this, exp.Select):
        names = []
        for e in item.this.expressions:
            if isinstance(e, exp.Star) or (
                isinstance(e, exp.Column) and isinstance(e.this, exp.Star)
            ):  # `*`, `t.*`: the columns of the sources it names
                table = e.table.lower() if isinstance(e, exp.Column) else ""
                for source in from_items(item.this):
                    if table and (source.alias_or_name or "").lower() != table:
                        continue
                    given = output_names(source, relations)
                    if given is None:
                        return None
                    names += given
            elif not e.alias_or_name:
                return None
            else:
                names.append(e.alias_or_name)
        return names
    return None


def declared_digits(
    x: exp.Expression, select: exp.Select | None, relations: dict
) -> int | None:
    """The decimal digits column `x` holds exactly (INTEGER 0, DECIMAL(p, s)
    s) where it is a column of a declared table in the FROM of `select`;
    None where it is anything else, or may be."""
    if not isinstance(x, exp.Column) or select is None:
        return None
    sources = {}  # the name a source goes by -> its declared table, or None
    for item in from_items(select):
        table = isinstance(item, exp.Table) and not item.args.get("db")
        rel = relations.get(item.name.lower()) if table else None
        sources[(item.alias or item.name).lower()] = rel
    name = x.name.lower()
    if x.table:
        found = [sources.get(x.table.lower())]
    else:  # the one source that has the column (a derived table may)
        found = [r for r in sources.values() if r is None or name in r.columns]
    if len(found) != 1 or found[0] is None or name not in found[0].columns:
        return None
    rel = found[0]
    i = rel.columns.index(name)
    if not rel.scales or rel.types[i] not in ("int", "float"):
        return None
    return rel.scales[i]


def from_aliases(select: exp.Select) -> set[str]:
    """The names the sources of a SELECT's FROM go by."""
    return {(item.alias or item.name).lower() for item in from_items(select)}


def reads_outer(inner: exp.Select) -> bool:
    """Whether a (qualified) subquery reads a column of an enclosing query
    (its nested subqueries' own columns aside)."""
    local = from_aliases(inner)
    for column in inner.find_all(exp.Column):
        owner = column.find_ancestor(exp.Select)
        if owner is inner and column.table and column.table.lower() not in local:
            return True
    return False


# `a op b` is `b op' a`
SWAPPED = {exp.LT: exp.GT, exp.LTE: exp.GTE, exp.GT: exp.LT, exp.GTE: exp.LTE}


def equated_columns(conds: list, own: set[str]) -> dict:
    """(alias, column) of another table -> the column of one of the tables
    `own` names that a conjunct `own_col = other_col` equates it to (the
    first): where the conjuncts hold, either reads the same value."""
    equal = {}
    for cond in conds:
        if not isinstance(cond, exp.EQ):
            continue
        a, b = cond.this, cond.expression
        if not (isinstance(a, exp.Column) and isinstance(b, exp.Column)):
            continue
        for mine, theirs in ((a, b), (b, a)):
            if mine.table.lower() in own and theirs.table.lower() not in own:
                equal.setdefault((theirs.table.lower(), theirs.name.lower()), mine)
    return equal


def sql_conjuncts(e: exp.Expression) -> list[exp.Expression]:
    """The AND-ed parts of a SQL condition (parentheses looked through)."""
    while isinstance(e, exp.Paren):
        e = e.this
    if isinstance(e, exp.And):
        return sql_conjuncts(e.this) + sql_conjuncts(e.expression)
    return [e]
