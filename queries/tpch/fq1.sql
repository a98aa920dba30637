-- FQ1 (Idris et al., DYN): full join of orders, lineitem, part and partsupp
-- on orderkey, partkey and (partkey, suppkey). Schema: tpch/schema.sql.
SELECT *
FROM orders, lineitem, part, partsupp
WHERE o_orderkey = l_orderkey
  AND l_partkey = p_partkey
  AND l_partkey = ps_partkey
  AND l_suppkey = ps_suppkey;
