-- The 22 analytic queries of the CH-benCHmark (Cole et al., "The mixed workload CH-benCHmark", DBTest 2011, as
-- published at https://db.in.tum.de/research/projects/CHbenCHmark/), over envbench's TPC-C tables and the CH tables
-- ch_supplier, ch_nation and ch_region. One text serves PostgreSQL and MariaDB/MySQL. Each query follows a line
-- "-- query: N". Like all of envbench's SQL it is made concrete by envbench_sql's Namespace::adapt: a table in braces
-- is qualified with the run's schema, and {cs:x} is x compared case-sensitively (CAST(x AS BINARY) on MariaDB/MySQL,
-- whose default collations ignore case; x as it is on PostgreSQL). What differs from the published text is listed in
-- docs/htap.md.

-- query: 1
SELECT ol_number,
       sum(ol_quantity)           AS sum_qty,
       sum(ol_amount)             AS sum_amount,
       avg(ol_quantity) AS avg_qty,
       avg(ol_amount) AS avg_amount,
       count(*)                   AS count_order
FROM {tpcc_order_line}
WHERE ol_delivery_d > '2007-01-02 00:00:00.000000'
GROUP BY ol_number
ORDER BY ol_number

-- query: 2
SELECT su_suppkey, su_name, n_name, i_id, i_name, su_address, su_phone, su_comment
FROM {tpcc_item}, {ch_supplier}, {tpcc_stock}, {ch_nation}, {ch_region},
     (SELECT s_i_id AS m_i_id, min(s_quantity) AS m_s_quantity
      FROM {tpcc_stock}, {ch_supplier}, {ch_nation}, {ch_region}
      WHERE mod((s_w_id * s_i_id), 10000) = su_suppkey
        AND su_nationkey = n_nationkey
        AND n_regionkey = r_regionkey
        AND r_name LIKE 'Europ%'
      GROUP BY s_i_id) AS m
WHERE i_id = s_i_id
  AND mod((s_w_id * s_i_id), 10000) = su_suppkey
  AND su_nationkey = n_nationkey
  AND n_regionkey = r_regionkey
  AND {cs:i_data} LIKE '%b'
  AND r_name LIKE 'Europ%'
  AND i_id = m_i_id
  AND s_quantity = m_s_quantity
ORDER BY n_name, su_name, i_id, su_suppkey

-- query: 3
SELECT ol_o_id, ol_w_id, ol_d_id,
       sum(ol_amount) AS revenue,
       o_entry_d
FROM {tpcc_customer}, {tpcc_new_order}, {tpcc_orders}, {tpcc_order_line}
WHERE {cs:c_state} LIKE 'A%'
  AND c_id = o_c_id
  AND c_w_id = o_w_id
  AND c_d_id = o_d_id
  AND no_w_id = o_w_id
  AND no_d_id = o_d_id
  AND no_o_id = o_id
  AND ol_w_id = o_w_id
  AND ol_d_id = o_d_id
  AND ol_o_id = o_id
  AND o_entry_d > '2007-01-02 00:00:00.000000'
GROUP BY ol_o_id, ol_w_id, ol_d_id, o_entry_d
ORDER BY revenue DESC, o_entry_d, ol_w_id, ol_d_id, ol_o_id

-- query: 4
SELECT o_ol_cnt, count(*) AS order_count
FROM {tpcc_orders}
WHERE o_entry_d >= '2007-01-02 00:00:00.000000'
  AND o_entry_d < '2012-01-02 00:00:00.000000'
  AND EXISTS (SELECT *
              FROM {tpcc_order_line}
              WHERE o_id = ol_o_id
                AND o_w_id = ol_w_id
                AND o_d_id = ol_d_id
                AND ol_delivery_d >= o_entry_d)
GROUP BY o_ol_cnt
ORDER BY o_ol_cnt

-- query: 5
SELECT n_name, sum(ol_amount) AS revenue
FROM {tpcc_customer}, {tpcc_orders}, {tpcc_order_line}, {tpcc_stock},
     {ch_supplier}, {ch_nation}, {ch_region}
WHERE c_id = o_c_id
  AND c_w_id = o_w_id
  AND c_d_id = o_d_id
  AND ol_o_id = o_id
  AND ol_w_id = o_w_id
  AND ol_d_id = o_d_id
  AND ol_w_id = s_w_id
  AND ol_i_id = s_i_id
  AND mod((s_w_id * s_i_id), 10000) = su_suppkey
  AND ascii(substr(c_state, 1, 1)) = su_nationkey
  AND su_nationkey = n_nationkey
  AND n_regionkey = r_regionkey
  AND r_name = 'Europe'
  AND o_entry_d >= '2007-01-02 00:00:00.000000'
