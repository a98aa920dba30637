"""pydbsp as a benchmark peer: the query as a DBSP circuit (BENCHMARKS.md).

pydbsp (https://pypi.org/project/pydbsp/) is a pure-Python implementation
of DBSP. It needs Python >= 3.12 while this project runs on 3.11, so its
benchmark worker runs in a separate virtual environment, ``.venv-dbsp`` at
the repository root, made from a Python >= 3.12 found on the machine
(`newer_python`) with ``pip install -e '.[dbsp]'``. The
harness creates it on first use; by hand::

    python -m bench.peers.dbsp --setup

`DBSPEngine` translates the query IR the way `PathwayEngine` does, into
pydbsp's own operators on its two-axis time lattice (outer axis = batch of
the stream, inner axis unused), as its README wires a SQL pipeline:

- one ``Input`` per stored relation, lifted with ``LiftStreamIntroduction``;
- per atom, its local filters (``LiftLiftSelect``), NOT IN / NOT EXISTS as
  the rows minus their semi-join with the distinct keys of the inner view,
  and the projection onto the atom's variables (``LiftLiftProject``);
- the atoms joined in a connected order with the incremental bilinear join
  ``IndexedDeltaLiftedDeltaLiftedJoin`` on the shared variables (a
  cartesian product joins on the empty key); θ-predicates are filters
  placed as soon as their variables are bound, then the residual
  conditions;
- the SELECT list as a projection, DISTINCT as
  ``DeltaLiftedDeltaLiftedDistinct``, GROUP BY as
  ``DeltaLiftedDeltaLiftedGroupBy`` whose aggregate re-reads each changed
  group (sums of exact decimals as scaled integers, as dynyan does);
  subqueries are inner circuits whose output feeds the outer atoms.

The stream is fed in batches: every step pushes one Z-set delta per
relation (its events of the batch, summed). Pull mode integrates the output
(``Integrate``) and enumerates it at the end; push mode sends every entry of
each step's output delta to the sink. The evaluator is compacted after each
step, as pydbsp documents for forward-only reads.

Only the setup helpers run under this project's Python; everything that
imports pydbsp runs in the worker under ``.venv-dbsp``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from dynyan.compiler.ir import InnerTest, Op, Query, Var
from dynyan.compiler import functions
from dynyan.compiler.render import Expressions, py, tuple_literal

from .common import base_relations, has_inner_test, require_plain_query

PYDBSP_VERSION = "2.1.0"  # also pinned in pyproject.toml, extra "dbsp"
ROOT = Path(__file__).resolve().parent.parent.parent  # the checkout
VENV = ROOT / ".venv-dbsp"


# --- the Python >= 3.12 environment ---------------------------------------------


def _venv_python() -> Path:
    return VENV / "bin" / "python"


def _probe(exe: str | Path) -> str | None:
    """pydbsp's version in interpreter `exe` (with dynyan's dependencies), or None."""
    code = (
        "import importlib.metadata as m, pydbsp, sqlglot, jinja2, black;"
        "print(m.version('pydbsp'))"
    )
    try:
        proc = subprocess.run(
            [str(exe), "-c", code], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def dbsp_python(create: bool = True, log=None) -> tuple[str | None, str | None]:
    """(interpreter for the pydbsp worker, None), or (None, why there is none).

    ``$DYNYAN_DBSP_PYTHON`` names an interpreter to use as it is; else
    ``.venv-dbsp`` is used, and with `create` made (or repaired) first."""
    override = os.environ.get("DYNYAN_DBSP_PYTHON")
    if override:
        version = _probe(override)
        if version != PYDBSP_VERSION:
            return None, (
                f"$DYNYAN_DBSP_PYTHON={override} has pydbsp {version or 'missing'}, "
                f"not {PYDBSP_VERSION} (or lacks dynyan's dependencies)"
            )
        return override, None
    exe = _venv_python()
    if exe.exists() and _probe(exe) == PYDBSP_VERSION:
        return str(exe), None
    if not create:
        return None, (
            f"no pydbsp environment yet ({VENV.name}; make it with "
            "`python -m bench.peers.dbsp --setup`)"
        )
    return setup_venv(log)


def setup_venv(log=None) -> tuple[str | None, str | None]:
    """Make ``.venv-dbsp``: a Python >= 3.12 venv with pydbsp and this
    project installed (``pip install -e '.[dbsp]'``, from PyPI)."""
    import fcntl
    import shutil

    base = newer_python()
    if base is None:
        return None, (
            "pydbsp needs Python >= 3.12 and none was found (not on PATH, not "
            "in pyenv, no $DYNYAN_PY312)"
        )
    exe = _venv_python()
    lock_path = ROOT / ".venv-dbsp.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one creator at a time (pytest -n)
        if exe.exists() and _probe(exe) == PYDBSP_VERSION:
            return str(exe), None
        if log:
            log(f"creating {VENV} from {base} (pydbsp {PYDBSP_VERSION})")
        if VENV.exists():
            shutil.rmtree(VENV)
        steps = [
            [base, "-m", "venv", str(VENV)],
            [
                str(exe),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--retries",
                "1",
                "--timeout",
                "20",
                "-e",
                f"{ROOT}[dbsp]",
            ],
        ]
        for cmd in steps:
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            except (OSError, subprocess.SubprocessError) as err:
                return None, f"could not create {VENV.name}: {err}"
            if proc.returncode != 0:
                tail = " | ".join(
                    (proc.stderr or proc.stdout).strip().splitlines()[-2:]
                )
                return None, (
                    f"could not create {VENV.name} ({' '.join(cmd[2:4])} failed; "
                    f"offline?): {tail[-300:]}"
                )
    version = _probe(exe)
    if version != PYDBSP_VERSION:
        return None, f"{VENV.name} was made but has pydbsp {version}"
    return str(exe), None


def newer_python(minimum: tuple[int, int] = (3, 12)) -> str | None:
    """Path of a working Python >= `minimum` (pydbsp needs 3.12): on PATH,
    or installed by pyenv, or $DYNYAN_PY312."""
    import glob
    import os

    candidates = [os.environ.get("DYNYAN_PY312", "")]
    for minor in range(14, minimum[1] - 1, -1):
        candidates.append(shutil.which(f"python3.{minor}") or "")
        root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
        candidates += sorted(glob.glob(f"{root}/versions/3.{minor}.*/bin/python3"))
    for exe in candidates:
        if not exe:
            continue
        try:
            proc = subprocess.run(
                [
                    exe,
                    "-c",
                    "import sys; print(sys.version_info[:2] >= %r)" % (minimum,),
                ],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if proc.returncode == 0 and proc.stdout.strip() == "True":
            return exe
    return None


# --- the engine ----------------------------------------------------------------------


class _Sentinel:
    """Stands in every global aggregate's group so it has its row on an
    empty input (SQL: one row, COUNT 0 and SUM NULL)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<group sentinel>"


