-- ORDER BY columns of one table of a join with LIMIT (BENCHMARKS.md, "ORDER BY by ranked enumeration"):
-- the planner puts o_orderdate and o_orderkey at the root, so the view keeps no sorted copy of the result
SELECT o_orderkey, o_orderdate, l_linenumber, l_quantity
FROM orders, lineitem
WHERE o_orderkey = l_orderkey
ORDER BY o_orderdate DESC, o_orderkey
LIMIT 10
