//! A database as the user named it, the URL forms messages show, and where a server's password comes from.

use crate::connection::Connection;
use crate::dialect::{Dialect, DialectOps};
use crate::error::{DbError, ErrorKind};
use crate::server;
use envbench_core::model::redact_secrets;
use std::path::PathBuf;

/// A database as the user named it: `sqlite:PATH` (or a SQLite file path given by a workload), a `postgres://` or
/// `postgresql://` URL, or a `mysql://` (also `mariadb://`) URL.
#[derive(Clone)]
pub struct DatabaseUrl {
    dialect: Dialect,
    /// The URL as kept (passwords included).
    target: String,
    /// What its server's driver parsed from it, once ([`server::UrlConfig`]).
    config: server::UrlConfig,
}

/// Two URLs are the same when they say the same (the configuration is what the text says).
impl PartialEq for DatabaseUrl {
    fn eq(&self, other: &DatabaseUrl) -> bool {
        self.dialect == other.dialect && self.target == other.target
    }
}

impl Eq for DatabaseUrl {}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatabaseUrl({})", self.shown())
    }
}

impl DatabaseUrl {
    /// Parse a server URL: the server its scheme names checks it, as its driver reads it. Anything else is refused
    /// with what to write.
    pub fn parse(text: &str) -> Result<DatabaseUrl, DbError> {
        let refused = |reason: String| {
            DbError::new(
                ErrorKind::Refused,
                format!(
                    "'{}' is not a database URL envbench can use ({reason}); write {}",
                    redact_secrets(text),
                    url_forms()
                ),
            )
        };
        let scheme = text.split_once("://").map(|(scheme, _)| scheme);
        let named = Dialect::ALL.into_iter().find(|d| scheme.is_some_and(|s| d.server().schemes().contains(&s)));
        let Some(dialect) = named else {
            let schemes: Vec<String> =
                Dialect::ALL.iter().flat_map(|d| d.server().schemes()).map(|scheme| format!("{scheme}://")).collect();
            return Err(refused(format!("only {} are supported", words_list(&schemes, "and"))));
        };
        let (target, config) = dialect.server().check_url(text).map_err(refused)?;
        Ok(DatabaseUrl { dialect, target, config })
    }

    /// An embedded SQLite database in a file.
    pub fn sqlite(path: impl Into<PathBuf>) -> DatabaseUrl {
        let path: PathBuf = path.into();
        DatabaseUrl { dialect: Dialect::Sqlite, target: path.display().to_string(), config: std::sync::Arc::new(path) }
    }

    /// The URL as kept, its password included: for a program of ours that connects on its own (a fleet's agent),
    /// never for people ([`DatabaseUrl::shown`]).
    pub fn with_secrets(&self) -> &str {
        &self.target
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The database for people: the URL without its password, or the SQLite file.
    pub fn shown(&self) -> String {
        redact_secrets(&self.target)
    }

    /// The URL without its password, and the password: for handing a server URL to another program (pgbench) with
    /// the password in its environment (`PGPASSWORD`) rather than on its command line, where `ps` shows it. Every
    /// form is taken out: the authority's (`user:pw@host`) and the query's (`?password=pw`, which libpq reads too and
    /// which wins over the authority's, as there).
    pub fn split_password(&self) -> (String, Option<String>) {
        let Some((scheme, rest)) = self.target.split_once("://") else { return (self.target.clone(), None) };
        let (rest, query) = rest.split_once('?').map_or((rest, None), |(r, q)| (r, Some(q)));
        let (authority, path) = rest.split_once('/').map_or((rest, None), |(a, p)| (a, Some(p)));
        let (mut password, authority) = match authority.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, password)) => (Some(percent_decoded(password)), format!("{user}@{host}")),
                None => (None, authority.to_string()),
            },
            None => (None, authority.to_string()),
        };
        let mut kept = Vec::new();
        for parameter in query.into_iter().flat_map(|q| q.split('&')) {
            match parameter.split_once('=') {
                Some((key, value)) if percent_decoded(key) == "password" => password = Some(percent_decoded(value)),
                _ if parameter.is_empty() => {}
                _ => kept.push(parameter),
            }
        }
        let path = path.map(|p| format!("/{p}")).unwrap_or_default();
        let query = if kept.is_empty() { String::new() } else { format!("?{}", kept.join("&")) };
        (format!("{scheme}://{authority}{path}{query}"), password)
    }

    /// True when the server runs on this machine (loopback or a socket), so its data directory's storage is this
    /// machine's.
    pub fn is_local(&self) -> bool {
        self.dialect.server().is_local(&self.config)
    }

    /// Open a connection. `application` names it in the server's session list.
    pub fn connect(&self, application: &str) -> Result<Box<dyn Connection>, DbError> {
        self.dialect.server().connect(&self.config, &self.shown(), application)
    }
}

/// The URL forms envbench takes, as messages show them: `postgres://user@host:5432/database or
/// mysql://user@host:3306/database`, one a server, from the rows.
pub fn url_forms() -> String {
    url_forms_where(|_| true)
}

/// The URL forms of the servers whose row has what `has` asks (`|ops| ops.partitions`), as [`url_forms`] shows
/// them.
pub fn url_forms_where(has: impl Fn(&DialectOps) -> bool) -> String {
    let forms: Vec<String> = Dialect::ALL
        .iter()
        .map(|d| d.ops())
        .filter(|ops| has(ops))
        .filter_map(|ops| ops.url_example)
        .map(String::from)
        .collect();
    words_list(&forms, "or")
}

/// `a`, `a or b`, `a, b or c` (or `and`).
fn words_list(items: &[String], conjunction: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} {conjunction} {last}", rest.join(", ")),
    }
}

/// A URL component with its `%XX` escapes decoded.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The environment variables a server's password comes from when its URL holds none, as psql, pgbench (libpq) and
/// the mysql client read them: a password kept out of the URL stays off command lines and out of stored arguments.
pub const PASSWORD_VARIABLES: [&str; 2] = ["PGPASSWORD", "MYSQL_PWD"];

/// The password of `variable` in the environment, when it is set and not empty.
pub fn password_from(variable: &str) -> Option<String> {
    std::env::var(variable).ok().filter(|p| !p.is_empty())
}

/// A PostgreSQL configuration given the password in `PGPASSWORD` when its URL holds none (libpq's rule).
pub fn postgres_password_from_environment(config: &mut postgres::Config) {
    if config.get_password().is_none()
        && let Some(password) = password_from("PGPASSWORD")
    {
        config.password(password);
    }
}

/// The data directory of the server behind `connection`, when the server runs on this machine, says where its data
/// is (PostgreSQL shows it to superusers and `pg_read_all_settings` only) and this machine can see it: the storage
/// the fingerprint should describe and the sampler watch. `None` for SQLite, whose file the caller knows.
pub fn local_data_directory(connection: &mut dyn Connection, url: &DatabaseUrl) -> Option<PathBuf> {
    if !url.is_local() {
        return None;
    }
    let sql = url.dialect().server().data_directory()?;
    let row = connection.query_optional(sql, &[]).ok()??;
    let path = PathBuf::from(row.text(0).ok()?);
    (!row.is_null(0) && path.is_dir()).then_some(path)
}
