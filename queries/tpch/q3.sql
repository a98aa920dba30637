-- TPC-H Q3 (shipping priority), spec text with the validation values
-- SEGMENT = 'BUILDING', DATE = 1995-03-15. Schema: tpch/schema.sql.
-- Changes for dynyan (as in the DYN paper): ORDER BY revenue DESC,
-- o_orderdate and the row limit (first 10 rows) dropped.
SELECT
    l_orderkey,
    SUM(l_extendedprice * (1 - l_discount)) AS revenue,
    o_orderdate,
    o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = 'BUILDING'
  AND c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND o_orderdate < DATE '1995-03-15'
  AND l_shipdate > DATE '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority;
