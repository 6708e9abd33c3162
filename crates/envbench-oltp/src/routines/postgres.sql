-- envbench's TPC-C transactions as PL/pgSQL functions, one call (one round trip) per transaction, as HammerDB's
-- TPROC-C runs them. Each is called outside a transaction block, so the call is its transaction: an exception rolls
-- it all back. Every name is qualified with the run's schema ({customer}, ...), filled in by routines.rs, which also
-- splits this file at the "-- routine:" lines and runs each part as one batch. The inputs come from the client: the
-- specification's NURand customers and items, remote lines and payments, drawn exactly as the client-side mode draws
-- them.

-- routine: envbench_tpcc_new_order
-- New-Order (clause 2.4). The order lines arrive as three arrays, sorted by (supply warehouse, item) with an unused
-- item last. The stock rows are locked in that order, then updated in one set-based statement. An unused item (the
-- specification's 1% rollback) is found when its line cannot be written, after the rest of the work, which the
-- block's own exception then undoes (as HammerDB's exception handler does); the function answers 0 and no error
-- reaches the client or the server's log. Any other error ends the call as an error.
CREATE FUNCTION {new_order_routine}(p_w integer, p_d integer, p_c integer, p_items text, p_supplies text,
                                    p_quantities text)
RETURNS integer LANGUAGE plpgsql AS $envbench$
DECLARE
    v_items integer[] := p_items::integer[];
    v_supplies integer[] := p_supplies::integer[];
    v_quantities integer[] := p_quantities::integer[];
    v_count integer := cardinality(p_items::integer[]);
    v_discount double precision;
    v_last text;
    v_credit text;
    v_w_tax double precision;
    v_d_tax double precision;
    v_order integer;
    v_lines integer;
BEGIN
  BEGIN
    SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit
        FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'customer %/%/% is missing', p_w, p_d, p_c;
    END IF;
    SELECT w_tax INTO v_w_tax FROM {warehouse} WHERE w_id = p_w;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'warehouse % is missing', p_w;
    END IF;
    UPDATE {district} SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d
        RETURNING d_next_o_id - 1, d_tax INTO v_order, v_d_tax;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'district %/% is missing', p_w, p_d;
    END IF;
    INSERT INTO {orders} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
        VALUES (v_order, p_d, p_w, p_c, CURRENT_TIMESTAMP, NULL, v_count,
                (SELECT bool_and(s = p_w)::integer FROM unnest(v_supplies) AS s));
    INSERT INTO {new_order} (no_o_id, no_d_id, no_w_id) VALUES (v_order, p_d, p_w);
    PERFORM 1 FROM {stock} WHERE (s_w_id, s_i_id) IN (SELECT * FROM unnest(v_supplies, v_items))
        ORDER BY s_w_id, s_i_id FOR UPDATE;
    UPDATE {stock} SET
            s_quantity = CASE WHEN s_quantity >= l.q + 10 THEN s_quantity - l.q ELSE s_quantity - l.q + 91 END,
            s_ytd = s_ytd + l.q,
            s_order_cnt = s_order_cnt + 1,
            s_remote_cnt = s_remote_cnt + (l.w <> p_w)::integer
        FROM unnest(v_items, v_supplies, v_quantities) AS l(i, w, q)
        WHERE s_i_id = l.i AND s_w_id = l.w;
    INSERT INTO {order_line} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                              ol_quantity, ol_amount, ol_dist_info)
        SELECT v_order, p_d, p_w, l.n, l.i, l.w, NULL, l.q, round((l.q * i_price)::numeric, 2)::double precision,
               CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
                        WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                        WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
        FROM unnest(v_items, v_supplies, v_quantities) WITH ORDINALITY AS l(i, w, q, n)
        JOIN {item} ON i_id = l.i
        JOIN {stock} ON s_i_id = l.i AND s_w_id = l.w;
    GET DIAGNOSTICS v_lines = ROW_COUNT;
    IF v_lines < v_count THEN
        IF EXISTS (SELECT 1 FROM {item} WHERE i_id = v_items[v_count]) THEN
            RAISE EXCEPTION 'stock rows of order %/%/% are missing', p_w, p_d, v_order;
        END IF;
        RAISE EXCEPTION USING ERRCODE = '{rollback_code}', MESSAGE = 'item number is not valid';
    END IF;
    RETURN v_order;
  EXCEPTION WHEN SQLSTATE '{rollback_code}' THEN
    RETURN 0;
  END;
END
$envbench$;
COMMENT ON FUNCTION {new_order_routine}(integer, integer, integer, text, text, text) IS {comment};

-- routine: envbench_tpcc_payment
-- Payment (clause 2.5). p_last names the customer by last name (60% of payments: the middle one of those sorted by
-- first name), or is NULL and p_c gives the id.
CREATE FUNCTION {payment_routine}(p_w integer, p_d integer, p_c_w integer, p_c_d integer, p_c integer, p_last text,
                                  p_amount double precision)
RETURNS integer LANGUAGE plpgsql AS $envbench$
DECLARE
    v_c integer := p_c;
    v_count integer;
    v_warehouse record;
    v_district record;
    v_customer record;
