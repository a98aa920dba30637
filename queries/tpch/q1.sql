-- TPC-H Q1 (pricing summary report), spec text with the validation value
-- DELTA = 90. Schema: tpch/schema.sql.
-- Changes for dynyan (as in the DYN paper): ORDER BY l_returnflag,
-- l_linestatus dropped (a maintained view has no order); the interval
-- precision in `INTERVAL '90' DAY (3)` dropped (not SQL that DuckDB/sqlglot read).
SELECT
    l_returnflag,
    l_linestatus,
    SUM(l_quantity) AS sum_qty,
    SUM(l_extendedprice) AS sum_base_price,
    SUM(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
    SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
    AVG(l_quantity) AS avg_qty,
    AVG(l_extendedprice) AS avg_price,
    AVG(l_discount) AS avg_disc,
    COUNT(*) AS count_order
FROM lineitem
WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90' DAY
GROUP BY l_returnflag, l_linestatus;
