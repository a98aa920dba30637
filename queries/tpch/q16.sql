-- TPC-H Q16' (parts/supplier relationship), spec text with the validation
-- values BRAND = 'Brand#45', TYPE = 'MEDIUM POLISHED', SIZE1..8 = 49, 14,
-- 23, 45, 19, 3, 36, 9. Schema: tpch/schema.sql.
-- Changes for dynyan (as in the DYN paper): one inequality removed, here
-- `p_brand <> 'Brand#45'` (the paper's text that names it was not at hand:
-- check); ORDER BY supplier_cnt DESC, p_brand, p_type, p_size dropped.
-- Needs COUNT(DISTINCT) and a NOT IN subquery (an antijoin with supplier).
SELECT
    p_brand,
    p_type,
    p_size,
    COUNT(DISTINCT ps_suppkey) AS supplier_cnt
FROM partsupp, part
WHERE p_partkey = ps_partkey
  AND p_type NOT LIKE 'MEDIUM POLISHED%'
  AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)
  AND ps_suppkey NOT IN (
      SELECT s_suppkey
      FROM supplier
      WHERE s_comment LIKE '%Customer%Complaints%'
  )
GROUP BY p_brand, p_type, p_size;
