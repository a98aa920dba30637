-- TPC-H Q9 (product type profit measure), spec text with the validation
-- value COLOR = 'green'. Schema: tpch/schema.sql.
-- Changes for dynyan: ORDER BY nation, o_year DESC dropped (as in the DYN
-- paper); the derived table `profit` (nation, o_year, amount) is flattened:
-- its expressions are inlined into one GROUP BY over the six-way join
-- (n_name, EXTRACT(YEAR FROM o_orderdate)) and SUM(amount) becomes the SUM
-- of the amount expression. Same result, no subquery.
SELECT
    n_name AS nation,
    EXTRACT(YEAR FROM o_orderdate) AS o_year,
    SUM(l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity) AS sum_profit
FROM part, supplier, lineitem, partsupp, orders, nation
WHERE s_suppkey = l_suppkey
  AND ps_suppkey = l_suppkey
  AND ps_partkey = l_partkey
  AND p_partkey = l_partkey
  AND o_orderkey = l_orderkey
  AND s_nationkey = n_nationkey
  AND p_name LIKE '%green%'
GROUP BY n_name, EXTRACT(YEAR FROM o_orderdate);
