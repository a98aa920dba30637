-- TPC-H Q6 (forecasting revenue change), spec text with the validation
-- values DATE = 1994-01-01, DISCOUNT = 0.06, QUANTITY = 24.
-- Schema: tpch/schema.sql. No changes: Q6 has no ORDER BY (a global
-- aggregate: one row, SUM is NULL while no lineitem qualifies).
SELECT
    SUM(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= DATE '1994-01-01'
  AND l_shipdate < DATE '1994-01-01' + INTERVAL '1' YEAR
  AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01
  AND l_quantity < 24;
