//! How a dialect writes the SQL forms that servers spell differently: the rules of
//! [`Dialect::adapt`](crate::Dialect::adapt), one field each in a dialect's row of [`DialectOps`](crate::DialectOps).
//! Portable SQL is written in PostgreSQL's words (`LIMIT n`, ` FOR UPDATE`, `extract(year from x)`, `date '1998-12-01'`,
//! `x + interval '90' day`); a dialect whose server spells one otherwise names the form it takes here, and the adapter
//! rewrites the text, so a new server is a new row, not a branch in a workload.

/// How a query keeps only its first rows. Portable SQL ends the query in `LIMIT n`, `n` a number or `?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowLimit {
    /// `LIMIT n` (PostgreSQL, MariaDB/MySQL, SQLite).
    Limit,
    /// `OFFSET 0 ROWS FETCH NEXT n ROWS ONLY`, the SQL standard's form after an `ORDER BY` (SQL Server 2012 and
    /// later, Oracle 12c and later, Db2).
    FetchNext,
}

/// How a read locks the rows it is about to update. Portable SQL ends the statement in ` FOR UPDATE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowLock {
    /// ` FOR UPDATE` after the statement (PostgreSQL, MariaDB/MySQL).
    ForUpdate,
    /// A hint after the name of the statement's first table, such as SQL Server's ` WITH (UPDLOCK, ROWLOCK)`.
    TableHint(&'static str),
    /// None: the transaction locked the whole database when it began (SQLite's `BEGIN IMMEDIATE`).
    WholeDatabase,
}

/// How a field of a date or timestamp is read. Portable SQL writes `extract(FIELD from x)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateFields {
    /// `extract(FIELD from x)` (PostgreSQL, MariaDB/MySQL, DataFusion).
    Extract,
    /// `DATEPART(FIELD, x)` (SQL Server).
    DatePart,
    /// `CAST(strftime('%Y', x) AS INTEGER)` (SQLite), for year, month, day, hour, minute and second.
    Strftime,
}

/// How a date literal is written. Portable SQL writes `date 'YYYY-MM-DD'`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateLiterals {
    /// `date '1998-12-01'` (PostgreSQL, MariaDB/MySQL).
    Keyword,
    /// `CAST('1998-12-01' AS DATE)` (SQL Server).
    Cast,
    /// `'1998-12-01'`: dates are ISO text, which compares and sorts as dates do (SQLite).
    Text,
}

/// How a date moves by an interval. Portable SQL writes `x + interval '90' day` (or `-`), the count quoted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intervals {
    /// `x + interval '90' day` (PostgreSQL).
    QuotedCount,
    /// `x + interval 90 day`, where only a bare count parses (MariaDB/MySQL).
    BareCount,
    /// `DATEADD(day, 90, x)` (SQL Server).
    DateAdd,
    /// `date(x, '+90 day')`, or `datetime(...)` for hours, minutes and seconds (SQLite).
    DateModifier,
}