GROUP BY n_name
ORDER BY revenue DESC, n_name

-- query: 6
SELECT sum(ol_amount) AS revenue
FROM {tpcc_order_line}
WHERE ol_delivery_d >= '1999-01-01 00:00:00.000000'
  AND ol_delivery_d < '2020-01-01 00:00:00.000000'
  AND ol_quantity BETWEEN 1 AND 100000

-- query: 7
SELECT su_nationkey                 AS supp_nation,
       substr({cs:c_state}, 1, 1) AS cust_nation,
       extract(year FROM o_entry_d) AS l_year,
       sum(ol_amount)               AS revenue
FROM {ch_supplier}, {tpcc_stock}, {tpcc_order_line}, {tpcc_orders}, {tpcc_customer},
     {ch_nation} AS n1, {ch_nation} AS n2
WHERE ol_supply_w_id = s_w_id
  AND ol_i_id = s_i_id
  AND mod((s_w_id * s_i_id), 10000) = su_suppkey
  AND ol_w_id = o_w_id
  AND ol_d_id = o_d_id
  AND ol_o_id = o_id
  AND c_id = o_c_id
  AND c_w_id = o_w_id
  AND c_d_id = o_d_id
  AND su_nationkey = n1.n_nationkey
  AND ascii(substr(c_state, 1, 1)) = n2.n_nationkey
  AND ((n1.n_name = 'Germany' AND n2.n_name = 'Cambodia')
    OR (n1.n_name = 'Cambodia' AND n2.n_name = 'Germany'))
  AND ol_delivery_d BETWEEN '2007-01-02 00:00:00.000000' AND '2012-01-02 00:00:00.000000'
GROUP BY su_nationkey, substr({cs:c_state}, 1, 1), extract(year FROM o_entry_d)
ORDER BY su_nationkey, cust_nation, l_year

-- query: 8
SELECT extract(year FROM o_entry_d) AS l_year,
       sum(CASE WHEN n2.n_name = 'Germany' THEN ol_amount ELSE 0 END)
           / NULLIF(sum(ol_amount), 0) AS mkt_share
FROM {tpcc_item}, {ch_supplier}, {tpcc_stock}, {tpcc_order_line}, {tpcc_orders},
     {tpcc_customer}, {ch_nation} AS n1, {ch_nation} AS n2, {ch_region}
WHERE i_id = s_i_id
  AND ol_i_id = s_i_id
  AND ol_supply_w_id = s_w_id
  AND mod((s_w_id * s_i_id), 10000) = su_suppkey
  AND ol_w_id = o_w_id
  AND ol_d_id = o_d_id
  AND ol_o_id = o_id
  AND c_id = o_c_id
  AND c_w_id = o_w_id
  AND c_d_id = o_d_id
  AND n1.n_nationkey = ascii(substr(c_state, 1, 1))
  AND n1.n_regionkey = r_regionkey
  AND ol_i_id < 1000
  AND r_name = 'Europe'
  AND su_nationkey = n2.n_nationkey
  AND o_entry_d BETWEEN '2007-01-02 00:00:00.000000' AND '2012-01-02 00:00:00.000000'
  AND {cs:i_data} LIKE '%b'
  AND i_id = ol_i_id
GROUP BY extract(year FROM o_entry_d)
ORDER BY l_year

-- query: 9
SELECT n_name,
       extract(year FROM o_entry_d) AS l_year,
       sum(ol_amount)               AS sum_profit
FROM {tpcc_item}, {tpcc_stock}, {ch_supplier}, {tpcc_order_line}, {tpcc_orders}, {ch_nation}
WHERE ol_i_id = s_i_id
  AND ol_supply_w_id = s_w_id
  AND mod((s_w_id * s_i_id), 10000) = su_suppkey
  AND ol_w_id = o_w_id
  AND ol_d_id = o_d_id
  AND ol_o_id = o_id
  AND ol_i_id = i_id
  AND su_nationkey = n_nationkey
  AND {cs:i_data} LIKE '%BB'
GROUP BY n_name, extract(year FROM o_entry_d)
ORDER BY n_name, l_year DESC

-- query: 10
SELECT c_id, c_last, sum(ol_amount) AS revenue, c_city, c_phone, n_name
FROM {tpcc_customer}, {tpcc_orders}, {tpcc_order_line}, {ch_nation}
WHERE c_id = o_c_id
  AND c_w_id = o_w_id
  AND c_d_id = o_d_id
  AND ol_w_id = o_w_id
  AND ol_d_id = o_d_id
  AND ol_o_id = o_id
  AND o_entry_d >= '2007-01-02 00:00:00.000000'
  AND o_entry_d <= ol_delivery_d
  AND n_nationkey = ascii(substr(c_state, 1, 1))
