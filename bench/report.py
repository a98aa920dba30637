"""Benchmark results: JSON result files into Markdown tables and PNG charts."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from .harness import MODES, NATIVE, SYSTEM_TITLES


def load_results(paths: Iterable[str | Path]) -> list[dict]:
    """The result documents, each with the name of its file (``file``)."""
    docs = []
    for p in paths:
        doc = json.loads(Path(p).read_text())
        doc.setdefault("file", Path(p).name)
        docs.append(doc)
    return docs


def run_label(doc: dict) -> str:
    """When and at which commit a run was made: "2026-11-22, 966f1aa+" (the
    "+": the working tree had uncommitted changes)."""
    git = doc.get("git") or {}
    commit = (git.get("commit") or "?")[:7] + ("+" if git.get("dirty") else "")
    return f"{(doc.get('started') or '?')[:10]}, {commit}"


def _fmt(x, digits=0, suffix="") -> str:
    if x is None:
        return "–"
    if isinstance(x, float) and digits == 0:
        return f"{x:,.0f}{suffix}"
    return f"{x:,.{digits}f}{suffix}"


def _rows_by(doc_list: list[dict]):
    for doc in doc_list:
        for r in doc["results"]:
            yield doc, r


PEERS = ("ivm", "recompute", "pathway", "pydbsp")


def speed_ratios(docs: list[dict]) -> list[dict]:
    """Per (stream, query, mode, peer): how many times faster dynyan applied
    the stream than the peer (peer time ÷ dynyan time). Only a peer whose
    result passed the check against dynyan's (``check`` "ok") has a ratio: a
    time without a passed check is not a speed. A peer stopped at its budget
    (never checked: it did not finish) counts with its rate before it was
    stopped, as a lower bound on dynyan's speed-up (``bound`` is True)."""
    out = []
    for stream, rows in _merged(docs).items():
        for mode in MODES:
            mrows = [r for r in rows if r["mode"] == mode]
            for qn in dict.fromkeys(r["query"] for r in mrows):
                for peer in PEERS:
                    r = _find(mrows, qn, peer)
                    if r is None:
                        continue
                    dyn = r.get("ref") or _find(mrows, qn, "dynyan")
                    if dyn is None or dyn.get("status") != "ok":
                        continue
                    rec = {"stream": stream, "query": qn, "mode": mode, "peer": peer}
                    if (
                        r["status"] == "ok"
                        and r.get("apply_s")
                        and r.get("check") == "ok"
                    ):
                        rec |= {"x": r["apply_s"] / dyn["apply_s"], "bound": False}
                    elif r["status"] == "timeout" and r.get("partial_events_per_s"):
                        # (a run stopped by the memory budget has no rate:
                        # it may have been stopped before its first batch)
                        rec |= {
                            "x": dyn["events_per_s"] / r["partial_events_per_s"],
                            "bound": True,
                            "status": r["status"],
                        }
                    else:
                        continue
                    out.append(rec)
    return out


def wins_losses(docs: list[dict], n: int = 3) -> str:
    """The n largest wins and losses of dynyan over a peer (update time)."""
    ratios = speed_ratios(docs)
    if not ratios:
        return ""

    def line(r):
        bound = (
            f" (at least: the peer was stopped by its {r['status']} budget)"
            if r["bound"]
            else ""
        )
        x = r["x"]
        how = f"{x:,.1f}× faster" if x >= 1 else f"{1 / x:,.1f}× slower"
        return (
            f"- {Path(r['query']).name.upper()} on {r['stream']}, {r['mode']} mode: "
            f"dynyan {how} than {SYSTEM_TITLES[r['peer']]}{bound}"
        )

    ranked = sorted(ratios, key=lambda r: r["x"])
    wins = [line(r) for r in ranked[::-1][:n]]
    losses = [line(r) for r in ranked[:n] if r["x"] < 1]
    text = [f"**Largest wins** (update time, dynyan vs a peer):", "", *wins, ""]
    text += [f"**Largest losses**:", "", *(losses or ["- none"]), ""]
    return "\n".join(text) + "\n"


def report(docs: list[dict], full: bool = False) -> str:
    """Markdown of the result documents: the compact form (`compact`), or
    with `full` every figure of every system (wide tables: the JSON files
    keep them anyway)."""
    return full_report(docs) if full else compact(docs)


