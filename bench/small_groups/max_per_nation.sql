SELECT c_custkey, c_acctbal, MAX(c_acctbal) OVER (PARTITION BY c_nationkey) AS top FROM customer
