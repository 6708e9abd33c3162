//! The consistency checks run after the transactions: TPC-C's consistency conditions 1-4 (clause 3.3.2) and, for
//! TPC-B, the balance invariant pgbench's transaction keeps. A failed check fails the run: the numbers of a database
//! that lost or invented work are not a result. The checks read one snapshot, so runs that share the tables may go on
//! committing while one of them checks.

use crate::error::OltpError;
use crate::profile::Profile;
use envbench_sql::{Connection, Namespace};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One checked condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub name: String,
    pub passed: bool,
    /// What was compared, or the first rows that broke it.
    pub detail: String,
}

/// Money summed in floating point: equal within half a cent per thousand rows.
fn same_money(a: f64, b: f64) -> bool {
    (a - b).abs() <= 0.005 + a.abs().max(b.abs()) * 1e-12
}

/// Rows keyed by (warehouse, district), read as numbers.
fn by_district(
    connection: &mut dyn Connection,
    sql: &str,
    columns: usize,
) -> Result<BTreeMap<(i64, i64), Vec<f64>>, OltpError> {
    let mut out = BTreeMap::new();
    for row in connection.query(sql, &[])? {
        let values = (2..2 + columns).map(|i| if row.is_null(i) { Ok(f64::NAN) } else { row.real(i) });
        out.insert((row.int(0)?, row.int(1)?), values.collect::<Result<Vec<f64>, _>>()?);
    }
    Ok(out)
}

fn check(name: &str, failures: Vec<String>, checked: usize, what: &str) -> Check {
    Check {
        name: name.to_string(),
        passed: failures.is_empty(),
        detail: if failures.is_empty() {
            format!("{checked} {what} checked")
        } else {
            let shown: Vec<&str> = failures.iter().take(3).map(String::as_str).collect();
            format!("{} of {checked} {what} differ: {}", failures.len(), shown.join("; "))
        },
    }
}

/// The checks for people: a heading, then a `PASS` or `FAIL` line for each.
pub fn render(checks: &[Check]) -> String {
    let mut out = envbench_core::text::heading("Consistency");
    out.push('\n');
    for check in checks {
        out.push_str(&format!("  {} {}: {}\n", if check.passed { "PASS" } else { "FAIL" }, check.name, check.detail));
    }
    out
}

/// Run the profile's checks on its tables in `namespace`, all of them on one snapshot of the database: other runs
/// that share the tables may be committing transactions meanwhile, and every committed state must pass.
pub fn run(connection: &mut dyn Connection, namespace: &Namespace, profile: Profile) -> Result<Vec<Check>, OltpError> {
    let begin = connection.dialect().ops().begin_snapshot;
    connection.batch(begin)?;
    let checks = match profile {
        Profile::Tpcc => tpcc(connection, namespace),
        Profile::Tpcb => tpcb(connection, namespace),
    };
    let ended = connection.commit();
    let checks = checks?;
    ended?;
    Ok(checks)
}