def full_report(docs: list[dict]) -> str:
    """Markdown tables of the result documents (absolute values and ratios)."""
    skipped: dict[str, str] = {}
    ran = {r["query"] for d in docs for r in d["results"]}
    for d in docs:
        for q in d.get("queries", ()):
            if q["name"] in ran:
                continue
            if q["status"] != "ok":
                skipped.setdefault(q["name"], f"{q['status']}: {q['reason']}")
            elif q["name"].startswith("tpcds/"):
                # result files from before the tpcds suite
                skipped.setdefault(q["name"], "not run: no TPC-DS stream in this run")
    lines: list[str] = [
        "#### Summary",
        "",
        wins_losses(docs),
    ]
    if skipped:
        lines += ["**Queries not measured**:", ""]
        lines += [f"- {name}: {why}" for name, why in sorted(skipped.items())]
        lines.append("")
    lines += [
        summary(docs, "pull"),
        summary(docs, "push"),
        "#### Per stream",
        "",
    ]
    for doc in docs:
        cfg = doc["config"]
        for s in doc["streams"]:
            label = s["label"]
            rows = [r for r in doc["results"] if r["stream"] == label]
            if not rows:
                continue
            lines += [
                f"### {label}",
                "",
                f"Timing runs: {cfg['runs']} (median); DuckDB recompute every "
                f"{cfg['recompute_batch']:,} events; Pathway: "
                f"{cfg['peer_batch']:,} events per timestamp; budget "
                f"{cfg['budget_s']:g} s and {cfg['mem_budget_mb']:,} MB per system "
                "and mode.",
                "",
            ]
            floors = {
                r["query"]: r
                for r in rows
                if r["system"] == "store" and r.get("status") == "ok"
            }
            for mode in MODES:
                mrows = [r for r in rows if r["mode"] == mode]
                if not mrows:
                    continue
                lines += _table(mrows, mode, floors)
    return "\n".join(lines) + "\n"


def _rate(r: dict) -> tuple[float | None, bool]:
    """Events/s of a finished run, or of a run stopped at its time budget
    until it was stopped (then True: a partial figure)."""
    if r.get("status") == "ok":
        return r.get("events_per_s"), False
    if r.get("status") == "timeout":
        return r.get("partial_events_per_s"), True
    return None, False


def _stopped(r: dict) -> str:
    rate, partial = _rate(r)
    return f"{r['status']} (≈{rate:,.0f} before)" if partial and rate else r["status"]