SENTINEL = _Sentinel()


def _guard(exprs, channel, atom: int, env) -> str | None:
    """Python true when atom `atom`'s part of a channel's argument is not
    NULL (None when it cannot be)."""
    for a, es in channel.guards:
        if a == atom:
            return " and ".join(dict.fromkeys(exprs.nonnull(e, env) for e in es))
    return None


def _no_null_key(key, value):
    """`value`, if `key` holds no NULL (NOT IN's three-valued logic with a
    NULL depends on the whole subquery: refused rather than approximated)."""
    if key is None or (isinstance(key, tuple) and None in key):
        raise NotImplementedError(
            "NOT IN with a NULL on either side (pydbsp adapter: the three-valued "
            "result depends on the whole subquery)"
        )
    return value


def _namespace(expressions: Expressions) -> dict:
    ns = functions.peer_namespace(expressions.constants)
    ns.update({"SENT": SENTINEL, "_no_null_key": _no_null_key})
    return ns


def _fn(args: str, body: str, expressions: Expressions):
    """A function `lambda args: body` over rendered expressions."""
    ns = _namespace(expressions)
    exec(compile(f"def _f({args}):\n    return {body}\n", "<dynyan dbsp>", "exec"), ns)
    return ns["_f"]


def _pick(name: str, positions: list[int]) -> str:
    """Key of a tuple `name`: one value, a tuple of values, or ()."""
    if len(positions) == 1:
        return f"{name}[{positions[0]}]"
    return tuple_literal([f"{name}[{p}]" for p in positions]) if positions else "()"


