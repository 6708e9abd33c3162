//! Finding the programs nobody here wrote that envbench cross-checks itself against (pgbench, pg_test_fsync): on the
//! PATH, or in a PostgreSQL installation's `bin` directory, where Debian keeps them off the PATH.

use std::path::PathBuf;

/// `name` on the PATH, else in the newest `/usr/lib/postgresql/<version>/bin`.
pub fn find_postgres_program(name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
    {
        return Some(path);
    }
    let mut installed: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let path = entry.path().join("bin").join(name);
            path.is_file().then_some((version, path))
        })
        .collect();
    installed.sort();
    installed.pop().map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_programs_are_none() {
        assert_eq!(find_postgres_program("envbench-no-such-program"), None);
        assert!(find_postgres_program("sh").is_some_and(|p| p.is_file()));
    }
}
