//! The transactions, each one database transaction of prepared statements sent one at a time (so every round trip
//! of the environment counts, as it does for an application): TPC-C's New-Order, Payment, Order-Status, Delivery
//! and Stock-Level with the specification's inputs and mix (clauses 2.4-2.8, 5.2.3), and pgbench's built-in
//! TPC-B-like transaction. Every statement names its tables qualified with the run's namespace ([`Statements`]).

use crate::cardinality::{ACCOUNTS_PER_SCALE, DISTRICTS, ITEMS, TELLERS_PER_SCALE};
use crate::random::{Random, Zipf};
use envbench_sql::{Connection, DbError, Namespace, Value};
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

    /// The name as the command line spells it (`--mix new-order=45`, `--slo new-order:p95<=20ms`), and the live
    /// metrics' `transaction` label.
    pub fn option_name(self) -> &'static str {
        match self {
            Kind::NewOrder => "new-order",
            Kind::Payment => "payment",
            Kind::OrderStatus => "order-status",
            Kind::Delivery => "delivery",
            Kind::StockLevel => "stock-level",
            Kind::TpcB => "tpcb",
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

/// The statements of the transactions, in the namespace's dialect and with its qualified table names, built once per
/// virtual user.
pub struct Statements {
    // New-Order.
    customer_discount: String,
    warehouse_tax: String,
    district_for_update: String,
    next_order_id: String,
    insert_order: String,
    insert_new_order: String,
    item: String,
    stock_for_district: Vec<String>,
    update_stock: String,
    insert_order_line: String,
    // Payment and Order-Status.
    customers_by_last_name: String,
    warehouse_payment: String,
    warehouse_address: String,
    district_payment: String,
    district_address: String,
    customer_for_update: String,
    customer_data: String,
    customer_payment_bad_credit: String,
    customer_payment: String,
    insert_history: String,
    customer_balance: String,
    last_order: String,
    order_lines: String,
    // Delivery.
    oldest_new_order: String,
    delete_new_order: String,
    order_customer: String,
    set_carrier: String,
    deliver_lines: String,
    order_amount: String,
    customer_delivery: String,
    // Stock-Level.
    district_next_order: String,
    low_stock: String,
    // TPC-B.
    update_account: String,
    read_account: String,
    update_teller: String,
    update_branch: String,
    insert_tpcb_history: String,
}

impl Statements {
    pub fn new(namespace: &Namespace) -> Statements {
        let dialect = namespace.dialect();
        // Portable SQL, as the dialect runs it (` FOR UPDATE` is the dialect's row lock, `LIMIT` its row limit).
        let adapt = |portable: String| dialect.adapt(&portable);
        let [warehouse, district, customer, history, new_order, orders, order_line, item, stock] = [
            "tpcc_warehouse",
            "tpcc_district",
            "tpcc_customer",
            "tpcc_history",
            "tpcc_new_order",
            "tpcc_orders",
            "tpcc_order_line",
            "tpcc_item",
            "tpcc_stock",
        ]
        .map(|table| namespace.qualify(table));
        let [branches, tellers, accounts, tpcb_history] =
            ["pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"]
                .map(|table| namespace.qualify(table));
        Statements {
            customer_discount: adapt(format!(
                "SELECT c_discount, c_last, c_credit FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
            )),
            warehouse_tax: adapt(format!("SELECT w_tax FROM {warehouse} WHERE w_id = ?")),
            district_for_update: adapt(format!(
                "SELECT d_next_o_id, d_tax FROM {district} WHERE d_w_id = ? AND d_id = ? FOR UPDATE"
            )),
            next_order_id: adapt(format!(
                "UPDATE {district} SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?"
            )),
            insert_order: adapt(format!(
                "INSERT INTO {orders} (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) \
                 VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)"
            )),
            insert_new_order: adapt(format!("INSERT INTO {new_order} (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)")),
            item: adapt(format!("SELECT i_price, i_name, i_data FROM {item} WHERE i_id = ?")),
            stock_for_district: (1..=DISTRICTS)
                .map(|d| {
                    adapt(format!(
                        "SELECT s_quantity, s_data, s_dist_{d:02} FROM {stock} WHERE s_i_id = ? AND s_w_id = ? \
                         FOR UPDATE"
                    ))
                })
                .collect(),
            update_stock: adapt(format!(
                "UPDATE {stock} SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, \
                 s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"
            )),
            insert_order_line: adapt(format!(
                "INSERT INTO {order_line} (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, \
                 ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"
            )),
            customers_by_last_name: adapt(format!(
                "SELECT c_id FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"
            )),
            warehouse_payment: adapt(format!("UPDATE {warehouse} SET w_ytd = w_ytd + ? WHERE w_id = ?")),
            warehouse_address: adapt(format!(
                "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM {warehouse} WHERE w_id = ?"
            )),
            district_payment: adapt(format!("UPDATE {district} SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?")),
            district_address: adapt(format!(
                "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM {district} WHERE d_w_id = ? AND \
                 d_id = ?"
            )),
            customer_for_update: adapt(format!(
                "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, \
                 c_credit_lim, c_discount, c_balance, c_since FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND \
                 c_id = ? FOR UPDATE"
            )),
            customer_data: adapt(format!("SELECT c_data FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")),
            customer_payment_bad_credit: adapt(format!(
                "UPDATE {customer} SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
                 c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
            )),
            customer_payment: adapt(format!(
                "UPDATE {customer} SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, \
                 c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
            )),
            insert_history: adapt(format!(
                "INSERT INTO {history} (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) \
                 VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"
            )),
            customer_balance: adapt(format!(
                "SELECT c_balance, c_first, c_middle, c_last FROM {customer} WHERE c_w_id = ? AND c_d_id = ? AND \
                 c_id = ?"
            )),
            last_order: adapt(format!(
                "SELECT o_id, o_carrier_id, o_entry_d FROM {orders} WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? \
                 ORDER BY o_id DESC LIMIT 1"
            )),
            order_lines: adapt(format!(
                "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM {order_line} \
                 WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
            )),
            oldest_new_order: adapt(format!(
                "SELECT no_o_id FROM {new_order} WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE"
            )),
            delete_new_order: adapt(format!(
                "DELETE FROM {new_order} WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"
            )),
            order_customer: adapt(format!("SELECT o_c_id FROM {orders} WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")),
            set_carrier: adapt(format!(
                "UPDATE {orders} SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"
            )),
            deliver_lines: adapt(format!(
                "UPDATE {order_line} SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND \
                 ol_o_id = ?"
            )),
            order_amount: adapt(format!(
                "SELECT SUM(ol_amount) FROM {order_line} WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
            )),
            customer_delivery: adapt(format!(
                "UPDATE {customer} SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 \
                 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
            )),
            district_next_order: adapt(format!("SELECT d_next_o_id FROM {district} WHERE d_w_id = ? AND d_id = ?")),
            low_stock: adapt(format!(
                "SELECT COUNT(DISTINCT s_i_id) FROM {order_line}, {stock} WHERE ol_w_id = ? AND ol_d_id = ? AND \
                 ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?"
            )),
            update_account: adapt(format!("UPDATE {accounts} SET abalance = abalance + ? WHERE aid = ?")),
            read_account: adapt(format!("SELECT abalance FROM {accounts} WHERE aid = ?")),
            update_teller: adapt(format!("UPDATE {tellers} SET tbalance = tbalance + ? WHERE tid = ?")),
            update_branch: adapt(format!("UPDATE {branches} SET bbalance = bbalance + ? WHERE bid = ?")),
            insert_tpcb_history: adapt(format!(
                "INSERT INTO {tpcb_history} (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)"
            )),
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
    /// TPC-B's accounts drawn with this skew instead of uniformly.
    pub skew: Option<Zipf>,
}

impl Terminal {
    /// Another warehouse than home, for remote stock and remote customers (home when there is only one).
    pub fn remote_warehouse(&self, random: &mut Random) -> i64 {
        if self.scale == 1 {
            return self.home;
        }
        let other = random.range(1, self.scale - 1);
        if other >= self.home { other + 1 } else { other }
    }
}

/// A line of a New-Order: the item, the warehouse that supplies it and the quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderLine {
    pub item: i64,
    pub supply: i64,
    pub quantity: i64,
}

/// The inputs of a New-Order (clause 2.4.1), drawn the same way in both modes.
#[derive(Clone, Debug, PartialEq)]
pub struct NewOrderInput {
    pub w: i64,
    pub d: i64,
    pub c: i64,
    /// 5-15 lines, 1% of them supplied by a remote warehouse, no (supply, item) twice, sorted by (supply, item) so
    /// every New-Order locks stock rows in one order (which avoids most deadlocks between them); in 1% of the orders
    /// the last line's item is unused, and it stays last, as the specification has it, so the work before it is done
    /// and undone.
    pub lines: Vec<OrderLine>,
    pub all_local: bool,
}

impl NewOrderInput {
    pub fn draw(random: &mut Random, terminal: Terminal) -> NewOrderInput {
        let w = terminal.home;
        let d = random.range(1, DISTRICTS);
        let c = random.customer_id();
        let line_count = random.range(5, 15);
        let rollback = random.chance(1);
        let mut lines: Vec<OrderLine> = Vec::with_capacity(line_count as usize);
        for number in 1..=line_count {
            let unused = rollback && number == line_count;
            // A set-based stock update counts a row once, so an order names each (supply, item) once: a repeat is
            // drawn again.
            let line = loop {
                let item = if unused { ITEMS + 1 } else { random.item_id() };
                let supply = if random.chance(1) { terminal.remote_warehouse(random) } else { w };
                if !lines.iter().any(|l| l.item == item && l.supply == supply) {
                    break OrderLine { item, supply, quantity: random.range(1, 10) };
                }
            };
            lines.push(line);
        }
        let unused = lines.last().copied().filter(|_| rollback);
        lines.sort_by_key(|line| (line.supply, line.item));
        if let Some(unused) = unused {
            let at = lines.iter().position(|l| *l == unused).expect("the unused line is in the order");
            let line = lines.remove(at);
            lines.push(line);
        }
        let all_local = lines.iter().all(|line| line.supply == w);
        NewOrderInput { w, d, c, lines, all_local }
    }
}

/// How a Payment or Order-Status names its customer: 60% by last name (the middle one of those sorted by first
/// name), 40% by id.
#[derive(Clone, Debug, PartialEq)]
pub enum CustomerChoice {
    ById(i64),
    ByLastName(String),
}

impl CustomerChoice {
    pub fn draw(random: &mut Random) -> CustomerChoice {
        if random.chance(60) {
            CustomerChoice::ByLastName(random.last_name())
        } else {
            CustomerChoice::ById(random.customer_id())
        }
    }

    /// The id (0 when by name) and the last name (NULL when by id), as the routines take them.
    pub fn arguments(&self) -> (i64, Value) {
        match self {
            CustomerChoice::ById(id) => (*id, Value::Null),
            CustomerChoice::ByLastName(last) => (0, Value::Text(last.clone())),
        }
    }
}

/// The inputs of a Payment (clause 2.5.1): 85% of customers in the home warehouse, 15% in another.
#[derive(Clone, Debug, PartialEq)]
pub struct PaymentInput {
    pub w: i64,
    pub d: i64,
    pub c_w: i64,
    pub c_d: i64,
    pub customer: CustomerChoice,
    pub amount: f64,
}

impl PaymentInput {
    pub fn draw(random: &mut Random, terminal: Terminal) -> PaymentInput {
        let (w, d) = (terminal.home, random.range(1, DISTRICTS));
        let (c_w, c_d) =
            if random.chance(85) { (w, d) } else { (terminal.remote_warehouse(random), random.range(1, DISTRICTS)) };
        let amount = random.decimal(1.0, 5000.0, 2);
        let customer = CustomerChoice::draw(random);
        PaymentInput { w, d, c_w, c_d, customer, amount }
    }
}

/// The inputs of an Order-Status (clause 2.6.1).
#[derive(Clone, Debug, PartialEq)]
pub struct OrderStatusInput {
    pub w: i64,
    pub d: i64,
    pub customer: CustomerChoice,
}

impl OrderStatusInput {
    pub fn draw(random: &mut Random, terminal: Terminal) -> OrderStatusInput {
        let (w, d) = (terminal.home, random.range(1, DISTRICTS));
        OrderStatusInput { w, d, customer: CustomerChoice::draw(random) }
    }
}

/// The inputs of a Delivery (clause 2.7.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeliveryInput {
    pub w: i64,
    pub carrier: i64,
}

impl DeliveryInput {
    pub fn draw(random: &mut Random, terminal: Terminal) -> DeliveryInput {
        DeliveryInput { w: terminal.home, carrier: random.range(1, 10) }
    }
}

/// The inputs of a Stock-Level (clause 2.8.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StockLevelInput {
    pub w: i64,
    pub d: i64,
    pub threshold: i64,
}

