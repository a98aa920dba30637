#!/usr/bin/env bash
# Every benchmark run BENCHMARKS.md summarises, with the exact options, then
# its tables and charts. About 8 hours on 2 cores; the runs are independent
# (the published ones ran two or three at a time). Builds missing data and
# streams first (tpcgen, Spark) and pydbsp's venv on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
B=(.venv/bin/python -m bench run --runs 3 --budget 30 --mem-budget-mb 5000)
R=bench/results
export PYSPARK_PYTHON="$PWD/.venv/bin/python"

# TPC-H SF 0.1, all queries, all peers but pydbsp (Pathway: 10,000 events per
# timestamp; its cap keeps it off these streams)
"${B[@]}" --sf 0.1 --variants insert --peer-batch 10000 --systems store,dynyan,ivm,recompute,pathway --out $R/tpch-sf0.1-insert.json
"${B[@]}" --sf 0.1 --variants window --peer-batch 10000 --systems store,dynyan,ivm,recompute,pathway --out $R/tpch-sf0.1-window.json
# TPC-H SF 1, single runs: the insert stream in three parts (FQ4 and Q3,
# then Q1, with 60 s budgets and no Pathway; then the rest), the window stream
# whole; Pathway on the first 50,000 events of each stream (one native call
# that cannot be stopped at the budget)
"${B[@]}" --sf 1 --variants insert --queries q3,fq4 --systems store,dynyan,ivm,recompute --runs 1 --budget 60 --mem-budget-mb 6000 --out $R/tpch-sf1-insert.json
"${B[@]}" --sf 1 --variants insert --queries q1 --systems store,dynyan,ivm,recompute --runs 1 --budget 60 --mem-budget-mb 10000 --out $R/tpch-sf1-insert-b.json
SF1=(--sf 1 --systems store,dynyan,ivm,recompute,pathway --runs 1 --budget 30 --mem-budget-mb 4000 --pathway-max-events 50000)
"${B[@]}" "${SF1[@]}" --variants insert --queries fq1,fq2,fq3,q4,q6,q9,q12,q13,q16,q18 --out $R/tpch-sf1-insert-c.json
"${B[@]}" "${SF1[@]}" --variants window --queries fq1,fq2,fq3,fq4,q1,q12,q13,q16,q18 --out $R/tpch-sf1-window.json
"${B[@]}" "${SF1[@]}" --variants window --queries q3,q4,q6,q9 --mem-budget-mb 2500 --out $R/tpch-sf1-window-b.json
# TPC-H SF 0.01, both variants (the streams Pathway finishes)
"${B[@]}" --sf 0.01 --systems store,dynyan,ivm,recompute,pathway --out $R/tpch-sf0.01.json
# GCQ1-GCQ8 at the paper's sizes and the fraud query, every peer (budget
# checks every 200 events: one GCQ1 event can change millions of rows)
# (in two runs at the same time: GCQ1-GCQ5, then the rest)
"${B[@]}" --suite gcq,fraud --variants insert --chunk 200 --queries gcq1,gcq2,gcq3,gcq4,gcq5 --out $R/gcq-fraud.json
"${B[@]}" --suite gcq,fraud --variants insert --chunk 200 --queries gcq6,gcq7,gcq8,fraud --out $R/gcq-fraud-b.json
# TPC-DS SF 1, the first 100,000 streamed events per query, every peer
"${B[@]}" --suite tpcds --variants insert --tpcds-events 100000 --out $R/tpcds-sf1-insert.json
# pydbsp beside dynyan on the TPC-H SF 0.01 insert stream
"${B[@]}" --sf 0.01 --variants insert --systems store,dynyan,pydbsp --out $R/pydbsp-tpch-sf0.01.json
# The peers the runs above did not cover, each beside dynyan again (single
# runs; dynyan's row is the reference of the check and of the ratios):
# pydbsp on SF 0.1 and the SF 0.01 window, Pathway on the first 50,000
# events of the SF 0.1 streams
P=(.venv/bin/python -m bench run --runs 1 --budget 30 --mem-budget-mb 4000 --no-tracemalloc --no-latency --pathway-max-events 50000)
"${P[@]}" --sf 0.1 --variants insert --peer-batch 10000 --systems dynyan,pydbsp --out $R/pydbsp-tpch-sf0.1-insert.json
"${P[@]}" --sf 0.1 --variants window --peer-batch 10000 --systems dynyan,pydbsp,pathway --out $R/peers-tpch-sf0.1-window.json
"${P[@]}" --sf 0.01 --variants window --systems dynyan,pydbsp --out $R/pydbsp-tpch-sf0.01-window.json
"${P[@]}" --sf 0.1 --variants insert --peer-batch 10000 --systems dynyan,pathway --out $R/pathway-tpch-sf0.1-insert.json
# dynyan planned with table statistics (`dynyan stats`): the two queries whose tree changes
.venv/bin/python -m bench run --runs 1 --budget 30 --mem-budget-mb 4000 --sf 0.1 --variants insert --queries fq2,fq3 --systems store,dynyan,ivm --planner-stats --out $R/tpch-sf0.1-insert-planner-stats.json
.venv/bin/python -m bench run --runs 1 --budget 60 --mem-budget-mb 4000 --sf 1 --variants insert --queries fq3 --systems store,dynyan --planner-stats --no-tracemalloc --out $R/tpch-sf1-insert-planner-stats.json

