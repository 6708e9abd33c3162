//! `envbench oltp --drop` (and htap's): everything envbench made for a profile in the target, and nothing else.

use crate::companion::Companion;
use crate::error::OltpError;
use crate::lock::TablesLock;
use crate::options::OltpArgs;
use crate::plan::{SQLITE_FILE, reach, target_url};
use crate::schema;
use envbench_core::workload::WorkloadError;

/// `envbench oltp --drop`: everything envbench made for the profile in the target, under the tables' lock held
/// alone, and nothing else. A SQLite file left with nothing in it is removed, as envbench made it.
pub fn drop_tables(args: &OltpArgs, companion: Option<&dyn Companion>) -> Result<String, WorkloadError> {
    let profile = args.profile;
    let url = target_url(args)?;
    let (connection, namespace) = reach(args, &url)?;
    let place = crate::error::place(&url, &namespace);
    let Some(mut connection) = connection else {
        return Ok(format!("{place}: no database file, so nothing of envbench's to drop"));
    };
    let workload = companion.map_or("oltp", |c| c.workload());
    let _lock = TablesLock::take(&url, &namespace, profile, &args.dir, true, workload)?;
    let mut dropped = match companion {
        Some(companion) => companion.drop_own(connection.as_mut(), &namespace)?,
        None => schema::Dropped::default(),
    };
    let tables = schema::drop_profile(connection.as_mut(), &namespace, profile)?;
    dropped.dropped.extend(tables.dropped);
    dropped.left.extend(tables.left);
    let mut answer = match dropped.dropped.as_slice() {
        [] => format!("{place}: nothing of envbench's {} tables or routines found; nothing dropped", profile.name()),
        names => format!("{place}: dropped {}", names.join(", ")),
    };
    if !dropped.left.is_empty() {
        answer.push_str(&format!("\nleft alone, as envbench did not make them: {}", dropped.left.join(", ")));
    }
    if url.dialect().ops().embedded {
        let left = connection.query("SELECT COUNT(*) FROM sqlite_master", &[]).map_err(OltpError::from)?;
        let empty = left.first().map(|r| r.int(0)).transpose().map_err(OltpError::from)? == Some(0);
        drop(connection);
        if empty {
            let file = args.dir.join(SQLITE_FILE);
            for path in [file.clone(), file.with_extension("sqlite-wal"), file.with_extension("sqlite-shm")] {
                match std::fs::remove_file(&path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(WorkloadError::failure(format!("{}: {e}", path.display()))),
                }
            }
            answer.push_str(&format!("\nremoved {}, which held nothing else", file.display()));
        }
    }
    Ok(answer)
}
