SELECT o_orderkey, o_custkey, o_orderdate FROM orders QUALIFY RANK() OVER (PARTITION BY o_custkey ORDER BY o_orderdate DESC) <= 3
