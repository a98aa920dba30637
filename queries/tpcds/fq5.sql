-- schema: ../../tpch/tpcds_schema.sql
-- FQ5 (Idris et al., DYN): TPC-DS full join of date_dim, store_sales and
-- item on the sale date and the item.
SELECT *
FROM date_dim, store_sales, item
WHERE d_date_sk = ss_sold_date_sk
  AND ss_item_sk = i_item_sk;
