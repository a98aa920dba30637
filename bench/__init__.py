"""The benchmark harness: dynyan against its peers on the same update streams.

Not part of the installed product: run it from a checkout with
``python -m bench run …`` and ``python -m bench report …`` (BENCHMARKS.md).
`harness` measures, `report` turns result files into tables and charts,
`peers/` holds the engines compared with dynyan, and the scripts beside them
(`gc_cost.py`, `handwritten.py`, …) are single measurements.
"""
