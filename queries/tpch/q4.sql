-- TPC-H Q4 (order priority checking), spec text with the validation value
-- DATE = 1993-07-01. Schema: tpch/schema.sql.
-- Changes for dynyan (as in the DYN paper): ORDER BY o_orderpriority dropped.
-- Needs a correlated EXISTS subquery (a semijoin with lineitem).
SELECT
    o_orderpriority,
    COUNT(*) AS order_count
FROM orders
WHERE o_orderdate >= DATE '1993-07-01'
  AND o_orderdate < DATE '1993-07-01' + INTERVAL '3' MONTH
  AND EXISTS (
      SELECT *
      FROM lineitem
      WHERE l_orderkey = o_orderkey
        AND l_commitdate < l_receiptdate
  )
GROUP BY o_orderpriority;
