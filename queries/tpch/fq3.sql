-- FQ3 (Idris et al., DYN): full join of orders, lineitem, partsupp, supplier
-- and customer; l_suppkey = ps_suppkey = s_suppkey and the custkey join.
-- Schema: tpch/schema.sql.
SELECT *
FROM orders, lineitem, partsupp, supplier, customer
WHERE o_orderkey = l_orderkey
  AND l_suppkey = ps_suppkey
  AND ps_suppkey = s_suppkey
  AND o_custkey = c_custkey;
