"""The engines the benchmark compares dynyan against (docs/design.md, "Benchmarks").

Every peer reads the same pre-decoded stream, a list of ``(relation, op,
row)`` events (``op`` is +1 or -1, rows follow the generated module's
contract), and produces the query result as a bag:

- `store.StoreOnly`: the floor. Inserts every event into a per-relation dict
  ``row -> count`` and computes nothing; any engine must at least do this.
- `ivm.FirstOrderIVM`: classical first-order incremental view maintenance. It
  materialises the query result in a dict ``row -> multiplicity`` and, on an
  update of relation R, evaluates the delta query ΔR ⋈ (the other atoms) with
  hash indexes on the join columns. Like dynyan it is compiled to specialised
  Python (nested loops over the indexes), so the comparison is between data
  structures, not between an interpreter and generated code. Subqueries are
  inner IVMs; `ivm.make_ivm` also builds set operations (outer joins).
- `recompute.DuckDBRecompute`: keeps DuckDB tables in sync batch by batch and
  re-evaluates the whole query after every batch (materialising the result
  in a DuckDB table); push mode diffs consecutive results.
- `pathway.PathwayEngine`: the same query as a Pathway dataflow over an
  in-memory table with ``__time__``/``__diff__`` columns (one timestamp per
  batch); a delete carries the row id of the insert it undoes.
- `dbsp.DBSPEngine`: pydbsp's incremental operators, in a Python >= 3.12 venv.

A peer that cannot express a query raises NotImplementedError with the
construct it lacks (`common.require_plain_query` for pydbsp and Pathway);
the harness reports it "unavailable" with that reason.

Heavy imports (duckdb, pandas, pathway) happen inside the engines, so
importing these modules is cheap. Peers trust their input (the stream was
validated when it was built): unlike the generated views they do not check
arity or refuse deletes of absent rows.
"""
