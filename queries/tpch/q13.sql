-- TPC-H Q13' (customer distribution), spec text with the validation values
-- WORD1 = 'special', WORD2 = 'requests'. Schema: tpch/schema.sql.
-- Changes for dynyan (as in the DYN paper): the LEFT OUTER JOIN of customer
-- and orders is made an inner join (customers without orders no longer make
-- a c_count = 0 group); ORDER BY custdist DESC, c_count DESC dropped.
-- Needs a derived table (an aggregate over an aggregate).
SELECT
    c_count,
    COUNT(*) AS custdist
FROM (
    SELECT
        c_custkey,
        COUNT(o_orderkey)
    FROM customer
    JOIN orders
      ON c_custkey = o_custkey
     AND o_comment NOT LIKE '%special%requests%'
    GROUP BY c_custkey
) AS c_orders (c_custkey, c_count)
GROUP BY c_count;
