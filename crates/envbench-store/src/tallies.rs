//! What a store's runs add up to, summed by the store itself (GROUP BY), so a page of environments reads a row a
//! fingerprint, not every run.

use crate::error::StoreError;
use crate::model::FingerprintTally;
use crate::sql::Sql;
use std::collections::BTreeMap;

/// Each fingerprint's runs summed by the store: counts and first and last starts by a GROUP BY, each label and
/// workload once with its latest start (the latest first), read in one pass each.
pub(crate) fn tallies_of(sql: &mut Sql<'_>) -> Result<Vec<FingerprintTally>, StoreError> {
    let mut tallies: Vec<FingerprintTally> = Vec::new();
    for row in sql.query(
        "SELECT f.hash, f.hostname, count(*), min(r.started_at), max(r.started_at) FROM runs r \
         JOIN fingerprints f ON f.id = r.fingerprint_id GROUP BY f.hash, f.hostname \
         ORDER BY max(r.started_at) DESC, max(r.id) DESC",
        &[],
    )? {
        tallies.push(FingerprintTally {
            hash: row.text(0)?,
            host: row.optional_text(1)?,
            runs: row.int(2)? as usize,
            labels: Vec::new(),
            workloads: Vec::new(),
            first_run_at: row.text(3)?,
            last_run_at: row.text(4)?,
        });
    }
    let at: BTreeMap<String, usize> = tallies.iter().enumerate().map(|(i, t)| (t.hash.clone(), i)).collect();
    for (column, label) in [("r.label", true), ("r.workload", false)] {
        let query = format!(
            "SELECT f.hash, {column} FROM runs r JOIN fingerprints f ON f.id = r.fingerprint_id \
             WHERE {column} IS NOT NULL GROUP BY f.hash, {column} ORDER BY max(r.started_at) DESC, max(r.id) DESC"
        );
        for row in sql.query(&query, &[])? {
            let Some(&i) = at.get(&row.text(0)?) else { continue };
            let list = if label { &mut tallies[i].labels } else { &mut tallies[i].workloads };
            list.push(row.text(1)?);
        }
    }
    Ok(tallies)
}