# The 22 TPC-H queries as the specification writes them (queries/tpch/spec/),
# SF 0.1 insert stream, dynyan vs DuckDB recomputing and the first-order IVM
# (tables in BENCHMARKS.md, "TPC-H as the specification writes it": made by
# `python -m bench report` on these four files)
S=(--sf 0.1 --variants insert --runs 3 --budget 30 --no-latency --no-tracemalloc)
.venv/bin/python -m bench run "${S[@]}" --queries tpch/spec/q2,tpch/spec/q5,tpch/spec/q13,tpch/spec/q15,tpch/spec/q17 --systems dynyan,recompute --out $R/spec-tpch-sf0.1-insert-duckdb.json
.venv/bin/python -m bench run "${S[@]}" --queries tpch/spec/q2,tpch/spec/q15 --systems dynyan,ivm,recompute --out $R/spec-tpch-sf0.1-insert-b.json
.venv/bin/python -m bench run "${S[@]}" --queries tpch/spec/q5,tpch/spec/q13,tpch/spec/q17 --systems dynyan,ivm --out $R/spec-tpch-sf0.1-insert-ivm.json
.venv/bin/python -m bench run "${S[@]}" --queries tpch/spec/q1,tpch/spec/q2,tpch/spec/q4,tpch/spec/q12 --systems dynyan,ivm,recompute --out $R/spec-tpch-sf0.1-insert-ordered.json
.venv/bin/python -m bench run "${S[@]}" --queries tpch/spec/q7,tpch/spec/q8,tpch/spec/q9 --systems dynyan,ivm --out $R/spec-tpch-sf0.1-insert-exact.json
.venv/bin/python -m bench run "${S[@]}" --queries tpch/spec/q2,tpch/spec/q5,tpch/spec/q13,tpch/spec/q15,tpch/spec/q17 --systems dynyan,ivm,recompute --out $R/spec-tpch-sf0.1-insert-five.json
.venv/bin/python -m bench run "${S[@]}" --queries tpch/spec/q1,tpch/spec/q3,tpch/spec/q4,tpch/spec/q6,tpch/spec/q7,tpch/spec/q8,tpch/spec/q9,tpch/spec/q10,tpch/spec/q11,tpch/spec/q12,tpch/spec/q14,tpch/spec/q16,tpch/spec/q18,tpch/spec/q19,tpch/spec/q20,tpch/spec/q21,tpch/spec/q22 --systems dynyan,ivm,recompute --out $R/spec-tpch-sf0.1-insert-rest.json

# Issue 16's table: every query of the set, trusting and strict dynyan
# against the first-order IVM and DuckDB recomputing, pull and push, first
# 300,000 events of the SF 0.1 insert stream (BENCHMARKS.md, "Against every
# baseline"; the table: bench/done_when.py on the file)
.venv/bin/python -m bench run --sf 0.1 --variants insert --max-events 300000 --queries tpch/fq1,tpch/fq2,tpch/fq3,tpch/fq4,tpch/q1,tpch/q3,tpch/q4,tpch/q6,tpch/q9,tpch/q12,tpch/q13,tpch/q16,tpch/q18 --systems dynyan,dynyan-trust,ivm,recompute --modes pull,push --runs 3 --budget 30 --no-latency --out $R/done-when-tpch-sf0.1-insert.json
.venv/bin/python -m bench run --sf 0.1 --variants insert --max-events 300000 --queries tpch/q1,tpch/q6 --systems dynyan,dynyan-trust,ivm,recompute --modes pull,push --runs 3 --budget 30 --no-latency --out $R/done-when-tpch-sf0.1-insert-q6.json

.venv/bin/python -m bench report $R/tpch-sf0.1-insert.json $R/tpch-sf0.1-window.json \
  $R/tpch-sf1-insert.json $R/tpch-sf1-insert-b.json $R/tpch-sf1-insert-c.json $R/tpch-sf1-window.json $R/tpch-sf1-window-b.json \
  $R/tpch-sf0.01.json $R/gcq-fraud.json $R/gcq-fraud-b.json $R/tpcds-sf1-insert.json \
  $R/pydbsp-tpch-sf0.01.json $R/pydbsp-tpch-sf0.1-insert.json $R/peers-tpch-sf0.1-window.json \
  $R/pydbsp-tpch-sf0.01-window.json $R/pathway-tpch-sf0.1-insert.json \
  $R/tpch-sf0.1-insert-planner-stats.json $R/tpch-sf1-insert-planner-stats.json --markdown BENCHMARKS.md --charts docs
