-- schema: ../../tpch/tpcds_schema.sql
-- TPC-DS Q19, spec template with the qualification values MANAGER = 8,
-- MONTH = 11, YEAR = 1998.
-- Changes for dynyan (as in the DYN paper): ORDER BY ext_price DESC,
-- i_brand, i_brand_id, i_manufact_id, i_manufact and LIMIT 100 dropped.
-- Note: `substr(ca_zip, 1, 5) <> substr(s_zip, 1, 5)` is a <> predicate
-- between customer_address and store, two atoms that are not adjacent in
-- the join tree (store_sales - customer - customer_address, store_sales -
-- store): dynyan maintains the query without it, widened by the variables it
-- reads (and those that make it free-connex), and checks it on each row of
-- that result before aggregating (`dynyan explain` shows the plan).
SELECT
    i_brand_id AS brand_id,
    i_brand AS brand,
    i_manufact_id,
    i_manufact,
    SUM(ss_ext_sales_price) AS ext_price
FROM date_dim, store_sales, item, customer, customer_address, store
WHERE d_date_sk = ss_sold_date_sk
  AND ss_item_sk = i_item_sk
  AND i_manager_id = 8
  AND d_moy = 11
  AND d_year = 1998
  AND ss_customer_sk = c_customer_sk
  AND c_current_addr_sk = ca_address_sk
  AND SUBSTR(ca_zip, 1, 5) <> SUBSTR(s_zip, 1, 5)
  AND ss_store_sk = s_store_sk
GROUP BY i_brand, i_brand_id, i_manufact_id, i_manufact;
