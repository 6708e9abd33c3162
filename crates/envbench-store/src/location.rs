use std::path::PathBuf;

/// Where results are kept: a SQLite file, or a PostgreSQL connection URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreLocation {
    Sqlite(PathBuf),
    Postgres(String),
}

impl StoreLocation {
    /// Interpret a `--store` value: `postgres://` and `postgresql://` URLs name a server, anything else a file.
    pub fn parse(text: &str) -> StoreLocation {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            StoreLocation::Postgres(text.to_string())
        } else {
            StoreLocation::Sqlite(PathBuf::from(text))
        }
    }

    /// The location for people (URLs lose their password).
    pub fn display(&self) -> String {
        match self {
            StoreLocation::Sqlite(path) => path.display().to_string(),
            StoreLocation::Postgres(url) => envbench_core::model::redact_url_password(url),
        }
    }
}

/// `$XDG_DATA_HOME/envbench/results.db`, falling back to `~/.local/share/envbench/results.db`.
pub fn default_store_path() -> PathBuf {
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data_home.join("envbench").join("results.db")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        assert_eq!(StoreLocation::parse("/tmp/x.db"), StoreLocation::Sqlite("/tmp/x.db".into()));
        assert!(matches!(StoreLocation::parse("postgres://u@h/db"), StoreLocation::Postgres(_)));
        assert_eq!(StoreLocation::parse("postgres://bob:secret@h/db").display(), "postgres://bob:***@h/db");
        assert_eq!(StoreLocation::parse("postgres://h/db").display(), "postgres://h/db");
    }
}