class DBSPEngine:
    """The query as a pydbsp circuit, fed one batch of the stream per step.

    ``prepare`` (untimed) turns the events into per-step Z-set deltas;
    ``build`` makes the circuit and its evaluator; ``run(lo, hi, sink)``
    applies steps ``lo`` to ``hi - 1``; ``enumerate`` yields the integrated
    result (pull mode). A query the adapter cannot express raises
    NotImplementedError (reported as unavailable)."""

    def __init__(self, query: Query):
        require_plain_query(query, "pydbsp adapter")
        self.query = query
        self.relations = [r.name for r in base_relations(query)]
        self.steps: list[dict] = []
        self.last = -1

    def prepare(self, events, batch: int) -> None:
        """One dict ``relation -> {row: weight}`` per batch of `batch` events
        (at least one step, so a global aggregate gets its empty-input row)."""
        steps = []
        for lo in range(0, max(len(events), 1), batch):
            deltas: dict[str, dict] = {}
            for rel, op, row in events[lo : lo + batch]:
                d = deltas.setdefault(rel, {})
                n = d.get(row, 0) + op
                if n:
                    d[row] = n
                else:
                    del d[row]
            steps.append(deltas)
        self.steps = steps

    # -- the circuit

    def build(self, push: bool) -> None:
        from pydbsp.circuit import Circuit
        from pydbsp.compute import ComputeCtx
        from pydbsp.core import Antichain, dbsp_time
        from pydbsp.evaluate import Evaluator
        from pydbsp.operator import Input, Integrate, LiftStreamIntroduction
        from pydbsp.storage import DictStorage
        from pydbsp.zset import ZSetAddition

        self.gz = gz = ZSetAddition()
        self.ev = Evaluator(
            circuit=Circuit(),
            storage=DictStorage(),
            ctx=ComputeCtx(lattice=dbsp_time(2)),
            group=gz,
        )
        c = self.c = self.ev.circuit
        self.inputs: dict[str, int] = {}
        self.streams: dict[str, int] = {}
        for name in [*self.relations, SENTINEL]:
            node = Input(frontier=Antichain(dbsp_time(1))).connect(c, ())
            self.inputs[name] = node
            self.streams[name] = LiftStreamIntroduction(group=gz).connect(c, (node,))
        self.uses_sentinel = False
        self.out = self._query(self.query)
        self.view = None if push else Integrate(group=gz).connect(c, (self.out,))
        self.last = -1

    def _add(self, a: int, b: int) -> int:
        from pydbsp.operator import Lift2

        return Lift2(op=self.gz.add).connect(self.c, (a, b))

    def _select(self, node: int, cond: str, expressions: Expressions, arg="t"):
        from pydbsp.relational_operators import LiftLiftSelect

        pred = _fn(arg, cond, expressions)
        return LiftLiftSelect(pred=pred).connect(self.c, (node,))

    def _project(self, node: int, body: str, expressions: Expressions, arg="t"):
        from pydbsp.relational_operators import LiftLiftProject

        return LiftLiftProject(f=_fn(arg, body, expressions)).connect(self.c, (node,))

    def _join(self, a: int, key_a: str, b: int, key_b: str, proj: str, exprs):
        """Incremental equi-join of two 2-D streams on keys `key_a(t)` = `key_b(u)`."""
        from pydbsp.indexed_relational_operators import (
            IndexedDeltaLiftedDeltaLiftedJoin,
            LiftLiftIndex,
        )
        from pydbsp.indexed_zset import IndexedZSetAddition

        ka, kb = _fn("t", key_a, exprs), _fn("t", key_b, exprs)
        ia = LiftLiftIndex(indexer=ka).connect(self.c, (a,))
        ib = LiftLiftIndex(indexer=kb).connect(self.c, (b,))
        return IndexedDeltaLiftedDeltaLiftedJoin(
            proj=_fn("k, a, b", proj, exprs),
            group_a=IndexedZSetAddition(self.gz, ka),
            group_b=IndexedZSetAddition(self.gz, kb),
            out_group=self.gz,
        ).connect(self.c, (ia, ib))

    def _distinct(self, node: int) -> int:
        from pydbsp.relational_operators import DeltaLiftedDeltaLiftedDistinct

        return DeltaLiftedDeltaLiftedDistinct(inner_group=self.gz).connect(
            self.c, (node,)
        )

    def _query(self, q: Query) -> int:
        """The 2-D delta stream of query `q`'s output rows."""
        virtual = {name: self._query(sub) for name, sub in q.subqueries}
        exprs = Expressions()
        shared = {
            v
            for a in q.atoms
            for v in a.vars
            if sum(v in b.vars for b in q.atoms) > 1
            or any(v in p.vars for p in q.predicates)
        }
        leaves = []  # (node, field names)
        for k, atom in enumerate(q.atoms):
            rel = q.relation(atom.relation)
            node = (
                virtual[atom.relation]
                if atom.relation in virtual
                else self.streams[atom.relation]
            )
            env = {(k, c): f"r[{c}]" for c in range(len(rel.columns))}
            conds, antis = [], []
            first: dict[str, str] = {}  # variable -> its value on the row
            for c, v in enumerate(atom.variables):
                if v is None:
                    continue
                if v in first:
                    conds.append(f"r[{c}] == {first[v]}")
                    continue
                first[v] = f"r[{c}]"
                if v in shared:  # SQL: NULL never joins nor compares
                    conds.append(f"r[{c}] is not None")
            for v, e in atom.derived:
                value = exprs.render(e, env)
                if v in first:
                    conds.append(f"{value} == {first[v]}")
                else:
                    first[v] = value
            for f in atom.filters:
                if isinstance(f, InnerTest):
                    antis.append(f)
                elif has_inner_test(f):
                    raise NotImplementedError(
                        "anti-join inside an expression (pydbsp adapter)"
                    )
                else:
                    conds.append(exprs.condition(f, env))
            if conds:
                node = self._select(node, " and ".join(conds), exprs, "r")
            for f in antis:
                node = self._anti(node, f, virtual, exprs)
            fields = list(atom.vars)
            values = [first[v] for v in fields]
            if q.grouped:  # this atom's factors of the payload channels
                for i, ch in enumerate(q.channels):
                    for j, ((a, e), scale) in enumerate(
                        zip(ch.factors, ch.factor_scales)
                    ):
                        if a != k:
                            continue
                        text = exprs.render(e, env)
                        nn = _guard(exprs, ch, k, env)
                        if nn:  # SQL: a NULL argument is not computed with
                            text = f"({text} if {nn} else 0)"
                        if scale is not None:
                            text = (
                                f"round({text})"
                                if scale == 0
                                else f"round({text} * {10**scale})"
                            )
                        fields.append(("factor", i, j))
                        values.append(text)
                    nn = _guard(exprs, ch, k, env)
                    if nn:  # SQL: a row whose argument is NULL adds 0
                        fields.append(("guard", i, k))
                        values.append(f"(1 if {nn} else 0)")
            node = self._project(node, tuple_literal(values), exprs, "r")
            leaves.append((node, fields))

        # joins in a connected order (as the Pathway adapter)
        order = [0]
        while len(order) < len(q.atoms):
            bound = {v for j in order for v in q.atoms[j].vars}
            rest = [j for j in range(len(q.atoms)) if j not in order]
            order.append(
                max(rest, key=lambda j: (len(set(q.atoms[j].vars) & bound), -j))
            )
        acc, names = leaves[order[0]][0], list(leaves[order[0]][1])
        placed: set = set()
        acc = self._predicates(q, acc, names, placed, exprs)
        for j in order[1:]:
            node, fields = leaves[j]
            keys = [f for f in fields if f in names]
            new = [i for i, f in enumerate(fields) if f not in names]
            key_a = _pick("t", [names.index(f) for f in keys])
            key_b = _pick("t", [fields.index(f) for f in keys])
            if len(new) == len(fields):
                proj = "a + b"
            else:
                proj = "a + " + tuple_literal([f"b[{i}]" for i in new])
            acc = self._join(acc, key_a, node, key_b, proj, exprs)
            names += [fields[i] for i in new]
            acc = self._predicates(q, acc, names, placed, exprs)
        env = {f: f"t[{i}]" for i, f in enumerate(names) if isinstance(f, str)}
        for cond in q.residual:
            acc = self._select(acc, exprs.condition(cond, env), exprs)
        if not q.grouped:
            outs = [exprs.render(o.expr, env) for o in q.outputs]
            out = self._project(acc, tuple_literal(outs), exprs)
            return self._distinct(out) if q.distinct else out
        out = self._aggregate(q, acc, names, exprs)
        out = self._select(out, "kv[1] is not None", exprs, "kv")
        out = self._project(out, "kv[1]", exprs, "kv")
        return self._distinct(out) if q.distinct else out

    def _predicates(self, q, acc, names, placed, exprs):
        """θ-predicates whose variables are all bound now, as one filter."""
        env = {f: f"t[{i}]" for i, f in enumerate(names) if isinstance(f, str)}
        conds = []
        for p in q.predicates:
            if p in placed or not p.vars <= set(env):
                continue
            placed.add(p)
            ops = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "ne": "!=", "eq": "=="}
            offset = f" + {py(p.offset)}" if getattr(p, "offset", 0) else ""
            left = exprs.render(Var(p.left), env)
            right = exprs.render(Var(p.right), env)
            conds.append(f"({left} {ops[p.op]} {right}{offset})")
        return self._select(acc, " and ".join(conds), exprs) if conds else acc

    def _anti(self, node: int, f, virtual: dict, exprs) -> int:
        """The rows of `node` whose key is not in the inner view (NOT IN /
        NOT EXISTS): the rows minus their semi-join with the distinct keys."""
        from pydbsp.operator import Lift1

        name = f.view
        cols = [r.column for r in f.keys]
        key_row = _pick("r", cols)
        key_out = _pick("o", list(range(len(cols))))
        inner = virtual[name]
        if f.kind == "not_in":
            # x NOT IN (…): refuse NULLs instead of the three-valued logic
            probe = self._project(node, f"_no_null_key({key_row}, r)", exprs, "r")
            keys = self._project(
                inner, f"_no_null_key({key_out}, {key_out})", exprs, "o"
            )
        else:  # NOT EXISTS: a NULL matches nothing, so its row stays
            nulls = " and ".join(f"r[{c}] is not None" for c in cols)
            probe = self._select(node, nulls, exprs, "r")
            not_null = " and ".join(f"o[{i}] is not None" for i in range(len(cols)))
            keys = self._project(
                self._select(inner, not_null, exprs, "o"), key_out, exprs, "o"
            )
        keys = self._distinct(keys)
        semi = self._join(probe, _pick("t", cols), keys, "t", "a", exprs)
        return self._add(node, Lift1(f=self.gz.neg).connect(self.c, (semi,)))

    def _aggregate(self, q: Query, acc: int, names: list, exprs) -> int:
        """GROUP BY: ``(group key, output row or None)`` deltas."""
        from pydbsp.indexed_relational_operators import (
            DeltaLiftedDeltaLiftedGroupBy,
            LiftLiftIndex,
        )
        from pydbsp.indexed_zset import IndexedZSetAddition

        pos = {f: i for i, f in enumerate(names)}
        gpos = [pos[v] for v in q.group_vars]
        if gpos:
            # a comparable key even with NULLs: (is NULL, value)
            parts = [f"(t[{p}] is None, t[{p}])" for p in gpos]
            key = tuple_literal(parts)
        else:
            key = "()"
            acc = self._add(acc, self.streams[SENTINEL])
            self.uses_sentinel = True
        keyfn = _fn("t", key, exprs)
        lines = ["def _agg(items):", "    n = 0"]
        for i in range(len(q.channels)):
            lines.append(f"    s{i + 1} = 0")
        extras = [a for a in q.extra_vars]
        for i in range(len(extras)):
            lines.append(f"    d{i} = {{}}")
        lines += [
            "    last = None",
            "    for t, w in items:",
            "        if t is SENT:",
            "            continue",
            "        last = t",
            "        n += w",
        ]
        for i, ch in enumerate(q.channels):
            factors = [
                f"t[{pos[('factor', i, j)]}]" for j in range(len(ch.factors))
            ] or ["1"]
            factors += [f"t[{pos[('guard', i, k)]}]" for k, _ in ch.guards]
            lines.append(f"        s{i + 1} += w * " + " * ".join(factors))
        for i, v in enumerate(extras):
            lines += [
                f"        v = t[{pos[v]}]",
                "        if v is not None:",
                f"            d{i}[v] = d{i}.get(v, 0) + w",
            ]
        if gpos:
            lines.append("    if n == 0:")
            lines.append("        return None")
        genv: dict = {}
        for i, v in enumerate(q.group_vars):
            lines.append(f"    g{i} = last[{pos[v]}]")
            genv[v] = f"g{i}"
        for i in range(len(extras)):
            lines.append(f"    e{i} = [v for v, c in d{i}.items() if c > 0]")
        for i, a in enumerate(q.aggregates):
            nonnull = f"s{a.nonnull}" if a.nonnull else "n"
            value = functools.partial(functions.aggregate_value, a.kind, nonnull)
            if a.kind == "count":
                value = value()
            elif a.kind in ("min", "max", "count_distinct") and a.arg in genv:
                g = genv[a.arg]  # a group variable: constant in its group
                value = value(
                    extreme=g,
                    distinct=f"(0 if n == 0 or {g} is None else 1)",
                    empty="n == 0",
                )
            elif a.kind in ("min", "max", "count_distinct"):
                e = f"e{extras.index(a.arg)}"
                value = value(
                    extreme=f"{a.kind}({e})", distinct=f"len({e})", empty=f"not {e}"
                )
            elif a.kind in ("sum", "avg"):
                terms = [
                    (
                        coef,
                        "n" if ch == 0 else f"s{ch}",
                        0 if ch == 0 else q.channels[ch - 1].scale,
                    )
                    for coef, ch in a.terms
                ]
                value = value(total=functions.linear_total(terms))
            else:
                raise NotImplementedError(f"aggregate {a.kind} (pydbsp adapter)")
            lines.append(f"    a{i} = {value}")
            genv[("agg", i)] = f"a{i}"
        if q.having is not None:
            cond = exprs.condition(q.having, genv)  # NULL is not TRUE
            lines.append(f"    if not ({cond}):")
            lines.append("        return None")
        outs = [exprs.render(o.expr, genv) for o in q.outputs]
        lines.append(f"    return {tuple_literal(outs)}")
        ns = _namespace(exprs)
        exec(compile("\n".join(lines) + "\n", "<dynyan dbsp aggregate>", "exec"), ns)
        indexed = LiftLiftIndex(indexer=keyfn).connect(self.c, (acc,))
        return DeltaLiftedDeltaLiftedGroupBy(
            aggregate=ns["_agg"],
            group=IndexedZSetAddition(self.gz, keyfn),
            out_group=self.gz,
        ).connect(self.c, (indexed,))

    # -- running

    def run(self, lo: int, hi: int, sink=None) -> None:
        """Apply steps lo … hi-1; in push mode every output change goes to
        ``sink(row, change)``."""
        from pydbsp.zset import ZSet

        ev, inputs, steps = self.ev, self.inputs, self.steps
        target = self.out if self.view is None else self.view
        for t in range(lo, hi):
            deltas = steps[t]
            for rel, node in inputs.items():
                if rel is SENTINEL:
                    ev.push(node, ZSet({SENTINEL: 1} if t == 0 else {}))
                else:
                    d = deltas.get(rel)
                    ev.push(node, ZSet(dict(d) if d else {}))
            value = ev.read(target, (t, 0))
            if sink is not None:
                for row, w in value.inner.items():
                    sink(row, w)
            ev.compact()
            self.last = t

    def enumerate(self):
        if self.view is None or self.last < 0:
            return iter(())
        return iter(self.ev.read(self.view, (self.last, 0)).inner.items())


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m bench.peers.dbsp",
        description="The Python >= 3.12 environment of the pydbsp benchmark peer.",
    )
    parser.add_argument(
        "--setup", action="store_true", help=f"create {VENV.name} if needed"
    )
    args = parser.parse_args(argv)
    exe, reason = dbsp_python(
        create=args.setup, log=lambda m: print(m, file=sys.stderr)
    )
    if exe is None:
        print(reason, file=sys.stderr)
        return 1
    print(exe)
    return 0


if __name__ == "__main__":
    sys.exit(main())
