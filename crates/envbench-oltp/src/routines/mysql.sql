-- envbench's TPC-C transactions as MariaDB/MySQL stored procedures, one CALL (one round trip) per transaction, as
-- HammerDB's TPROC-C runs them. Each procedure is its own transaction: it starts one, commits it, and on any error
-- rolls it back before passing the error on. Each ends with one row: the order, customer or count the transaction
-- produced, and New-Order's 0 when it rolled back on its unused item. Every name is qualified with the run's
-- database ({customer}, ...), filled in by routines.rs, which also splits this file at the "-- routine:" lines. The
-- inputs come from the client, drawn exactly as the client-side mode draws them.

-- routine: envbench_tpcc_new_order
-- New-Order (clause 2.4). The order lines arrive as a JSON array of [item, supply warehouse, quantity], sorted by
-- (supply warehouse, item) with an unused item last: JSON_TABLE reads them in that order, so the set-based stock
-- update locks its rows in that order too. An unused item (the specification's 1% rollback) is found when its line
-- cannot be written, after the rest of the work, which is then rolled back.
CREATE PROCEDURE {new_order_routine}(IN p_w INT, IN p_d INT, IN p_c INT, IN p_lines TEXT)
    COMMENT {comment}
    MODIFIES SQL DATA
BEGIN
    DECLARE v_count INT;
    DECLARE v_discount DOUBLE;
    DECLARE v_last VARCHAR(16);
    DECLARE v_credit CHAR(2);
    DECLARE v_w_tax DOUBLE;
    DECLARE v_d_tax DOUBLE;
    DECLARE v_order INT;
    DECLARE v_all_local INT;
    DECLARE v_lines INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET v_count = JSON_LENGTH(p_lines);
    START TRANSACTION;
    SELECT c_discount, c_last, c_credit INTO v_discount, v_last, v_credit
        FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
    SELECT w_tax INTO v_w_tax FROM {warehouse} WHERE w_id = p_w;
    SELECT d_next_o_id, d_tax INTO v_order, v_d_tax FROM {district} WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
    IF v_discount IS NULL OR v_w_tax IS NULL OR v_order IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the customer, warehouse or district of the order is missing';
    END IF;
    UPDATE {district} SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
    SELECT MIN(l.w = p_w) INTO v_all_local FROM JSON_TABLE(p_lines, '$[*]' COLUMNS (w INT PATH '$[1]')) AS l;
    INSERT INTO {orders} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
        VALUES (v_order, p_d, p_w, p_c, CURRENT_TIMESTAMP, NULL, v_count, v_all_local);
    INSERT INTO {new_order} (no_o_id, no_d_id, no_w_id) VALUES (v_order, p_d, p_w);
    UPDATE JSON_TABLE(p_lines, '$[*]' COLUMNS (i INT PATH '$[0]', w INT PATH '$[1]', q INT PATH '$[2]')) AS l
        STRAIGHT_JOIN {stock} AS s ON s.s_i_id = l.i AND s.s_w_id = l.w
        SET s.s_quantity = IF(s.s_quantity >= l.q + 10, s.s_quantity - l.q, s.s_quantity - l.q + 91),
            s.s_ytd = s.s_ytd + l.q,
            s.s_order_cnt = s.s_order_cnt + 1,
            s.s_remote_cnt = s.s_remote_cnt + (l.w <> p_w);
    INSERT INTO {order_line} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                              ol_quantity, ol_amount, ol_dist_info)
        SELECT v_order, p_d, p_w, l.n, l.i, l.w, NULL, l.q, ROUND(l.q * it.i_price, 2),
               ELT(p_d, s.s_dist_01, s.s_dist_02, s.s_dist_03, s.s_dist_04, s.s_dist_05, s.s_dist_06, s.s_dist_07,
                   s.s_dist_08, s.s_dist_09, s.s_dist_10)
        FROM JSON_TABLE(p_lines, '$[*]' COLUMNS (n FOR ORDINALITY, i INT PATH '$[0]', w INT PATH '$[1]',
                                                 q INT PATH '$[2]')) AS l
        STRAIGHT_JOIN {item} AS it ON it.i_id = l.i
        STRAIGHT_JOIN {stock} AS s ON s.s_i_id = l.i AND s.s_w_id = l.w;
    SET v_lines = ROW_COUNT();
    IF v_lines < v_count THEN
        IF EXISTS (SELECT 1 FROM {item}
                   WHERE i_id = JSON_EXTRACT(p_lines, CONCAT('$[', v_count - 1, '][0]'))) THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'stock rows of the order are missing';
        END IF;
        ROLLBACK;
        SELECT 0;
    ELSE
        COMMIT;
        SELECT v_order;
    END IF;