def summary(docs: list[dict], mode: str = "pull") -> str:
    """Compact tables: events/s and memory per stream and query, one column
    per system, with dynyan's speed-up over each peer in parentheses (a peer
    measured in another run is compared with that run's dynyan; "≈" marks a
    ratio of rates until a budget stopped one of the two). A finished peer
    whose result did not pass the check has no ratio: the cell names its
    check instead."""
    peers = PEERS
    head = (
        "| stream | query | result rows | dynyan | "
        + " | ".join(SYSTEM_TITLES[p] for p in peers)
        + " | store floor |"
    )
    sep = "|" + "---|" * (head.count("|") - 1)
    speed = [
        f"**{mode} mode, events/s** (in parentheses: dynyan's speed ÷ the peer's)",
        "",
        head,
        sep,
    ]
    mem = [
        f"**{mode} mode, memory**: tracemalloc peak MB for the Python systems "
        "(dynyan's column), peak RSS growth MB for DuckDB and Pathway; in "
        "parentheses dynyan's figure of the same kind (traced, or RSS growth) "
        "as % of the peer's",
        "",
        head,
        sep,
    ]
    budgets: dict[str, set] = {}
    for doc in docs:
        for s in doc["streams"]:
            budgets.setdefault(s["label"], set()).add(doc["config"]["budget_s"])
    for stream, all_rows in _merged(docs).items():
        b = sorted(budgets.get(stream, ()))
        label = f"{stream} ({'–'.join(f'{x:g}' for x in b)} s budget)"
        rows = [r for r in all_rows if r["mode"] == mode]
        for qn in dict.fromkeys(r["query"] for r in rows):
            get = {r["system"]: r for r in rows if r["query"] == qn}
            dyn = get.get("dynyan")
            if dyn is None:
                continue
            pulls = [r for r in all_rows if r["mode"] == "pull"]
            pull_dyn = _find(pulls, qn, "dynyan") or {}
            nrows = ("≥" if pull_dyn.get("enum_partial") else "") + _fmt(
                pull_dyn.get("result_rows")
            )
            srow = [label, Path(qn).name, nrows]
            mrow = [label, Path(qn).name, nrows]
            dyn_ok = dyn.get("status") == "ok"
            srow.append(_fmt(dyn.get("events_per_s")) if dyn_ok else _stopped(dyn))
            dyn_mem = dyn.get("traced_peak_mb")
            if not dyn_ok:
                mrow.append(dyn["status"])
            elif dyn_mem is None and dyn.get("rss_delta_mb") is not None:
                mrow.append(_fmt(dyn["rss_delta_mb"], 1) + " RSS (no traced run)")
            else:
                mrow.append(_fmt(dyn_mem, 1))
            for p in peers:
                r = get.get(p)
                if r is None:
                    srow.append("–")
                    mrow.append("–")
                    continue
                ref = r.get("ref") or dyn
                mine, mine_partial = _rate(ref)
                theirs, their_partial = _rate(r)
                if r["status"] != "ok":
                    cell = _stopped(r)
                    if mine and theirs and their_partial:
                        cell += f" ({'≈' if mine_partial else '≥'}{mine / theirs:.1f}×)"
                    srow.append(cell)
                    mrow.append(
                        f"{r['status']} (RSS {r['reason'].split('RSS ')[-1].split(')')[0]})"
                        if "RSS" in r.get("reason", "")
                        else r["status"]
                    )
                    continue
                cell = _fmt(theirs)
                if r.get("check") != "ok":  # no passed check, no ratio
                    cell += f" (check {r.get('check', 'missing')})"
                elif mine and theirs:
                    cell += f" ({'≈' if mine_partial else ''}{mine / theirs:.1f}×)"
                srow.append(cell)
                native = p in NATIVE or r.get("traced_peak_mb") is None
                m = r.get("rss_delta_mb") if native else r.get("traced_peak_mb")
                cell = _fmt(m, 1) + (" RSS" if native else "")
                ref_ok = ref.get("status") == "ok"
                mine_mem = (
                    ref.get("rss_delta_mb") if native else ref.get("traced_peak_mb")
                )
                if ref_ok and m and mine_mem is not None:
                    cell += f" ({100 * mine_mem / m:.0f}%)"
                mrow.append(cell)
            floor = get.get("store") or _find(all_rows, qn, "store")
            if floor is not None and floor.get("status") == "ok":
                fcell = _fmt(floor.get("events_per_s"))
                if dyn_ok and dyn.get("apply_s"):
                    fcell += (
                        f" (dynyan {dyn['apply_s'] / floor['apply_s']:.1f}× slower)"
                    )
                srow.append(fcell)
                mrow.append(_fmt(floor.get("traced_peak_mb"), 1))
            else:
                srow.append("–")
                mrow.append("–")
            speed.append("| " + " | ".join(srow) + " |")
            mem.append("| " + " | ".join(mrow) + " |")
    return "\n".join(speed + [""] + mem) + "\n"