GROUP BY c_id, c_last, c_city, c_phone, n_name
ORDER BY revenue DESC, c_id, c_last, c_city, c_phone, n_name

-- query: 11
SELECT s_i_id, sum(s_order_cnt) AS ordercount
FROM {tpcc_stock}, {ch_supplier}, {ch_nation}
WHERE mod((s_w_id * s_i_id), 10000) = su_suppkey
  AND su_nationkey = n_nationkey
  AND n_name = 'Germany'
GROUP BY s_i_id
HAVING sum(s_order_cnt) >
       (SELECT sum(s_order_cnt) * 0.005
        FROM {tpcc_stock}, {ch_supplier}, {ch_nation}
        WHERE mod((s_w_id * s_i_id), 10000) = su_suppkey
          AND su_nationkey = n_nationkey
          AND n_name = 'Germany')
ORDER BY ordercount DESC, s_i_id

-- query: 12
SELECT o_ol_cnt,
       sum(CASE WHEN o_carrier_id = 1 OR o_carrier_id = 2 THEN 1 ELSE 0 END)   AS high_line_count,
       sum(CASE WHEN o_carrier_id <> 1 AND o_carrier_id <> 2 THEN 1 ELSE 0 END) AS low_line_count
FROM {tpcc_orders}, {tpcc_order_line}
WHERE ol_w_id = o_w_id
  AND ol_d_id = o_d_id
  AND ol_o_id = o_id
  AND o_entry_d <= ol_delivery_d
  AND ol_delivery_d < '2020-01-01 00:00:00.000000'
GROUP BY o_ol_cnt
ORDER BY o_ol_cnt

-- query: 13
SELECT c_count, count(*) AS custdist
FROM (SELECT c_id, count(o_id) AS c_count
      FROM {tpcc_customer}
           LEFT OUTER JOIN {tpcc_orders}
           ON (c_w_id = o_w_id
               AND c_d_id = o_d_id
               AND c_id = o_c_id
               AND o_carrier_id > 8)
      GROUP BY c_id) AS c_orders
GROUP BY c_count
ORDER BY custdist DESC, c_count DESC

-- query: 14
SELECT 100.00 * sum(CASE WHEN {cs:i_data} LIKE 'PR%' THEN ol_amount ELSE 0 END)
       / (1 + sum(ol_amount)) AS promo_revenue
FROM {tpcc_order_line}, {tpcc_item}
WHERE ol_i_id = i_id
  AND ol_delivery_d >= '2007-01-02 00:00:00.000000'
  AND ol_delivery_d < '2020-01-02 00:00:00.000000'

-- query: 15
WITH revenue AS (
     SELECT mod((s_w_id * s_i_id), 10000) AS supplier_no,
            sum(ol_amount)                 AS total_revenue
     FROM {tpcc_order_line}, {tpcc_stock}
     WHERE ol_i_id = s_i_id
       AND ol_supply_w_id = s_w_id
       AND ol_delivery_d >= '2007-01-02 00:00:00.000000'
     GROUP BY mod((s_w_id * s_i_id), 10000))
SELECT su_suppkey, su_name, su_address, su_phone, total_revenue
FROM {ch_supplier}, revenue
WHERE su_suppkey = supplier_no
  AND total_revenue = (SELECT max(total_revenue) FROM revenue)
ORDER BY su_suppkey

-- query: 16
SELECT {cs:i_name} AS i_name,
       substr({cs:i_data}, 1, 3) AS brand,
       i_price,
       count(DISTINCT mod((s_w_id * s_i_id), 10000)) AS supplier_cnt
FROM {tpcc_stock}, {tpcc_item}
WHERE i_id = s_i_id
  AND {cs:i_data} NOT LIKE 'zz%'
  AND mod((s_w_id * s_i_id), 10000) NOT IN
      (SELECT su_suppkey
       FROM {ch_supplier}
       WHERE su_comment LIKE '%bad%')
GROUP BY {cs:i_name}, substr({cs:i_data}, 1, 3), i_price
ORDER BY supplier_cnt DESC, i_name, brand, i_price

-- query: 17
SELECT sum(ol_amount) / 2.0 AS avg_yearly
FROM {tpcc_order_line},
     (SELECT i_id, avg(ol_quantity) AS a
      FROM {tpcc_item}, {tpcc_order_line}
      WHERE {cs:i_data} LIKE '%b'
        AND ol_i_id = i_id
      GROUP BY i_id) AS t
