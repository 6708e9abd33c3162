//! The transactions, each one database transaction of prepared statements sent one at a time (so every round trip
//! of the environment counts, as it does for an application): TPC-C's New-Order, Payment, Order-Status, Delivery
//! and Stock-Level with the specification's inputs and mix (clauses 2.4-2.8, 5.2.3), and pgbench's built-in
//! TPC-B-like transaction.

use crate::load::{ACCOUNTS_PER_SCALE, DISTRICTS, ITEMS, TELLERS_PER_SCALE};
use crate::random::Random;
use envbench_sql::{Connection, DbError, Dialect, Value};
use serde::{Deserialize, Serialize};

/// A kind of transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
    TpcB,
}

impl Kind {
    pub const TPCC: [Kind; 5] = [Kind::NewOrder, Kind::Payment, Kind::OrderStatus, Kind::Delivery, Kind::StockLevel];

    /// The name in tables and test ids.
    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "New-Order",
            Kind::Payment => "Payment",
            Kind::OrderStatus => "Order-Status",
            Kind::Delivery => "Delivery",
            Kind::StockLevel => "Stock-Level",
            Kind::TpcB => "TPC-B",
        }
    }

    /// Keying time and mean think time in seconds (TPC-C clause 5.2.5), used with `--keying-thinking`.
    pub fn keying_and_thinking(self) -> (f64, f64) {
        match self {
            Kind::NewOrder => (18.0, 12.0),
            Kind::Payment => (3.0, 12.0),
            Kind::OrderStatus => (2.0, 10.0),
            Kind::Delivery | Kind::StockLevel => (2.0, 5.0),
            Kind::TpcB => (0.0, 0.0),
        }
    }
}

/// How a transaction ended when it did not fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Committed,
    /// Rolled back on purpose: the 1% of New-Orders with an unused item id.
    RolledBack,
}

/// The next TPC-C transaction by the specification's minimum mix: 4% each of Order-Status, Delivery and
/// Stock-Level, 43% Payment, the rest (45%) New-Order.
pub fn pick(random: &mut Random) -> Kind {
    match random.range(1, 100) {
        1..=4 => Kind::OrderStatus,
        5..=8 => Kind::Delivery,
        9..=12 => Kind::StockLevel,
        13..=55 => Kind::Payment,
        _ => Kind::NewOrder,
    }
}

/// The statements of the transactions in one dialect, built once per virtual user.
pub struct Statements {
    stock_for_district: Vec<String>,
    district_for_update: String,
    customer_for_update: String,
    oldest_new_order: String,
}

impl Statements {
    pub fn new(dialect: Dialect) -> Statements {
        let lock = dialect.for_update();
        Statements {
            stock_for_district: (1..=DISTRICTS)
                .map(|d| {
                    format!(
                        "SELECT s_quantity, s_data, s_dist_{d:02} FROM tpcc_stock WHERE s_i_id = ? AND s_w_id = ?{lock}"
                    )
                })
                .collect(),
            district_for_update: format!(
                "SELECT d_next_o_id, d_tax FROM tpcc_district WHERE d_w_id = ? AND d_id = ?{lock}"
            ),
            customer_for_update: format!(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, \
                 c_credit_lim, c_discount, c_balance, c_since FROM tpcc_customer WHERE c_w_id = ? AND c_d_id = ? AND \
                 c_id = ?{lock}"
            ),
            oldest_new_order: format!(
                "SELECT no_o_id FROM tpcc_new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1{lock}"
            ),
        }
    }
}

/// Where a virtual user works.
#[derive(Clone, Copy, Debug)]
pub struct Terminal {
    /// Its home warehouse (or, for TPC-B, unused).
    pub home: i64,
    /// Warehouses in the database (or pgbench's scale).
    pub scale: i64,
}

impl Terminal {
    /// Another warehouse than home, for remote stock and remote customers (home when there is only one).
    fn remote_warehouse(&self, random: &mut Random) -> i64 {
        if self.scale == 1 {
            return self.home;
        }
        let other = random.range(1, self.scale - 1);
        if other >= self.home { other + 1 } else { other }
    }
}

/// Run one transaction of `kind`. On an error the transaction is left open: the caller rolls it back.
pub fn run(
    kind: Kind,
    connection: &mut dyn Connection,
    statements: &Statements,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    match kind {
        Kind::NewOrder => new_order(connection, statements, random, terminal),
        Kind::Payment => payment(connection, statements, random, terminal),
        Kind::OrderStatus => order_status(connection, random, terminal),
        Kind::Delivery => delivery(connection, statements, random, terminal),
        Kind::StockLevel => stock_level(connection, random, terminal),
        Kind::TpcB => tpcb(connection, random, terminal),
    }
}

