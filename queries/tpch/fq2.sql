-- FQ2 (Idris et al., DYN): full join of lineitem, orders, customer, part and
-- nation. Schema: tpch/schema.sql.
SELECT *
FROM lineitem, orders, customer, part, nation
WHERE l_orderkey = o_orderkey
  AND o_custkey = c_custkey
  AND l_partkey = p_partkey
  AND c_nationkey = n_nationkey;
