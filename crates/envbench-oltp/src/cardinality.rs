//! How many rows of each kind a warehouse (TPC-C clause 1.2) or a unit of scale (pgbench) holds: what the load
//! writes, and what the transactions and routines pick their keys from.

/// Items in the catalogue (TPC-C), stock rows per warehouse.
pub const ITEMS: i64 = 100_000;
/// Districts per warehouse, customers per district, orders per district.
pub const DISTRICTS: i64 = 10;
pub const CUSTOMERS: i64 = 3_000;
pub const ORDERS: i64 = 3_000;
/// The first order id still undelivered after the load (orders 2101..=3000 are in new_order).
pub const FIRST_NEW_ORDER: i64 = 2_101;
/// pgbench's rows per unit of scale.
pub const ACCOUNTS_PER_SCALE: i64 = 100_000;
pub const TELLERS_PER_SCALE: i64 = 10;
