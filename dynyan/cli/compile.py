"""`dynyan compile` and `dynyan explain`: a query file in, a module or a plan out."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..compiler.source import display_path, read_query


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file, so a failure never
    leaves a partial module. mkstemp creates the file 0600; it gets the mode
    an ordinary new file would have (0666 less the umask)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def default_output(query: str) -> Path:
    """generated/ mirrors queries/ (queries/tpch/fq4.sql -> generated/tpch/fq4.py);
    a query elsewhere goes to generated/<stem>.py."""
    path = Path(query).resolve()
    parts = path.parts
    if "queries" in parts:
        at = len(parts) - 1 - parts[::-1].index("queries")
        return Path("generated", *parts[at + 1 :]).with_suffix(".py")
    return Path("generated") / (path.stem + ".py")


def read_stats(path: str | None):
    """Planner statistics from `dynyan stats`, or None (plan by shape)."""
    if path is None:
        return None
    from ..compiler.stats import load_stats

    return load_stats(path)


def cmd_compile(args) -> int:
    from ..compiler import compile_sql

    sql, schema = read_query(args.query, args.schema)
    source = compile_sql(
        sql,
        schema,
        source=display_path(args.query),
        stats=read_stats(args.stats),
        trust_input=args.trust_input,
    )
    out = Path(args.output) if args.output else default_output(args.query)
    write_atomically(out, source)
    print(f"wrote {out}")
    return 0


def cmd_explain(args) -> int:
    from ..compiler import explain

    sql, schema = read_query(args.query, args.schema)
    stats = read_stats(args.stats)
    print(explain(sql, schema, stats))
    if args.triggers:
        print()
        print(explain_triggers(sql, schema, stats))
    if args.partitions or args.stream:
        print()
        print(explain_partitions(sql, schema, stats, args.stream))
    return 0


def explain_triggers(sql, schema, stats) -> str:
    """The structures and the steps of an update of each relation, and the
    dicts the module shares with its inner views (decided when rendering)."""
    from ..compiler import compile_query
    from ..compiler.render import read_from_siblings, render_module
    from ..compiler.triggers import explain_triggers as program_text
    from ..errors import DynyanError

    plan = compile_query(sql, schema, stats)
    shared: list[dict] = []
    try:
        render_module(plan, formatted=False, shared=shared)
    except DynyanError:  # a query the program describes but no module runs
        pass
    lines = [
        f"  {s['attr']}: the dict {s['index']} of inner view {s['view']}, whose "
        "trigger updates it (this view's update of it above is not run)"
        for s in shared
    ]
    if lines:
        lines.insert(
            0, "\nOne dict with an inner view's (same key, filter and payload):"
        )
    fed = [
        f"  inner view {name} takes the changes of inner view "
        + ", ".join(f"{other} (as its {own})" for own, other in siblings.items())
        + ", not base rows"
        for name, siblings in read_from_siblings(plan)
    ]
    if fed:
        fed.insert(0, "\nInner views fed another's changes (the same derived table):")
    return "\n".join([program_text(plan), *lines, *fed])


def explain_partitions(sql, schema, stats, stream_dir: str | None) -> str:
    """The partition variable and what is split and replicated; event
    weights from the stream's manifest, else the statistics' row counts."""
    from ..compiler import compile_query
    from ..compiler.partition import choose_partitioning, describe

    query = compile_query(sql, schema, stats).query
    if stream_dir is not None:
        from ..pipeline.streams import read_manifest

        relations = read_manifest(stream_dir)["relations"]
        sizes = {r: i["inserts"] + i["deletes"] for r, i in relations.items()}
        return describe(choose_partitioning(query, sizes, f"events of {stream_dir}"))
    if stats is not None:
        return describe(choose_partitioning(query, dict(stats.rows), "rows in --stats"))
    return describe(choose_partitioning(query))


def query_command(sub, name: str, help_: str, func):
    """A subcommand that takes a query file (and --schema, --stats)."""
    p = sub.add_parser(name, help=help_, description=help_)
    p.add_argument(
        "query", metavar="QUERY.sql", help="CREATE TABLEs (optional) and one SELECT"
    )
    p.add_argument(
        "--schema",
        metavar="FILE",
        help="CREATE TABLE statements, if not in QUERY.sql",
    )
    p.add_argument(
        "--stats",
        metavar="STATS.json",
        help="table sizes from `dynyan stats`: the planner then picks the "
        "join tree with the least estimated update work, and numbers small "
        "partitions of a top-n window whole",
    )
    p.set_defaults(func=func)
    return p


def add_commands(sub) -> None:
    p = query_command(
        sub, "compile", "write the generated Python module for a query", cmd_compile
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT.py",
        help="default: generated/ mirroring queries/, else generated/<stem>.py",
    )
    p.add_argument(
        "--trust-input",
        action="store_true",
        help="keep no copy of whole input rows: deletes are taken to be of rows "
        "that were inserted (as change-data-capture streams guarantee); a delete "
        "that drives a kept count below zero is still refused. Default: strict, "
        "every whole row counted, a delete of an absent row refused",
    )
    p = query_command(
        sub,
        "explain",
        "show the query's GCQ, its GJT pair (T, N) and complexity",
        cmd_explain,
    )
    p.add_argument(
        "--triggers",
        action="store_true",
        help="also show the trigger program: the structure every node keeps and, "
        "per relation, the steps an insert or delete takes (filter, project, "
        "update, weigh by the sibling, up to the parent, emit)",
    )
    p.add_argument(
        "--partitions",
        action="store_true",
        help="also show how `replay --partitions P` splits the query: the partition "
        "variable, the relations split by it and those replicated",
    )
    p.add_argument(
        "--stream",
        metavar="DIR",
        help="with --partitions: weigh relations by this stream's events "
        "(default: --stats rows, else nominal TPC sizes)",
    )