impl StockLevelInput {
    pub fn draw(random: &mut Random, terminal: Terminal) -> StockLevelInput {
        StockLevelInput { w: terminal.home, d: random.range(1, DISTRICTS), threshold: random.range(10, 20) }
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
        Kind::OrderStatus => order_status(connection, statements, random, terminal),
        Kind::Delivery => delivery(connection, statements, random, terminal),
        Kind::StockLevel => stock_level(connection, statements, random, terminal),
        Kind::TpcB => tpcb(connection, statements, random, terminal),
    }
}

fn int(value: i64) -> Value {
    Value::Int(value)
}

/// A read-only transaction begins without taking SQLite's write lock.
fn begin_read(connection: &mut dyn Connection) -> Result<(), DbError> {
    let begin = connection.dialect().ops().begin_read;
    connection.batch(begin)
}

/// New-Order (clause 2.4): 5-15 order lines, 1% of them supplied by a remote warehouse, 1% of the transactions
/// rolled back on an unused item id.
fn new_order(
    connection: &mut dyn Connection,
    statements: &Statements,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    let NewOrderInput { w, d, c, lines, all_local } = NewOrderInput::draw(random, terminal);
    let (line_count, all_local) = (lines.len() as i64, i64::from(all_local));

    connection.begin()?;
    let customer = connection
        .query_optional(&statements.customer_discount, &[int(w), int(d), int(c)])?
        .ok_or_else(|| DbError::other(format!("customer {w}/{d}/{c} is missing")))?;
    let discount = customer.real(0)?;
    let w_tax = connection
        .query_optional(&statements.warehouse_tax, &[int(w)])?
        .ok_or_else(|| DbError::other(format!("warehouse {w} is missing")))?
        .real(0)?;
    let district = connection
        .query_optional(&statements.district_for_update, &[int(w), int(d)])?
        .ok_or_else(|| DbError::other(format!("district {w}/{d} is missing")))?;
    let (order_id, d_tax) = (district.int(0)?, district.real(1)?);
    connection.execute(&statements.next_order_id, &[int(w), int(d)])?;
    connection
        .execute(&statements.insert_order, &[int(order_id), int(d), int(w), int(c), int(line_count), int(all_local)])?;
    connection.execute(&statements.insert_new_order, &[int(order_id), int(d), int(w)])?;
    let mut total = 0.0;
    for (number, &OrderLine { item, supply, quantity }) in lines.iter().enumerate() {
        let Some(item_row) = connection.query_optional(&statements.item, &[int(item)])? else {
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
            &statements.update_stock,
            &[int(new_quantity), int(quantity), int(i64::from(supply != w)), int(item), int(supply)],
        )?;
        let amount = (quantity as f64 * price * 100.0).round() / 100.0;
        total += amount;
        connection.execute(
            &statements.insert_order_line,
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

/// The id of the customer a Payment or Order-Status names: by last name, the middle one of those sorted by first
/// name.
fn customer_id(
    connection: &mut dyn Connection,
    statements: &Statements,
    choice: CustomerChoice,
    w: i64,
    d: i64,
) -> Result<i64, DbError> {
    match choice {
        CustomerChoice::ById(id) => Ok(id),
        CustomerChoice::ByLastName(last) => {
            let ids =
                connection.query(&statements.customers_by_last_name, &[int(w), int(d), Value::Text(last.clone())])?;
            if ids.is_empty() {
                return Err(DbError::other(format!("no customer named {last} in district {w}/{d}")));
            }
            ids[(ids.len() - 1) / 2].int(0)
        }
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
    let PaymentInput { w, d, c_w, c_d, customer, amount } = PaymentInput::draw(random, terminal);
    connection.begin()?;
    connection.execute(&statements.warehouse_payment, &[Value::Real(amount), int(w)])?;
    let warehouse = connection
        .query_optional(&statements.warehouse_address, &[int(w)])?
        .ok_or_else(|| DbError::other(format!("warehouse {w} is missing")))?;
    connection.execute(&statements.district_payment, &[Value::Real(amount), int(w), int(d)])?;
    let district = connection
        .query_optional(&statements.district_address, &[int(w), int(d)])?
        .ok_or_else(|| DbError::other(format!("district {w}/{d} is missing")))?;
    let c = customer_id(connection, statements, customer, c_w, c_d)?;
    let customer = connection
        .query_optional(&statements.customer_for_update, &[int(c_w), int(c_d), int(c)])?
        .ok_or_else(|| DbError::other(format!("customer {c_w}/{c_d}/{c} is missing")))?;
    if customer.text(9)? == "BC" {
        let old = connection
            .query_optional(&statements.customer_data, &[int(c_w), int(c_d), int(c)])?
            .map(|row| row.text(0))
            .transpose()?
            .unwrap_or_default();
        let mut data = format!("{c} {c_d} {c_w} {d} {w} {amount:.2} | {old}");
        data.truncate(500);
        connection.execute(
            &statements.customer_payment_bad_credit,
            &[Value::Real(amount), Value::Real(amount), Value::Text(data), int(c_w), int(c_d), int(c)],
        )?;
    } else {
        connection.execute(
            &statements.customer_payment,
            &[Value::Real(amount), Value::Real(amount), int(c_w), int(c_d), int(c)],
        )?;
    }
    let history = format!("{}    {}", warehouse.text(0)?, district.text(0)?);
    connection.execute(
        &statements.insert_history,
        &[int(c), int(c_d), int(c_w), int(d), int(w), Value::Real(amount), Value::Text(history)],
    )?;
    connection.commit()?;
    Ok(Outcome::Committed)
}

/// Order-Status (clause 2.6): a customer's last order and its lines, read only.
fn order_status(
    connection: &mut dyn Connection,
    statements: &Statements,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    let OrderStatusInput { w, d, customer } = OrderStatusInput::draw(random, terminal);
    begin_read(connection)?;
    let c = customer_id(connection, statements, customer, w, d)?;
    connection.query(&statements.customer_balance, &[int(w), int(d), int(c)])?;
    if let Some(order) = connection.query_optional(&statements.last_order, &[int(w), int(d), int(c)])? {
        connection.query(&statements.order_lines, &[int(w), int(d), int(order.int(0)?)])?;
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
    let DeliveryInput { w, carrier } = DeliveryInput::draw(random, terminal);
    connection.begin()?;
    for d in 1..=DISTRICTS {
        let Some(oldest) = connection.query_optional(&statements.oldest_new_order, &[int(w), int(d)])? else {
            continue;
        };
        let order_id = oldest.int(0)?;
        let deleted = connection.execute(&statements.delete_new_order, &[int(w), int(d), int(order_id)])?;
        if deleted == 0 {
            // Another terminal of the same warehouse delivered it first.
            continue;
        }
        let customer = connection
            .query_optional(&statements.order_customer, &[int(w), int(d), int(order_id)])?
            .ok_or_else(|| DbError::other(format!("order {w}/{d}/{order_id} is missing")))?
            .int(0)?;
        connection.execute(&statements.set_carrier, &[int(carrier), int(w), int(d), int(order_id)])?;
        connection.execute(&statements.deliver_lines, &[int(w), int(d), int(order_id)])?;
        let amount = connection
            .query_optional(&statements.order_amount, &[int(w), int(d), int(order_id)])?
            .filter(|row| !row.is_null(0))
            .map(|row| row.real(0))
            .transpose()?
            .unwrap_or(0.0);
        connection.execute(&statements.customer_delivery, &[Value::Real(amount), int(w), int(d), int(customer)])?;
    }
    connection.commit()?;
    Ok(Outcome::Committed)
}

/// Stock-Level (clause 2.8): how many distinct items of the district's last 20 orders are below a threshold.
fn stock_level(
    connection: &mut dyn Connection,
    statements: &Statements,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    let StockLevelInput { w, d, threshold } = StockLevelInput::draw(random, terminal);
    begin_read(connection)?;
    let next = connection
        .query_optional(&statements.district_next_order, &[int(w), int(d)])?
        .ok_or_else(|| DbError::other(format!("district {w}/{d} is missing")))?
        .int(0)?;
    connection.query(&statements.low_stock, &[int(w), int(d), int(next), int(next - 20), int(w), int(threshold)])?;
    connection.commit()?;
    Ok(Outcome::Committed)
}

/// pgbench's built-in `tpcb-like` script: three balance updates, a read and a history row.
fn tpcb(
    connection: &mut dyn Connection,
    statements: &Statements,
    random: &mut Random,
    terminal: Terminal,
) -> Result<Outcome, DbError> {
    let scale = terminal.scale;
    let aid = match &terminal.skew {
        Some(zipf) => zipf.draw(random),
        None => random.range(1, ACCOUNTS_PER_SCALE * scale),
    };
    let bid = random.range(1, scale);
    let tid = random.range(1, TELLERS_PER_SCALE * scale);
    let delta = random.range(-5000, 5000);
    connection.begin()?;
    connection.execute(&statements.update_account, &[int(delta), int(aid)])?;
    connection.query(&statements.read_account, &[int(aid)])?;
    connection.execute(&statements.update_teller, &[int(delta), int(tid)])?;
    connection.execute(&statements.update_branch, &[int(delta), int(bid)])?;
    connection.execute(&statements.insert_tpcb_history, &[int(tid), int(bid), int(aid), int(delta)])?;
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
            *counts.entry(crate::mix::Mix::TPCC.pick(&mut random)).or_insert(0u32) += 1;
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
        let terminal = Terminal { home: 3, scale: 4, skew: None };
        for _ in 0..1000 {
            let w = terminal.remote_warehouse(&mut random);
            assert!((1..=4).contains(&w) && w != 3);
        }
        assert_eq!(Terminal { home: 1, scale: 1, skew: None }.remote_warehouse(&mut random), 1);
    }
}