fn int(value: i64) -> Value {
    Value::Int(value)
}

/// A read-only transaction begins without taking SQLite's write lock.
fn begin_read(connection: &mut dyn Connection) -> Result<(), DbError> {
    match connection.dialect() {
        Dialect::Sqlite => connection.batch("BEGIN"),
        _ => connection.begin(),
    }
}

/// New-Order (clause 2.4): 5-15 order lines, 1% of them supplied by a remote warehouse, 1% of the transactions
/// rolled back on an unused item id.
fn new_order(
    connection: &mut dyn Connection,
    statements: &Statements,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    let w = terminal.home;
    let d = random.range(1, DISTRICTS);
    let c = random.customer_id();
    let line_count = random.range(5, 15);
    let rollback = random.chance(1);
    let mut lines: Vec<(i64, i64, i64)> = (1..=line_count)
        .map(|number| {
            let item = if rollback && number == line_count { ITEMS + 1 } else { random.item_id() };
            let supply = if random.chance(1) { terminal.remote_warehouse(random) } else { w };
            (item, supply, random.range(1, 10))
        })
        .collect();
    // Stock rows are locked in one order by every New-Order, which avoids most deadlocks between them.
    let unused = lines.last().copied().filter(|_| rollback);
    lines.sort_by_key(|&(item, supply, _)| (supply, item));
    if let Some(unused) = unused {
        // The unused item stays last, as the specification has it, so the work before it is done and undone.
        let at = lines.iter().position(|l| *l == unused).expect("the unused line is in the order");
        let line = lines.remove(at);
        lines.push(line);
    }
    let all_local = i64::from(lines.iter().all(|&(_, supply, _)| supply == w));

    connection.begin()?;
    let customer = connection
        .query_optional(
            "SELECT c_discount, c_last, c_credit FROM tpcc_customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            &[int(w), int(d), int(c)],
        )?
        .ok_or_else(|| DbError::other(format!("customer {w}/{d}/{c} is missing")))?;
    let discount = customer.real(0)?;
    let w_tax = connection
        .query_optional("SELECT w_tax FROM tpcc_warehouse WHERE w_id = ?", &[int(w)])?
        .ok_or_else(|| DbError::other(format!("warehouse {w} is missing")))?
        .real(0)?;
    let district = connection
        .query_optional(&statements.district_for_update, &[int(w), int(d)])?
        .ok_or_else(|| DbError::other(format!("district {w}/{d} is missing")))?;
    let (order_id, d_tax) = (district.int(0)?, district.real(1)?);
    connection.execute(
        "UPDATE tpcc_district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
        &[int(w), int(d)],
    )?;
    connection.execute(
        "INSERT INTO tpcc_orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) \
         VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)",
        &[int(order_id), int(d), int(w), int(c), int(line_count), int(all_local)],
    )?;
    connection.execute(
        "INSERT INTO tpcc_new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
        &[int(order_id), int(d), int(w)],
    )?;
    let mut total = 0.0;
    for (number, &(item, supply, quantity)) in lines.iter().enumerate() {
        let Some(item_row) =
            connection.query_optional("SELECT i_price, i_name, i_data FROM tpcc_item WHERE i_id = ?", &[int(item)])?
        else {
            // "Item number is not valid": the specification's intended rollback.
            connection.rollback()?;
            return Ok(Outcome::RolledBack);
        };
        let price = item_row.real(0)?;
        let stock = connection
            .query_optional(&statements.stock_for_district[(d - 1) as usize], &[int(item), int(supply)])?
            .ok_or_else(|| DbError::other(format!("stock {supply}/{item} is missing")))?;
        let (stock_quantity, dist_info) = (stock.int(0)?, stock.text(2)?);
        let new_quantity =
            if stock_quantity >= quantity + 10 { stock_quantity - quantity } else { stock_quantity - quantity + 91 };
        connection.execute(
            "UPDATE tpcc_stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, \
             s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
            &[int(new_quantity), int(quantity), int(i64::from(supply != w)), int(item), int(supply)],
        )?;
        let amount = (quantity as f64 * price * 100.0).round() / 100.0;
        total += amount;
        connection.execute(
            "INSERT INTO tpcc_order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
             ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
            &[
                int(order_id),
                int(d),
                int(w),
                int(number as i64 + 1),
                int(item),
                int(supply),
                int(quantity),
                Value::Real(amount),
                Value::Text(dist_info),
            ],
        )?;
    }
    // The order's total as the terminal would display it.
    let _ = total * (1.0 - discount) * (1.0 + w_tax + d_tax);
    connection.commit()?;
    Ok(Outcome::Committed)
}

