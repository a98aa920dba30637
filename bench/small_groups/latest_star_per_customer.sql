SELECT o_custkey, o_orderkey, o_orderdate FROM (SELECT o.*, ROW_NUMBER() OVER (PARTITION BY o_custkey ORDER BY o_orderdate DESC, o_orderkey DESC) AS rn FROM orders o) t WHERE rn = 1