BEGIN
    UPDATE {warehouse} SET w_ytd = w_ytd + p_amount WHERE w_id = p_w
        RETURNING w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_warehouse;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'warehouse % is missing', p_w;
    END IF;
    UPDATE {district} SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d
        RETURNING d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_district;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'district %/% is missing', p_w, p_d;
    END IF;
    IF p_last IS NOT NULL THEN
        SELECT count(*) INTO v_count FROM {customer} WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last;
        IF v_count = 0 THEN
            RAISE EXCEPTION 'no customer named % in district %/%', p_last, p_c_w, p_c_d;
        END IF;
        SELECT c_id INTO v_c FROM {customer} WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last
            ORDER BY c_first OFFSET (v_count - 1) / 2 LIMIT 1;
    END IF;
    SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit,
           c_credit_lim, c_discount, c_balance, c_since INTO v_customer
        FROM {customer} WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'customer %/%/% is missing', p_c_w, p_c_d, v_c;
    END IF;
    IF v_customer.c_credit = 'BC' THEN
        UPDATE {customer} SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                c_payment_cnt = c_payment_cnt + 1,
                c_data = left(v_c || ' ' || p_c_d || ' ' || p_c_w || ' ' || p_d || ' ' || p_w || ' '
                              || to_char(p_amount, 'FM999999990.00') || ' | ' || coalesce(c_data, ''), 500)
            WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    ELSE
        UPDATE {customer} SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                c_payment_cnt = c_payment_cnt + 1
            WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    END IF;
    INSERT INTO {history} (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        VALUES (v_c, p_c_d, p_c_w, p_d, p_w, CURRENT_TIMESTAMP, p_amount,
                v_warehouse.w_name || '    ' || v_district.d_name);
    RETURN v_c;
END
$envbench$;
COMMENT ON FUNCTION {payment_routine}(integer, integer, integer, integer, integer, text, double precision)
    IS {comment};

-- routine: envbench_tpcc_order_status
-- Order-Status (clause 2.6): a customer's last order and its lines, read only.
CREATE FUNCTION {order_status_routine}(p_w integer, p_d integer, p_c integer, p_last text)
RETURNS integer LANGUAGE plpgsql AS $envbench$
DECLARE
    v_c integer := p_c;
    v_count integer;
    v_customer record;
    v_order record;
    v_lines integer;
    v_total double precision;
BEGIN
    IF p_last IS NOT NULL THEN
        SELECT count(*) INTO v_count FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
        IF v_count = 0 THEN
            RAISE EXCEPTION 'no customer named % in district %/%', p_last, p_w, p_d;
        END IF;
        SELECT c_id INTO v_c FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
            ORDER BY c_first OFFSET (v_count - 1) / 2 LIMIT 1;
    END IF;
    SELECT c_balance, c_first, c_middle, c_last INTO v_customer
        FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
    SELECT o_id, o_carrier_id, o_entry_d INTO v_order
        FROM {orders} WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
    IF FOUND THEN
        SELECT count(*), sum(ol_amount) INTO v_lines, v_total FROM (
            SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
            FROM {order_line} WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_order.o_id) AS order_lines;
    END IF;
    RETURN v_c;
END
$envbench$;
COMMENT ON FUNCTION {order_status_routine}(integer, integer, integer, text) IS {comment};

-- routine: envbench_tpcc_delivery
-- Delivery (clause 2.7), in one transaction: the oldest undelivered order of each district gets a carrier, its lines
-- a delivery date, its customer the amount. A district with nothing to deliver is skipped. Returns the orders
-- delivered.
CREATE FUNCTION {delivery_routine}(p_w integer, p_carrier integer)
RETURNS integer LANGUAGE plpgsql AS $envbench$
DECLARE
    v_order integer;
    v_c integer;
    v_amount double precision;
    v_delivered integer := 0;
BEGIN
    FOR v_d IN 1..{districts} LOOP
        SELECT no_o_id INTO v_order FROM {new_order} WHERE no_w_id = p_w AND no_d_id = v_d
            ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        CONTINUE WHEN NOT FOUND;
        DELETE FROM {new_order} WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_order;
        -- Another terminal of the same warehouse delivered it first.
        CONTINUE WHEN NOT FOUND;
        UPDATE {orders} SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_order
            RETURNING o_c_id INTO v_c;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'order %/%/% is missing', p_w, v_d, v_order;
        END IF;
        WITH delivered AS (
            UPDATE {order_line} SET ol_delivery_d = CURRENT_TIMESTAMP
                WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_order RETURNING ol_amount)
        SELECT coalesce(sum(ol_amount), 0) INTO v_amount FROM delivered;
        UPDATE {customer} SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
            WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
        v_delivered := v_delivered + 1;
    END LOOP;
    RETURN v_delivered;
END
$envbench$;
COMMENT ON FUNCTION {delivery_routine}(integer, integer) IS {comment};

-- routine: envbench_tpcc_stock_level
-- Stock-Level (clause 2.8): how many distinct items of the district's last 20 orders are below the threshold.
CREATE FUNCTION {stock_level_routine}(p_w integer, p_d integer, p_threshold integer)
RETURNS integer LANGUAGE plpgsql AS $envbench$
DECLARE
    v_next integer;
    v_low integer;
BEGIN
    SELECT d_next_o_id INTO v_next FROM {district} WHERE d_w_id = p_w AND d_id = p_d;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'district %/% is missing', p_w, p_d;
    END IF;
    SELECT count(DISTINCT s_i_id) INTO v_low FROM {order_line}, {stock}
        WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
          AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
    RETURN v_low;
END
$envbench$;
COMMENT ON FUNCTION {stock_level_routine}(integer, integer, integer) IS {comment};