def _table(rows: list[dict], mode: str, floor_rows: dict) -> list[str]:
    head = (
        "| query | events | system | events/s | dynyan ÷ system time | "
        "× store floor | peak RSS Δ MB | traced MB | "
        + ("enum s | tuples/s | result rows |" if mode == "pull" else "deltas |")
        + " latency p50 / p99 µs | check |"
    )
    sep = "|" + "---|" * (head.count("|") - 1)
    out = [f"**{mode} mode**", "", head, sep]
    by_query: dict[str, list[dict]] = {}
    for r in rows:
        by_query.setdefault(r["query"], []).append(r)
    for qname, qrows in by_query.items():
        dyn = next(
            (r for r in qrows if r["system"] == "dynyan" and r["status"] == "ok"), None
        )
        floor = floor_rows.get(qname)
        for r in qrows:
            if r["status"] != "ok":
                why = r.get("reason", "")
                extra = ""
                if r["status"] == "timeout" and r.get("partial_events_per_s"):
                    extra = f" (≈{r['partial_events_per_s']:,.0f} ev/s before stopping)"
                cells = [
                    qname,
                    f"{r['events']:,}",
                    SYSTEM_TITLES.get(r["system"], r["system"]),
                    f"**{r['status']}**{extra}: {why}",
                ]
                out.append(
                    "| " + " | ".join(cells) + " |" + " |" * (head.count("|") - 5)
                )
                continue
            ratio = "–"
            if (
                dyn is not None
                and r["system"] not in ("dynyan", "store")
                and r.get("apply_s")
            ):
                ratio = f"{dyn['apply_s'] / r['apply_s'] * 100:.0f}%"
            floor_x = "–"
            if floor is not None and r.get("apply_s") and r["system"] != "store":
                floor_x = f"{r['apply_s'] / floor['apply_s']:.1f}×"
            lat = r.get("latency") or {}
            lat_s = "–"
            if lat.get("n"):
                unit = (
                    ""
                    if lat.get("unit") == "event"
                    else f" (per {lat['batch']:,}-event batch)"
                )
                lat_s = f"{lat['p50_us']:,.1f} / {lat['p99_us']:,.1f}{unit}"
            rss = _fmt(r.get("rss_delta_mb"))
            if r.get("native_mb") is not None:
                rss += f" (DuckDB {r['native_mb']:.0f})"
            traced = (
                _fmt(r.get("traced_peak_mb"))
                if r["system"] not in ("recompute", "pathway")
                else "native"
            )
            cells = [
                qname,
                f"{r['events']:,}",
                SYSTEM_TITLES.get(r["system"], r["system"]),
                _fmt(r.get("events_per_s")),
                ratio,
                floor_x,
                rss,
                traced,
            ]
            if mode == "pull" and r["system"] == "store":
                cells += ["–", "–", "–"]
            elif mode == "pull":
                cells += [
                    _fmt(r.get("enum_s"), 2),
                    _fmt(r.get("tuples_per_s")),
                    ("≥" if r.get("enum_partial") else "") + _fmt(r.get("result_rows")),
                ]
            else:
                cells += [_fmt(r.get("deltas"))]
            startup = r.get("startup_s")
            check = r.get("check", "–")
            if r.get("check_detail") and check != "ok":
                check += f" ({r['check_detail']})"
            if r.get("trail_check") == "ok":
                check += f" at {len(r['trail'])} points"
            if startup is not None:
                check += f"; startup {startup:.2f} s"
            cells += [lat_s, check]
            out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def _merged(docs: list[dict]) -> dict[str, list[dict]]:
    """Result rows by stream label over several documents; for each (stream,
    query) the rows of the document that measured the most systems on it
    (the later one on a tie), so every ratio compares numbers from one run.
    A peer measured only in another document (e.g. pydbsp, run later), or
    only "unavailable" in the chosen one, is added with that document's
    dynyan row as its reference (``ref``)."""
    unmeasured = ("skipped", "unavailable")
    chosen: dict[tuple[str, str], list[dict]] = {}
    every: list[tuple[tuple[str, str], list[dict]]] = []
    for doc in docs:
        by_key: dict[tuple[str, str], list[dict]] = {}
        for r in doc["results"]:
            by_key.setdefault((r["stream"], r["query"]), []).append(r)
        for key, rows in by_key.items():
            if any(r["system"] == "dynyan" for r in rows):
                every.append((key, rows))
                if len(rows) >= len(chosen.get(key, ())):
                    chosen[key] = rows
    for key, rows in every:
        have = {
            (r["system"], r["mode"])
            for r in chosen[key]
            if r["status"] not in unmeasured
        }
        for r in rows:
            sm = (r["system"], r["mode"])
            if (
                sm in have
                or r["system"] in ("dynyan", "store")
                or r["status"] in unmeasured
            ):
                continue
            ref = _find([x for x in rows if x["mode"] == r["mode"]], key[1], "dynyan")
            kept = [x for x in chosen[key] if (x["system"], x["mode"]) != sm]
            chosen[key] = kept + [dict(r, ref=ref)]
            have.add(sm)
    out: dict[str, list[dict]] = {}
    for (stream, _q), rows in chosen.items():
        out.setdefault(stream, []).extend(rows)
    return out


