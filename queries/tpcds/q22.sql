-- schema: ../../tpch/tpcds_schema.sql
-- TPC-DS Q22, spec template (v1 text, which joins warehouse) with the
-- qualification value DMS = 1200.
-- Changes for dynyan: GROUP BY ROLLUP(i_product_name, i_brand, i_class,
-- i_category) rewritten to a plain GROUP BY on the finest grouping (the
-- rollup's coarser subtotal rows are not produced); ORDER BY qoh,
-- i_product_name, i_brand, i_class, i_category and LIMIT 100 dropped (as in
-- the DYN paper). The join with warehouse is kept.
SELECT
    i_product_name,
    i_brand,
    i_class,
    i_category,
    AVG(inv_quantity_on_hand) AS qoh
FROM inventory, date_dim, item, warehouse
WHERE inv_date_sk = d_date_sk
  AND inv_item_sk = i_item_sk
  AND inv_warehouse_sk = w_warehouse_sk
  AND d_month_seq BETWEEN 1200 AND 1200 + 11
GROUP BY i_product_name, i_brand, i_class, i_category;
