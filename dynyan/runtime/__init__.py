"""Runtime helpers of generated modules, as ordinary tested Python.

A generated module imports only the standard library and sortedcontainers,
so the helpers it needs are not imported from here: the renderer copies
their source into the module (`inline.helper_source`), specialised to the
module's payload width. Importing these modules directly gives the int
payload version (a COUNT or a bag), which the tests and tools use.

- `payload`: payload arithmetic (int counts or tuples added element-wise)
- `sortedgroup`: `_SortedGroup`, tuples ordered on one variable (range scans)
- `rangesum`: `_RangeSum`, a B-tree of payloads with sums over value ranges
- `sqlfuncs`: SQL functions whose semantics need more than one expression
"""