WHERE ol_i_id = t.i_id
  AND ol_quantity < t.a

-- query: 18
SELECT c_last, c_id, o_id, o_entry_d, o_ol_cnt, sum(ol_amount) AS amount_sum
FROM {tpcc_customer}, {tpcc_orders}, {tpcc_order_line}
WHERE c_id = o_c_id
  AND c_w_id = o_w_id
  AND c_d_id = o_d_id
  AND ol_w_id = o_w_id
  AND ol_d_id = o_d_id
  AND ol_o_id = o_id
GROUP BY o_id, o_w_id, o_d_id, c_id, c_last, o_entry_d, o_ol_cnt
HAVING sum(ol_amount) > 200
ORDER BY amount_sum DESC, o_entry_d, o_w_id, o_d_id, o_id

-- query: 19
SELECT sum(ol_amount) AS revenue
FROM {tpcc_order_line}, {tpcc_item}
WHERE (ol_i_id = i_id
       AND {cs:i_data} LIKE '%a'
       AND ol_quantity >= 1
       AND ol_quantity <= 10
       AND i_price BETWEEN 1 AND 400000
       AND ol_w_id IN (1, 2, 3))
   OR (ol_i_id = i_id
       AND {cs:i_data} LIKE '%b'
       AND ol_quantity >= 1
       AND ol_quantity <= 10
       AND i_price BETWEEN 1 AND 400000
       AND ol_w_id IN (1, 2, 4))
   OR (ol_i_id = i_id
       AND {cs:i_data} LIKE '%c'
       AND ol_quantity >= 1
       AND ol_quantity <= 10
       AND i_price BETWEEN 1 AND 400000
       AND ol_w_id IN (1, 5, 3))

-- query: 20
SELECT su_name, su_address
FROM {ch_supplier}, {ch_nation}
WHERE su_suppkey IN
      (SELECT mod(s_i_id * s_w_id, 10000)
       FROM {tpcc_stock}, {tpcc_order_line}
       WHERE s_i_id IN (SELECT i_id
                        FROM {tpcc_item}
                        WHERE {cs:i_data} LIKE 'co%')
         AND ol_i_id = s_i_id
         AND ol_delivery_d > '2010-05-23 12:00:00'
       GROUP BY s_i_id, s_w_id, s_quantity
       HAVING 2 * s_quantity > sum(ol_quantity))
  AND su_nationkey = n_nationkey
  AND n_name = 'Germany'
ORDER BY su_name, su_address

-- query: 21
SELECT su_name, count(*) AS numwait
FROM {ch_supplier}, {tpcc_order_line} AS l1, {tpcc_orders}, {tpcc_stock}, {ch_nation}
WHERE l1.ol_o_id = o_id
  AND l1.ol_w_id = o_w_id
  AND l1.ol_d_id = o_d_id
  AND l1.ol_w_id = s_w_id
  AND l1.ol_i_id = s_i_id
  AND mod((s_w_id * s_i_id), 10000) = su_suppkey
  AND l1.ol_delivery_d > o_entry_d
  AND NOT EXISTS (SELECT *
                  FROM {tpcc_order_line} AS l2
                  WHERE l2.ol_o_id = l1.ol_o_id
                    AND l2.ol_w_id = l1.ol_w_id
                    AND l2.ol_d_id = l1.ol_d_id
                    AND l2.ol_delivery_d > l1.ol_delivery_d)
  AND su_nationkey = n_nationkey
  AND n_name = 'Germany'
GROUP BY su_name
ORDER BY numwait DESC, su_name

-- query: 22
SELECT substr({cs:c_state}, 1, 1) AS country,
       count(*)              AS numcust,
       sum(c_balance)        AS totacctbal
FROM {tpcc_customer}
WHERE substr(c_phone, 1, 1) IN ('1', '2', '3', '4', '5', '6', '7')
  AND c_balance > (SELECT avg(c_balance)
                   FROM {tpcc_customer}
                   WHERE c_balance > 0.00
                     AND substr(c_phone, 1, 1) IN ('1', '2', '3', '4', '5', '6', '7'))
  AND NOT EXISTS (SELECT *
                  FROM {tpcc_orders}
                  WHERE o_c_id = c_id
                    AND o_w_id = c_w_id
                    AND o_d_id = c_d_id)
GROUP BY substr({cs:c_state}, 1, 1)
ORDER BY substr({cs:c_state}, 1, 1)
