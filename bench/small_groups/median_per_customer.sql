SELECT o_custkey, MEDIAN(o_totalprice) AS m, COUNT(*) AS n FROM orders GROUP BY o_custkey
