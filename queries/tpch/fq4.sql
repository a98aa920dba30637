-- FQ4 (Idris et al., DYN): lineitem, supplier and partsupp joined on the
-- supplier key; q-hierarchical, so a simple GJT exists. Schema: tpch/schema.sql.
SELECT *
FROM lineitem, supplier, partsupp
WHERE l_suppkey = s_suppkey
  AND s_suppkey = ps_suppkey;