/// The customer of a Payment or Order-Status: 60% by last name (the middle one of those sorted by first name),
/// 40% by id.
fn choose_customer(connection: &mut dyn Connection, random: &mut Random, w: i64, d: i64) -> Result<i64, DbError> {
    if random.chance(60) {
        let last = random.last_name();
        let ids = connection.query(
            "SELECT c_id FROM tpcc_customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
            &[int(w), int(d), Value::Text(last.clone())],
        )?;
        if ids.is_empty() {
            return Err(DbError::other(format!("no customer named {last} in district {w}/{d}")));
        }
        ids[(ids.len() - 1) / 2].int(0)
    } else {
        Ok(random.customer_id())
    }
}

/// Payment (clause 2.5): 85% of customers in the home warehouse, 15% in another; bad-credit customers get the
/// payment prepended to their data.
fn payment(
    connection: &mut dyn Connection,
    statements: &Statements,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    let (w, d) = (terminal.home, random.range(1, DISTRICTS));
    let (c_w, c_d) =
        if random.chance(85) { (w, d) } else { (terminal.remote_warehouse(random), random.range(1, DISTRICTS)) };
    let amount = random.decimal(1.0, 5000.0, 2);
    connection.begin()?;
    connection.execute("UPDATE tpcc_warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?", &[Value::Real(amount), int(w)])?;
    let warehouse = connection
        .query_optional(
            "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM tpcc_warehouse WHERE w_id = ?",
            &[int(w)],
        )?
        .ok_or_else(|| DbError::other(format!("warehouse {w} is missing")))?;
    connection.execute(
        "UPDATE tpcc_district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
        &[Value::Real(amount), int(w), int(d)],
    )?;
    let district = connection
        .query_optional(
            "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM tpcc_district WHERE d_w_id = ? AND \
             d_id = ?",
            &[int(w), int(d)],
        )?
        .ok_or_else(|| DbError::other(format!("district {w}/{d} is missing")))?;
    let c = choose_customer(connection, random, c_w, c_d)?;
    let customer = connection
        .query_optional(&statements.customer_for_update, &[int(c_w), int(c_d), int(c)])?
        .ok_or_else(|| DbError::other(format!("customer {c_w}/{c_d}/{c} is missing")))?;
    if customer.text(9)? == "BC" {
        let old = connection
            .query_optional(
                "SELECT c_data FROM tpcc_customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
                &[int(c_w), int(c_d), int(c)],
            )?
            .map(|row| row.text(0))
            .transpose()?
            .unwrap_or_default();
        let mut data = format!("{c} {c_d} {c_w} {d} {w} {amount:.2} | {old}");
        data.truncate(500);
        connection.execute(
            "UPDATE tpcc_customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
             c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            &[Value::Real(amount), Value::Real(amount), Value::Text(data), int(c_w), int(c_d), int(c)],
        )?;
    } else {
        connection.execute(
            "UPDATE tpcc_customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
             c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            &[Value::Real(amount), Value::Real(amount), int(c_w), int(c_d), int(c)],
        )?;
    }
    let history = format!("{}    {}", warehouse.text(0)?, district.text(0)?);
    connection.execute(
        "INSERT INTO tpcc_history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
         VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
        &[int(c), int(c_d), int(c_w), int(d), int(w), Value::Real(amount), Value::Text(history)],
    )?;
    connection.commit()?;
    Ok(Outcome::Committed)
}

/// Order-Status (clause 2.6): a customer's last order and its lines, read only.
fn order_status(connection: &mut dyn Connection, random: &mut Random, terminal: Terminal) -> Result<Outcome, DbError> {
    let (w, d) = (terminal.home, random.range(1, DISTRICTS));
    begin_read(connection)?;
    let c = choose_customer(connection, random, w, d)?;
    connection.query(
        "SELECT c_balance, c_first, c_middle, c_last FROM tpcc_customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
        &[int(w), int(d), int(c)],
    )?;
    if let Some(order) = connection.query_optional(
        "SELECT o_id, o_carrier_id, o_entry_d FROM tpcc_orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? \
         ORDER BY o_id DESC LIMIT 1",
        &[int(w), int(d), int(c)],
    )? {
        connection.query(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM tpcc_order_line \
             WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
            &[int(w), int(d), int(order.int(0)?)],
        )?;
    }
    connection.commit()?;
    Ok(Outcome::Committed)
}