fn tpcc(connection: &mut dyn Connection, namespace: &Namespace) -> Result<Vec<Check>, OltpError> {
    let mut checks = Vec::new();
    let [warehouse, district, orders, new_order, order_line] =
        ["tpcc_warehouse", "tpcc_district", "tpcc_orders", "tpcc_new_order", "tpcc_order_line"]
            .map(|table| namespace.qualify(table));

    // 1: W_YTD = sum(D_YTD) for each warehouse.
    let rows = connection.query(
        &format!(
            "SELECT w_id, w_ytd, (SELECT SUM(d_ytd) FROM {district} WHERE d_w_id = w_id) FROM {warehouse} ORDER BY w_id"
        ),
        &[],
    )?;
    let mut failures = Vec::new();
    for row in &rows {
        let (w, w_ytd, d_ytd) = (row.int(0)?, row.real(1)?, row.real(2)?);
        if !same_money(w_ytd, d_ytd) {
            failures.push(format!("warehouse {w}: W_YTD {w_ytd:.2}, sum of D_YTD {d_ytd:.2}"));
        }
    }
    checks.push(check("1: W_YTD = sum(D_YTD)", failures, rows.len(), "warehouses"));

    let districts = by_district(connection, &format!("SELECT d_w_id, d_id, d_next_o_id FROM {district}"), 1)?;
    let orders = by_district(
        connection,
        &format!("SELECT o_w_id, o_d_id, MAX(o_id), SUM(o_ol_cnt) FROM {orders} GROUP BY o_w_id, o_d_id"),
        2,
    )?;
    let new_orders = by_district(
        connection,
        &format!(
            "SELECT no_w_id, no_d_id, MAX(no_o_id), MIN(no_o_id), COUNT(*) FROM {new_order} GROUP BY no_w_id, no_d_id"
        ),
        3,
    )?;
    let lines = by_district(
        connection,
        &format!("SELECT ol_w_id, ol_d_id, COUNT(*) FROM {order_line} GROUP BY ol_w_id, ol_d_id"),
        1,
    )?;

    // 2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID).
    let mut failures = Vec::new();
    for (&(w, d), next) in &districts {
        let last = next[0] - 1.0;
        let max_order = orders.get(&(w, d)).map_or(f64::NAN, |o| o[0]);
        let max_new = new_orders.get(&(w, d)).map(|n| n[0]);
        if last != max_order || max_new.is_some_and(|m| m != last) {
            failures.push(format!(
                "district {w}/{d}: D_NEXT_O_ID - 1 = {last}, max(O_ID) = {max_order}, max(NO_O_ID) = {}",
                max_new.map_or("none".into(), |m| m.to_string())
            ));
        }
    }
    checks.push(check("2: D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)", failures, districts.len(), "districts"));

    // 3: max(NO_O_ID) - min(NO_O_ID) + 1 = the rows of NEW-ORDER.
    let mut failures = Vec::new();
    for (&(w, d), n) in &new_orders {
        if n[0] - n[1] + 1.0 != n[2] {
            failures.push(format!("district {w}/{d}: max {} - min {} + 1 != {} rows", n[0], n[1], n[2]));
        }
    }
    checks.push(check("3: max(NO_O_ID) - min(NO_O_ID) + 1 = NEW-ORDER rows", failures, new_orders.len(), "districts"));

    // 4: sum(O_OL_CNT) = the rows of ORDER-LINE.
    let mut failures = Vec::new();
    for (&(w, d), o) in &orders {
        let count = lines.get(&(w, d)).map_or(0.0, |l| l[0]);
        if o[1] != count {
            failures.push(format!("district {w}/{d}: sum(O_OL_CNT) {}, ORDER-LINE rows {count}", o[1]));
        }
    }
    checks.push(check("4: sum(O_OL_CNT) = ORDER-LINE rows", failures, orders.len(), "districts"));
    Ok(checks)
}

fn tpcb(connection: &mut dyn Connection, namespace: &Namespace) -> Result<Vec<Check>, OltpError> {
    let [accounts, tellers, branches, history] =
        ["pgbench_accounts", "pgbench_tellers", "pgbench_branches", "pgbench_history"]
            .map(|table| namespace.qualify(table));
    let row = connection
        .query_optional(
            &format!(
                "SELECT (SELECT COALESCE(SUM(abalance), 0) FROM {accounts}), \
                        (SELECT COALESCE(SUM(tbalance), 0) FROM {tellers}), \
                        (SELECT COALESCE(SUM(bbalance), 0) FROM {branches}), \
                        (SELECT COALESCE(SUM(delta), 0) FROM {history})"
            ),
            &[],
        )?
        .ok_or_else(|| OltpError::Other("the balance sums returned no row".into()))?;
    let sums = [row.real(0)?, row.real(1)?, row.real(2)?, row.real(3)?];
    let passed = sums.iter().all(|s| *s == sums[0]);
    Ok(vec![Check {
        name: "sum(abalance) = sum(tbalance) = sum(bbalance) = sum(delta)".into(),
        passed,
        detail: format!("accounts {}, tellers {}, branches {}, history {}", sums[0], sums[1], sums[2], sums[3]),
    }])
}
