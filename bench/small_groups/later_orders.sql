SELECT COUNT(*) FROM orders o1 JOIN orders o2 ON o1.o_custkey = o2.o_custkey AND o1.o_orderdate < o2.o_orderdate