def _mem_pair(dyn: dict, peer: dict) -> tuple[float | None, float | None]:
    """Comparable memory figures: tracemalloc peaks for two Python systems,
    else peak RSS growth."""
    if (
        peer["system"] not in NATIVE
        and peer.get("traced_peak_mb")
        and dyn.get("traced_peak_mb")
    ):
        return dyn["traced_peak_mb"], peer["traced_peak_mb"]
    return dyn.get("rss_delta_mb"), peer.get("rss_delta_mb")


def charts(docs: list[dict], outdir: str | Path, prefix: str = "bench") -> list[Path]:
    """dynyan's time and memory as % of each peer, per query (DYN-paper style):
    one PNG per (stream, mode, metric). Below 100% dynyan uses less. A peer
    stopped at its time budget gets a hatched bar from its rate until then
    (an upper bound on dynyan's share); where dynyan was stopped too, a
    cross-hatched "≈" bar compares the two rates until the stops."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    peers = PEERS
    for label, all_rows in _merged(docs).items():
        for mode in MODES:
            rows = [r for r in all_rows if r["mode"] == mode]
            queries = list(dict.fromkeys(r["query"] for r in rows))
            if not queries:
                continue
            for metric, title in (
                ("time", "update time"),
                ("memory", "memory"),
            ):
                fig, ax = plt.subplots(figsize=(max(7, 1.0 + 0.75 * len(queries)), 3.8))
                width = 0.8 / len(peers)
                any_bar = False
                shown: list = []  # legend entries: peers with a bar
                for i, peer in enumerate(peers):
                    xs, ys, notes, bounds = [], [], [], []
                    for qi, qn in enumerate(queries):
                        pr = _find(rows, qn, peer)
                        dyn = (pr or {}).get("ref") or _find(rows, qn, "dynyan")
                        x = qi + (i - (len(peers) - 1) / 2) * width
                        if dyn is None or pr is None or pr["status"] == "skipped":
                            continue
                        if dyn["status"] != "ok":
                            # dynyan stopped too: the ratio of the two rates
                            # until each was stopped ("≈", cross-hatched)
                            mine, partial = _rate(dyn)
                            theirs, _ = _rate(pr)
                            if metric == "time" and partial and mine and theirs:
                                xs.append(x)
                                ys.append(max(100 * theirs / mine, 0.01))
                                bounds.append("≈")
                            continue
                        if (
                            metric == "time"
                            and pr["status"] == "timeout"
                            and pr.get("partial_events_per_s")
                        ):
                            # stopped at its budget: its whole run would have
                            # taken at least as long as its rate until then says
                            xs.append(x)
                            ys.append(
                                max(
                                    100
                                    * pr["partial_events_per_s"]
                                    / dyn["events_per_s"],
                                    0.01,
                                )
                            )
                            bounds.append(True)
                            continue
                        if pr["status"] != "ok":
                            notes.append((x, pr["status"]))
                            continue
                        if metric == "time" and pr.get("check") != "ok":
                            notes.append((x, f"check {pr.get('check', 'missing')}"))
                            continue
                        if metric == "time":
                            mine, theirs = dyn.get("apply_s"), pr.get("apply_s")
                        else:
                            mine, theirs = _mem_pair(dyn, pr)
                        if mine is not None and theirs:
                            xs.append(x)
                            ys.append(max(100 * mine / theirs, 0.01))
                            bounds.append(False)
                    bars = ax.bar(xs, ys, width, color=f"C{i}")
                    if xs:
                        shown.append(Patch(color=f"C{i}", label=SYSTEM_TITLES[peer]))
                    any_bar = any_bar or bool(xs)
                    for b, y, bound in zip(bars, ys, bounds):
                        if bound:  # hatched: the peer was stopped, dynyan ≤ y%
                            b.set_hatch("xx" if bound == "≈" else "//")
                            b.set_alpha(0.6)
                        ax.annotate(
                            {True: "≤", "≈": "≈"}.get(bound, "")
                            + (f"{y:.0f}%" if y >= 1 else f"{y:.1f}%"),
                            (b.get_x() + b.get_width() / 2, y),
                            ha="center",
                            va="bottom",
                            fontsize=7,
                        )
                    for x, st in notes:
                        ax.annotate(
                            f"{SYSTEM_TITLES[peer]}: {st}",
                            (x, 100),
                            ha="center",
                            va="center",
                            fontsize=6,
                            rotation=90,
                        )
                if not any_bar:
                    plt.close(fig)
                    continue
                ax.axhline(100, color="grey", lw=0.8, ls="--")
                ax.set_yscale("log")
                ax.set_xticks(
                    range(len(queries)), [Path(q).name.upper() for q in queries]
                )
                ax.set_ylabel(f"dynyan {metric}, % of peer")
                ax.set_title(
                    f"{label}, {mode}: dynyan {title} as % of each peer "
                    "(below 100%: dynyan better)",
                    fontsize=9,
                )
                ax.legend(handles=shown, fontsize=7)
                fig.tight_layout()
                path = outdir / f"{prefix}-{label}-{mode}-{metric}.png"
                fig.savefig(path, dpi=110)
                plt.close(fig)
                written.append(path)
    return written


def _find(rows, query, system):
    return next(
        (r for r in rows if r["query"] == query and r["system"] == system), None
    )


def update_markdown(path: str | Path, text: str, tag: str = "bench") -> None:
    """Replace the text between ``<!-- tag:begin -->`` and ``<!-- tag:end -->``."""
    path = Path(path)
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    old = path.read_text() if path.exists() else f"{begin}\n{end}\n"
    if begin not in old or end not in old:
        old = old.rstrip("\n") + f"\n\n{begin}\n{end}\n"
    head, rest = old.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{text.rstrip()}\n{end}{tail}")


# --- the compact form ------------------------------------------------------------

RATIO_LEGEND = (
    "IVM: first-order IVM; DuckDB: DuckDB recompute. Cells under a peer "
    "(× …): dynyan's rate ÷ the peer's on the same stream (above "
    "1×: dynyan faster). ≥: the peer was stopped at its budget, compared with "
    "its rate until then; ≈: dynyan was stopped too (rates until the stops); "
    "timeout/memory: stopped before a rate; –: not run. dynyan's own cell is "
    "events/s (timeout ≈N: its rate until its budget). MB: dynyan's traced "
    "peak (tracemalloc) in pull mode. Runs: date and commit (+: uncommitted "
    "changes in the working tree)."
)


def compact(docs: list[dict]) -> str:
    """The short report: the runs (date, commit), dynyan's standing against
    each peer, the largest wins and losses, then one table per stream with
    dynyan's rate and the ratio to each peer in pull and push mode."""
    docs = _tagged(docs)
    lines = ["### Runs", "", *runs_table(docs), "", "### Standing", ""]
    lines += [*standing(docs), "", wins_losses(docs), "### Per stream", ""]
    lines += [RATIO_LEGEND, ""]
    for stream, rows in _merged(docs).items():
        lines += stream_table(stream, rows)
    return "\n".join(lines) + "\n"