/// Delivery (clause 2.7), in one transaction: the oldest undelivered order of each of the ten districts gets a
/// carrier, its lines a delivery date, its customer the amount. A district with nothing to deliver is skipped.
fn delivery(
    connection: &mut dyn Connection,
    statements: &Statements,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    let w = terminal.home;
    let carrier = random.range(1, 10);
    connection.begin()?;
    for d in 1..=DISTRICTS {
        let Some(oldest) = connection.query_optional(&statements.oldest_new_order, &[int(w), int(d)])? else {
            continue;
        };
        let order_id = oldest.int(0)?;
        let deleted = connection.execute(
            "DELETE FROM tpcc_new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
            &[int(w), int(d), int(order_id)],
        )?;
        if deleted == 0 {
            // Another terminal of the same warehouse delivered it first.
            continue;
        }
        let customer = connection
            .query_optional(
                "SELECT o_c_id FROM tpcc_orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
                &[int(w), int(d), int(order_id)],
            )?
            .ok_or_else(|| DbError::other(format!("order {w}/{d}/{order_id} is missing")))?
            .int(0)?;
        connection.execute(
            "UPDATE tpcc_orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
            &[int(carrier), int(w), int(d), int(order_id)],
        )?;
        connection.execute(
            "UPDATE tpcc_order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND \
             ol_o_id = ?",
            &[int(w), int(d), int(order_id)],
        )?;
        let amount = connection
            .query_optional(
                "SELECT SUM(ol_amount) FROM tpcc_order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
                &[int(w), int(d), int(order_id)],
            )?
            .filter(|row| !row.is_null(0))
            .map(|row| row.real(0))
            .transpose()?
            .unwrap_or(0.0);
        connection.execute(
            "UPDATE tpcc_customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 \
             WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
            &[Value::Real(amount), int(w), int(d), int(customer)],
        )?;
    }
    connection.commit()?;
    Ok(Outcome::Committed)
}

/// Stock-Level (clause 2.8): how many distinct items of the district's last 20 orders are below a threshold.
fn stock_level(connection: &mut dyn Connection, random: &mut Random, terminal: Terminal) -> Result<Outcome, DbError> {
    let (w, d) = (terminal.home, random.range(1, DISTRICTS));
    let threshold = random.range(10, 20);
    begin_read(connection)?;
    let next = connection
        .query_optional("SELECT d_next_o_id FROM tpcc_district WHERE d_w_id = ? AND d_id = ?", &[int(w), int(d)])?
        .ok_or_else(|| DbError::other(format!("district {w}/{d} is missing")))?
        .int(0)?;
    connection.query(
        "SELECT COUNT(DISTINCT s_i_id) FROM tpcc_order_line, tpcc_stock WHERE ol_w_id = ? AND ol_d_id = ? AND \
         ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
        &[int(w), int(d), int(next), int(next - 20), int(w), int(threshold)],
    )?;
    connection.commit()?;
    Ok(Outcome::Committed)
}

/// pgbench's built-in `tpcb-like` script: three balance updates, a read and a history row.
fn tpcb(connection: &mut dyn Connection, random: &mut Random, terminal: Terminal) -> Result<Outcome, DbError> {
    let scale = terminal.scale;
    let aid = random.range(1, ACCOUNTS_PER_SCALE * scale);
    let bid = random.range(1, scale);
    let tid = random.range(1, TELLERS_PER_SCALE * scale);
    let delta = random.range(-5000, 5000);
    connection.begin()?;
    connection.execute("UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?", &[int(delta), int(aid)])?;
    connection.query("SELECT abalance FROM pgbench_accounts WHERE aid = ?", &[int(aid)])?;
    connection.execute("UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?", &[int(delta), int(tid)])?;
    connection.execute("UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?", &[int(delta), int(bid)])?;
    connection.execute(
        "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)",
        &[int(tid), int(bid), int(aid), int(delta)],
    )?;
    connection.commit()?;
    Ok(Outcome::Committed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::NuRandConstants;

    #[test]
    fn the_mix_follows_the_specification() {
        let mut random = Random::new(11, NuRandConstants::load(11));
        let mut counts = std::collections::BTreeMap::new();
        let draws = 200_000;
        for _ in 0..draws {
            *counts.entry(pick(&mut random)).or_insert(0u32) += 1;
        }
        let share = |kind| f64::from(counts[&kind]) / f64::from(draws) * 100.0;
        assert!((share(Kind::NewOrder) - 45.0).abs() < 0.6);
        assert!((share(Kind::Payment) - 43.0).abs() < 0.6);
        for kind in [Kind::OrderStatus, Kind::Delivery, Kind::StockLevel] {
            assert!((share(kind) - 4.0).abs() < 0.3, "{kind:?}");
        }
    }

    #[test]
    fn remote_warehouses_are_never_home() {
        let mut random = Random::new(5, NuRandConstants::load(5));
        let terminal = Terminal { home: 3, scale: 4 };
        for _ in 0..1000 {
            let w = terminal.remote_warehouse(&mut random);
            assert!((1..=4).contains(&w) && w != 3);
        }
        assert_eq!(Terminal { home: 1, scale: 1 }.remote_warehouse(&mut random), 1);
    }
}