END;

-- routine: envbench_tpcc_payment
-- Payment (clause 2.5). p_last names the customer by last name (60% of payments: the middle one of those sorted by
-- first name), or is NULL and p_c gives the id.
CREATE PROCEDURE {payment_routine}(IN p_w INT, IN p_d INT, IN p_c_w INT, IN p_c_d INT, IN p_c INT,
                                   IN p_last VARCHAR(16), IN p_amount DOUBLE)
    COMMENT {comment}
    MODIFIES SQL DATA
BEGIN
    DECLARE v_c INT DEFAULT p_c;
    DECLARE v_count INT;
    DECLARE v_middle INT;
    DECLARE v_w_name, v_d_name VARCHAR(10);
    DECLARE v_w_street_1, v_w_street_2, v_w_city, v_d_street_1, v_d_street_2, v_d_city VARCHAR(20);
    DECLARE v_w_state, v_d_state CHAR(2);
    DECLARE v_w_zip, v_d_zip CHAR(9);
    DECLARE v_first, v_c_last VARCHAR(16);
    DECLARE v_middle_name, v_credit CHAR(2);
    DECLARE v_street_1, v_street_2, v_city VARCHAR(20);
    DECLARE v_state CHAR(2);
    DECLARE v_zip CHAR(9);
    DECLARE v_phone CHAR(16);
    DECLARE v_credit_lim, v_discount, v_balance DOUBLE;
    DECLARE v_since DATETIME;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    UPDATE {warehouse} SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
    SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
        INTO v_w_name, v_w_street_1, v_w_street_2, v_w_city, v_w_state, v_w_zip
        FROM {warehouse} WHERE w_id = p_w;
    UPDATE {district} SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
    SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
        INTO v_d_name, v_d_street_1, v_d_street_2, v_d_city, v_d_state, v_d_zip
        FROM {district} WHERE d_w_id = p_w AND d_id = p_d;
    IF p_last IS NOT NULL THEN
        SELECT COUNT(*) INTO v_count FROM {customer} WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last;
        IF v_count = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no customer of the last name given in the district';
        END IF;
        SET v_middle = (v_count - 1) DIV 2;
        SELECT c_id INTO v_c FROM {customer} WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_last = p_last
            ORDER BY c_first LIMIT v_middle, 1;
    END IF;
    SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit,
           c_credit_lim, c_discount, c_balance, c_since
        INTO v_first, v_middle_name, v_c_last, v_street_1, v_street_2, v_city, v_state, v_zip, v_phone, v_credit,
             v_credit_lim, v_discount, v_balance, v_since
        FROM {customer} WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c FOR UPDATE;
    IF v_w_name IS NULL OR v_d_name IS NULL OR v_credit IS NULL THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the warehouse, district or customer of the payment is missing';
    END IF;
    IF v_credit = 'BC' THEN
        UPDATE {customer} SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                c_payment_cnt = c_payment_cnt + 1,
                c_data = LEFT(CONCAT(v_c, ' ', p_c_d, ' ', p_c_w, ' ', p_d, ' ', p_w, ' ',
                                     CAST(p_amount AS DECIMAL(12, 2)), ' | ', COALESCE(c_data, '')), 500)
            WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    ELSE
        UPDATE {customer} SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                c_payment_cnt = c_payment_cnt + 1
            WHERE c_w_id = p_c_w AND c_d_id = p_c_d AND c_id = v_c;
    END IF;
    INSERT INTO {history} (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        VALUES (v_c, p_c_d, p_c_w, p_d, p_w, CURRENT_TIMESTAMP, p_amount, CONCAT(v_w_name, '    ', v_d_name));
    COMMIT;
    SELECT v_c;
END;

-- routine: envbench_tpcc_order_status
-- Order-Status (clause 2.6): a customer's last order and its lines, read only.
CREATE PROCEDURE {order_status_routine}(IN p_w INT, IN p_d INT, IN p_c INT, IN p_last VARCHAR(16))
    COMMENT {comment}
    READS SQL DATA
BEGIN
    DECLARE v_c INT DEFAULT p_c;
    DECLARE v_count INT;
    DECLARE v_middle INT;
    DECLARE v_balance DOUBLE;
    DECLARE v_first, v_c_last VARCHAR(16);
    DECLARE v_middle_name CHAR(2);
    DECLARE v_order INT DEFAULT NULL;
    DECLARE v_carrier INT;
    DECLARE v_entry DATETIME;
    DECLARE v_lines INT;
    DECLARE v_total DOUBLE;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_order = NULL;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION READ ONLY;
    IF p_last IS NOT NULL THEN
        SELECT COUNT(*) INTO v_count FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
        IF v_count = 0 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no customer of the last name given in the district';
        END IF;
        SET v_middle = (v_count - 1) DIV 2;
        SELECT c_id INTO v_c FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
            ORDER BY c_first LIMIT v_middle, 1;
    END IF;
    SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle_name, v_c_last
        FROM {customer} WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
    SELECT o_id, o_carrier_id, o_entry_d INTO v_order, v_carrier, v_entry
        FROM {orders} WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
    IF v_order IS NOT NULL THEN
        SELECT COUNT(*), SUM(ol_amount) INTO v_lines, v_total FROM (
            SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
            FROM {order_line} WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_order) AS order_lines;
    END IF;
    COMMIT;
    SELECT v_c;
END;

-- routine: envbench_tpcc_delivery
-- Delivery (clause 2.7), in one transaction: the oldest undelivered order of each district gets a carrier, its lines
-- a delivery date, its customer the amount. A district with nothing to deliver is skipped. Ends with the orders
-- delivered.
CREATE PROCEDURE {delivery_routine}(IN p_w INT, IN p_carrier INT)
    COMMENT {comment}
    MODIFIES SQL DATA
BEGIN
    DECLARE v_d INT DEFAULT 1;
    DECLARE v_order INT;
    DECLARE v_c INT;
    DECLARE v_amount DOUBLE;
    DECLARE v_delivered INT DEFAULT 0;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_order = NULL;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    WHILE v_d <= {districts} DO
        SET v_order = NULL;
        SELECT no_o_id INTO v_order FROM {new_order} WHERE no_w_id = p_w AND no_d_id = v_d
            ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        IF v_order IS NOT NULL THEN
            DELETE FROM {new_order} WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_order;
            -- None deleted: another terminal of the same warehouse delivered it first.
            IF ROW_COUNT() > 0 THEN
                SET v_c = NULL;
                SELECT o_c_id INTO v_c FROM {orders} WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_order;
                IF v_c IS NULL THEN
                    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'an undelivered order is missing';
                END IF;
                UPDATE {orders} SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_order;
                UPDATE {order_line} SET ol_delivery_d = CURRENT_TIMESTAMP
                    WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_order;
                SELECT COALESCE(SUM(ol_amount), 0) INTO v_amount FROM {order_line}
                    WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_order;
                UPDATE {customer} SET c_balance = c_balance + v_amount, c_delivery_cnt = c_delivery_cnt + 1
                    WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
                SET v_delivered = v_delivered + 1;
            END IF;
        END IF;
        SET v_d = v_d + 1;
    END WHILE;
    COMMIT;
    SELECT v_delivered;
END;

-- routine: envbench_tpcc_stock_level
-- Stock-Level (clause 2.8): how many distinct items of the district's last 20 orders are below the threshold.
CREATE PROCEDURE {stock_level_routine}(IN p_w INT, IN p_d INT, IN p_threshold INT)
    COMMENT {comment}
    READS SQL DATA
BEGIN
    DECLARE v_next INT;
    DECLARE v_low INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION READ ONLY;
    SELECT d_next_o_id INTO v_next FROM {district} WHERE d_w_id = p_w AND d_id = p_d;
    SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM {order_line}, {stock}
        WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
          AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
    COMMIT;
    SELECT v_low;
END;