def _tagged(docs: list[dict]) -> list[dict]:
    """Copies of `docs` whose result rows carry their run (``run``)."""
    out = []
    for doc in docs:
        label = f"`{doc.get('file', '?')}` ({run_label(doc)})"
        results = [dict(r, run=label) for r in doc["results"]]
        out.append(dict(doc, results=results))
    return out


def runs_table(docs: list[dict]) -> list[str]:
    """One line per result file: when, at which commit, what it measured."""
    lines = [
        "| result file | started (UTC) | commit | streams | systems | budget |",
        "|---|---|---|---|---|---|",
    ]
    for doc in sorted(docs, key=lambda d: d.get("started") or ""):
        git = doc.get("git") or {}
        commit = (git.get("commit") or "?")[:7] + ("+" if git.get("dirty") else "")
        cfg = doc.get("config", {})
        measured = dict.fromkeys(
            r["system"]
            for r in doc["results"]
            if r["status"] not in ("skipped", "unavailable")
        )
        lines.append(
            f"| `{doc.get('file', '?')}` | {(doc.get('started') or '?')[:16]} "
            f"| {commit} | {', '.join(s['label'] for s in doc['streams'])} "
            f"| {', '.join(measured)} | {cfg.get('budget_s', 0):g} s |"
        )
    return lines


