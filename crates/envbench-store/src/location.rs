use crate::error::StoreError;
use crate::postgres_backend::PostgresStore;
use crate::roles::ResultStore;
use crate::sqlite_backend::SqliteStore;
use envbench_sql::{DatabaseUrl, Dialect};
use std::path::PathBuf;

/// Where results are kept: a SQLite file, or a PostgreSQL server by its URL, parsed once, here, and kept parsed on
/// its way to the socket (the run locks and liveness checks included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreLocation {
    Sqlite(PathBuf),
    Postgres(DatabaseUrl),
}

impl StoreLocation {
    /// Interpret a `--store` (or `push --to`) value: `postgres://` and `postgresql://` URLs name a server, a path names
    /// a file, and anything else of the form `scheme://...` is refused, so a mistyped URL never becomes a file.
    pub fn parse(text: &str) -> Result<StoreLocation, StoreError> {
        if text.trim().is_empty() {
            // SQLite would open an empty name as a temporary database that vanishes with the process.
            return Err(StoreError::NotAFile { location: "''".into(), what: "an empty name" });
        }
        if let Some((scheme, _)) = text.split_once("://")
            && Dialect::Postgres.server().schemes().contains(&scheme)
        {
            let url = DatabaseUrl::parse(text).map_err(|e| StoreError::Refused {
                location: envbench_core::model::redact_secrets(text),
                reason: e.message,
            })?;
            return Ok(StoreLocation::Postgres(url));
        }
        if let Some((scheme, _)) = text.split_once("://")
            && !scheme.is_empty()
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            return Err(StoreError::UnsupportedScheme {
                given: envbench_core::model::redact_secrets(text),
                scheme: scheme.to_string(),
            });
        }
        // `postgres:/host/db` or `postgres:host/db`: a URL mistyped, which must not become a file of that name.
        if let Some((scheme, _)) = text.split_once(':')
            && DATABASE_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str())
        {
            return Err(StoreError::MalformedUrl {
                given: envbench_core::model::redact_secrets(text),
                scheme: scheme.to_string(),
            });
        }
        Ok(StoreLocation::Sqlite(PathBuf::from(text)))
    }

    /// The location for people (URLs lose their password).
    pub fn display(&self) -> String {
        match self {
            StoreLocation::Sqlite(path) => envbench_core::text::printable(&path.display().to_string()),
            StoreLocation::Postgres(url) => url.shown(),
        }
    }
}

/// Schemes of database URLs: a path starting with one and a colon is a mistyped URL, not a file name.
const DATABASE_SCHEMES: [&str; 6] = ["postgres", "postgresql", "mysql", "mariadb", "sqlite", "file"];

/// `$XDG_DATA_HOME/envbench/results.db`, falling back to `~/.local/share/envbench/results.db`.
pub fn default_store_path() -> PathBuf {
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data_home.join("envbench").join("results.db")
}

/// Open the store at a location, creating it when `create` is true and it does not exist yet.
pub fn open_store(location: &StoreLocation, create: bool) -> Result<Box<dyn ResultStore>, StoreError> {
    match location {
        StoreLocation::Sqlite(path) => Ok(Box::new(SqliteStore::open(path, create)?)),
        StoreLocation::Postgres(url) => Ok(Box::new(PostgresStore::open(url, create)?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--store postgres://...` is parsed once, by [`StoreLocation::parse`] (clap's value parser for `--store`):
    /// no other code of this crate parses a database URL or a driver's configuration, since the store, its run
    /// locks and its liveness checks all take the parsed [`DatabaseUrl`], which keeps what the driver parsed
    /// (issue #68).
    #[test]
    fn a_store_url_is_parsed_once_on_its_way_to_the_server() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut parses = Vec::new();
        for entry in std::fs::read_dir(&src).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            for form in ["DatabaseUrl::parse(", "postgres::Config", "::from_url("] {
                parses.extend(code.matches(form).map(|_| format!("{}: {form}", path.file_name().unwrap().display())));
            }
        }
        assert_eq!(parses, ["location.rs: DatabaseUrl::parse("], "parse the URL once, in StoreLocation::parse");
        let StoreLocation::Postgres(url) = StoreLocation::parse("postgres://bob:secret@127.0.0.1/db").unwrap() else {
            panic!("a PostgreSQL store")
        };
        assert_eq!((url.shown(), url.is_local()), ("postgres://bob:***@127.0.0.1/db".to_string(), true));
    }

    #[test]
    fn urls_and_paths() {
        assert_eq!(StoreLocation::parse("/tmp/x.db").unwrap(), StoreLocation::Sqlite("/tmp/x.db".into()));
        assert!(matches!(StoreLocation::parse("postgres://u@h/db").unwrap(), StoreLocation::Postgres(_)));
        assert!(matches!(StoreLocation::parse("postgresql://u@h/db").unwrap(), StoreLocation::Postgres(_)));
        assert_eq!(StoreLocation::parse("postgres://bob:secret@h/db").unwrap().display(), "postgres://bob:***@h/db");
        assert_eq!(StoreLocation::parse("postgres://h/db").unwrap().display(), "postgres://h/db");
        assert_eq!(StoreLocation::parse("results:2026.db").unwrap(), StoreLocation::Sqlite("results:2026.db".into()));
    }

    #[test]
    fn an_empty_name_is_no_store() {
        // SQLite would open it as a temporary database: `push --to ''` once "pushed" runs into nothing.
        assert!(matches!(StoreLocation::parse(""), Err(StoreError::NotAFile { .. })));
        assert!(matches!(StoreLocation::parse("  "), Err(StoreError::NotAFile { .. })));
    }

    #[test]
    fn urls_missing_their_slashes_are_refused_not_made_into_files() {
        for text in ["postgres:/host/db", "postgresql:host/db", "sqlite:results.db", "MySQL:/x"] {
            let error = StoreLocation::parse(text).unwrap_err();
            assert!(matches!(error, StoreError::MalformedUrl { .. }), "{text}");
            assert!(error.to_string().contains("://user@host"), "{error}");
        }
    }

    #[test]
    fn unknown_schemes_are_refused_not_made_into_files() {
        for text in ["mysql://x@y/z", "https://example.com/store", "sqlite:///tmp/x.db", "mysql://root:pw@db/test"] {
            let error = StoreLocation::parse(text).unwrap_err();
            assert!(matches!(error, StoreError::UnsupportedScheme { .. }), "{text}");
            let message = error.to_string();
            assert!(message.contains("postgres://") && message.contains("file path"), "{message}");
            assert!(!message.contains(":pw@"), "{message}");
        }
    }
}
