SELECT o_orderkey, o_totalprice FROM orders QUALIFY ROW_NUMBER() OVER (ORDER BY o_totalprice DESC) <= 10