def standing(docs: list[dict]) -> list[str]:
    """Per peer: on how many (stream, query, mode) dynyan was faster, level
    and slower, and the median and range of the ratios."""
    lines = [
        "| peer | compared | dynyan faster (> 1.1×) | level | dynyan slower "
        "(< 0.9×) | median ratio | range |",
        "|---|---|---|---|---|---|---|",
    ]
    ratios = speed_ratios(docs)
    for peer in PEERS:
        xs = sorted(r["x"] for r in ratios if r["peer"] == peer)
        if not xs:
            continue
        faster = sum(x > LEVEL[1] for x in xs)
        slower = sum(x < LEVEL[0] for x in xs)
        mid = len(xs) // 2
        median = xs[mid] if len(xs) % 2 else (xs[mid - 1] * xs[mid]) ** 0.5
        lines.append(
            f"| {SYSTEM_TITLES[peer]} | {len(xs)} | {faster} "
            f"| {len(xs) - faster - slower} | {slower} | {_ratio(median)} "
            f"| {_ratio(xs[0])} – {_ratio(xs[-1])} |"
        )
    lines += [
        "",
        "Ratios of dynyan's rate to the peer's over every (stream, query, mode) "
        "both ran; a peer stopped at its budget counts with its rate until then "
        "(dynyan at least that much faster), a query where dynyan was stopped "
        "is left out; within 0.9–1.1× counts as level.",
    ]
    return lines


LEVEL = (0.9, 1.1)  # ratios in between: level, given this machine's noise
SHORT_TITLES = {
    "ivm": "IVM",
    "recompute": "DuckDB",
    "pathway": "Pathway",
    "pydbsp": "pydbsp",
}


def _ratio(x: float) -> str:
    if x >= 10:
        return f"{x:,.0f}×"
    return f"{x:.1f}×" if x >= 0.1 else f"{x:.2f}×"


def _peer_cell(r: dict | None, dyn: dict | None) -> str:
    if r is None or r["status"] in ("skipped", "unavailable"):
        return "–"
    ref = r.get("ref") or dyn
    if ref is None:
        return "–"
    mine, mine_partial = _rate(ref)
    theirs, their_partial = _rate(r)
    if r["status"] == "ok" and theirs and mine:
        return ("≈" if mine_partial else "") + _ratio(mine / theirs)
    if r["status"] == "timeout" and theirs and mine:
        return ("≈" if mine_partial else "≥") + _ratio(mine / theirs)
    return r["status"]


def _dynyan_cell(dyn: dict | None) -> str:
    if dyn is None:
        return "–"
    rate, partial = _rate(dyn)
    if dyn["status"] == "ok":
        return _fmt(rate)
    return f"{dyn['status']} ≈{rate:,.0f}" if partial and rate else dyn["status"]


def stream_table(stream: str, rows: list[dict]) -> list[str]:
    """dynyan's events/s and its ratio to each peer, pull and push side by
    side, one line per query; the runs the figures come from above it."""
    peers = [p for p in PEERS if any(r["system"] == p for r in rows)]
    runs = list(dict.fromkeys(r["run"] for r in rows if "run" in r))
    head = ["query", "result rows"]
    for mode in MODES:
        head += [f"{mode} ev/s"] + [f"× {SHORT_TITLES[p]}" for p in peers]
    head.append("MB")
    lines = [
        f"#### {stream}",
        "",
        "From " + "; ".join(runs) + ".",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for qn in dict.fromkeys(r["query"] for r in rows):
        pull = _find([r for r in rows if r["mode"] == "pull"], qn, "dynyan") or {}
        nrows = ("≥" if pull.get("enum_partial") else "") + _fmt(
            pull.get("result_rows")
        )
        cells = [qn, nrows]
        for mode in MODES:
            mrows = [r for r in rows if r["mode"] == mode]
            dyn = _find(mrows, qn, "dynyan")
            cells.append(_dynyan_cell(dyn))
            cells += [_peer_cell(_find(mrows, qn, p), dyn) for p in peers]
        cells.append(_fmt(pull.get("traced_peak_mb"), 1))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines
