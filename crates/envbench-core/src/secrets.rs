//! Redaction of secrets: every place envbench prints or stores a command line, a URL, a parameter, a command's output
//! or an error goes through [`redact_secrets`], so a password given in any of the forms database people use never
//! reaches the screen, the store or a report.
//!
//! What it recognises:
//! - a URL's password, found by parsing the authority: everything between `scheme://` and the last `@` before the
//!   path, query or fragment, whatever characters the password holds (`,` `;` `'` `@` are all legal there);
//! - `key=value` and `key = value` pairs whose key names a password (`password`, `PGPASSWORD`, `sslpassword`,
//!   `--password`, `Pwd`, `MYSQL_PWD`, `*secret`, `*token`): in URL queries, libpq and ODBC connection strings and
//!   environment assignments, quoted values (`'two words'`, `{a;b}`) included;
//! - `"password": "x"` (JSON) and `password: x` (YAML);
//! - the command-line forms of database clients: `mysql -pX` (and the rest of the MySQL/MariaDB family),
//!   `sqlplus user/pw@db` and `CONNECT user/pw` (and Oracle's other tools: `rman`, `expdp`, `sqlldr`, ...),
//!   `sqlcmd -P x` (and `bcp`, `osql`), Essbase's `essmsh -l user pw`, MaxL's `login user pw on host`, SQL's
//!   `IDENTIFIED BY pw`, and `--password x`.
//!
//! It errs on the side of hiding: a value is cut at the end of its word, so text after a password on the same word
//! may be hidden with it.

/// Text with every secret replaced by `***`.
pub fn redact_secrets(text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    redact_command_words(&redact_key_values(&redact_url_credentials(text)))
}

const HIDDEN: &str = "***";

/// Characters that end a URL's authority (`user:password@host:port`): the path, the query, the fragment, or the end
/// of the word.
fn ends_authority(c: char) -> bool {
    c.is_whitespace() || matches!(c, '/' | '?' | '#')
}

fn redact_url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(scheme_end) = rest.find("://") {
        let authority_start = scheme_end + 3;
        out.push_str(&rest[..authority_start]);
        let after = &rest[authority_start..];
        let authority_len = after.find(ends_authority).unwrap_or(after.len());
        let authority = &after[..authority_len];
        match authority.rfind('@').map(|at| (&authority[..at], &authority[at..])) {
            Some((credentials, host)) if credentials.contains(':') => {
                let user = credentials.split(':').next().unwrap_or_default();
                out.push_str(user);
                out.push(':');
                out.push_str(HIDDEN);
                out.push_str(host);
            }
            _ => out.push_str(authority),
        }
        rest = &after[authority_len..];
    }
    out.push_str(rest);
    out
}

/// True for the key of a pair that holds a secret: `password`, `PGPASSWORD`, `sslpassword`, `passwd`, `pwd`,
/// `MYSQL_PWD`, `client_secret`, `access_token`, in any case.
fn is_secret_key(key: &str) -> bool {
    let key = key.trim_start_matches('-').to_ascii_lowercase();
    ["password", "passwd", "pwd", "secret", "token"].iter().any(|secret| key.ends_with(secret))
        || matches!(key.as_str(), "pass" | "pw")
}

fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Where a secret value that starts at `chars[start]` ends: a quoted value at its closing quote (`'two words'`,
/// `"a\"b"`, ODBC's `{a;b}`), else at the end of the word. In a URL query only `&` and `#` also end it (a password
/// there may hold `;` or `'`); elsewhere `;`, `&` and quotes do (a connection string's next pair, the end of a
/// quoted argument).
fn value_end(chars: &[char], start: usize, in_url_query: bool) -> usize {
    let close = match chars.get(start) {
        Some('\'') => Some('\''),
        Some('"') => Some('"'),
        Some('{') => Some('}'),
        _ => None,
    };
    let mut i = start;
    if let Some(close) = close {
        i += 1;
        while i < chars.len() && chars[i] != close {
            if chars[i] == '\\' && close == '"' {
                i += 1;
            }
            i += 1;
        }
        return (i + 1).min(chars.len());
    }
    while i < chars.len() {
        let c = chars[i];
        let ends = c.is_whitespace()
            || c == '&'
            || (in_url_query && c == '#')
            || (!in_url_query && matches!(c, ';' | '\'' | '"' | '}' | ')' | ']' | ','));
        if ends {
            break;
        }
        i += 1;
    }
    i
}

fn redact_key_values(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '=' || c == ':' {
            // The key: the word before the separator (and a JSON key's closing quote, and spaces before `=`).
            let mut key_end = i;
            while key_end > 0 && chars[key_end - 1] == ' ' && c == '=' {
                key_end -= 1;
            }
            let quoted_key = key_end > 0 && chars[key_end - 1] == '"';
            if quoted_key {
                key_end -= 1;
            }
            let mut key_start = key_end;
            while key_start > 0 && is_key_char(chars[key_start - 1]) {
                key_start -= 1;
            }
            let key: String = chars[key_start..key_end].iter().collect();
            // `key: value` only as YAML or JSON write it (a space or a quote after the colon), never `user:pw@`.
            let colon_pair = c == ':' && matches!(chars.get(i + 1), Some(' ' | '"' | '\''));
            if !key.is_empty() && is_secret_key(&key) && (c == '=' || colon_pair) {
                let in_url_query = key_start > 0 && matches!(chars[key_start - 1], '?' | '&');
                let mut value_start = i + 1;
                while value_start < chars.len() && chars[value_start] == ' ' {
                    value_start += 1;
                }
                let end = value_end(&chars, value_start, in_url_query);
                if end > value_start {
                    out.extend(&chars[i..value_start]);
                    let quote = chars[value_start];
                    if matches!(quote, '"' | '\'') && end - value_start >= 2 && chars[end - 1] == quote {
                        out.push(quote);
                        out.push_str(HIDDEN);
                        out.push(quote);
                    } else {
                        out.push_str(HIDDEN);
                    }
                    i = end;
                    continue;
                }
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// A word of a command line: where it is in the text.
struct Word {
    start: usize,
    end: usize,
}

/// The whitespace-separated words of `text`, with byte positions.
fn words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                words.push(Word { start: s, end: i });
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push(Word { start: s, end: text.len() });
    }
    words
}

/// A word without the quotes and shell punctuation around it.
fn bare(word: &str) -> &str {
    word.trim_matches(|c: char| matches!(c, '\'' | '"' | '(' | ')' | ';' | '`' | '|' | '&'))
}

/// The client family a word starts, by its program name (a path's last part).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Client {
    MySql,
    Oracle,
    SqlServer,
    Essbase,
}

fn client(word: &str) -> Option<Client> {
    let name = bare(word).rsplit('/').next().unwrap_or_default().to_ascii_lowercase();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    match name {
        "mysql" | "mariadb" | "mysqldump" | "mariadb-dump" | "mysqladmin" | "mariadb-admin" | "mysqlimport"
        | "mariadb-import" | "mysqlshow" | "mariadb-show" | "mysqlcheck" | "mariadb-check" | "mysqlslap"
        | "mariadb-slap" | "mysqlpump" | "mysqlbinlog" | "mariadb-binlog" => Some(Client::MySql),
        "sqlplus" | "sql" | "rman" | "expdp" | "impdp" | "exp" | "imp" | "sqlldr" | "dgmgrl" | "connect" | "conn" => {
            Some(Client::Oracle)
        }
        "sqlcmd" | "bcp" | "osql" => Some(Client::SqlServer),
        "essmsh" | "startmaxl.sh" | "startmaxl.cmd" | "startmaxl" => Some(Client::Essbase),
        _ => None,
    }
}

/// True for a word that ends a command (`;`, `|`, `&&`), so a client's rules stop there.
fn ends_command(word: &str) -> bool {
    matches!(word, "|" | "||" | "&&" | ";" | "&") || word.ends_with(';')
}

/// The range of an Oracle `user/password@db` word to hide: the password between `/` and `@` (or the end).
fn oracle_password(word: &str) -> Option<(usize, usize)> {
    let inner_start = word.len() - word.trim_start_matches(['\'', '"']).len();
    let inner = bare(word);
    let inner_start = inner_start.min(word.len());
    let slash = inner.find('/')?;
    let user = &inner[..slash];
    if user.is_empty() || user.starts_with(['@', '.', '~', '-']) || user.contains('=') && !user.contains("userid=") {
        return None;
    }
    let password_end = inner[slash + 1..].find('@').map_or(inner.len(), |at| slash + 1 + at);
    (password_end > slash + 1).then_some((inner_start + slash + 1, inner_start + password_end))
}

fn redact_command_words(text: &str) -> String {
    let words = words(text);
    let word_at = |k: usize| words.get(k).map(|w| &text[w.start..w.end]).unwrap_or_default();
    let whole = |k: usize| (words[k].start, words[k].end);
    // Byte ranges of text to replace with `***`.
    let mut hidden: Vec<(usize, usize)> = Vec::new();
    let mut current: Option<Client> = None;
    let mut i = 0;
    while i < words.len() {
        let word = word_at(i);
        let lower = bare(word).to_ascii_lowercase();
        let has_next = i + 1 < words.len();
        if let Some(started) = client(word) {
            current = Some(started);
        }
        match current {
            Some(Client::MySql) if word.starts_with("-p") && word.len() > 2 && !word.starts_with("--") => {
                hidden.push((words[i].start + 2, words[i].end));
            }
            Some(Client::SqlServer) if word == "-P" && has_next => {
                hidden.push(whole(i + 1));
                i += 1;
            }
            Some(Client::SqlServer) if word.starts_with("-P") && word.len() > 2 => {
                hidden.push((words[i].start + 2, words[i].end));
            }
            Some(Client::Essbase) if word == "-l" && i + 2 < words.len() => {
                hidden.push(whole(i + 2));
                i += 2;
            }
            Some(Client::Oracle) if client(word) != Some(Client::Oracle) => {
                if let Some((start, end)) = oracle_password(word) {
                    hidden.push((words[i].start + start, words[i].start + end));
                }
            }
            _ => {}
        }
        // Forms that need no client: `--password x`, `IDENTIFIED BY x`, MaxL's `login user pw on host`.
        match lower.as_str() {
            "--password" | "-password" | "--passwd" | "--pass" if has_next => {
                hidden.push(whole(i + 1));
                i += 1;
            }
            "identified" if i + 2 < words.len() && bare(word_at(i + 1)).eq_ignore_ascii_case("by") => {
                hidden.push(whole(i + 2));
                i += 2;
            }
            "login" if i + 3 < words.len() && bare(word_at(i + 3)).eq_ignore_ascii_case("on") => {
                hidden.push(whole(i + 2));
                i += 3;
            }
            _ => {}
        }
        if ends_command(word_at(i)) {
            current = None;
        }
        i += 1;
    }
    if hidden.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in hidden {
        if start < at || start >= end {
            continue;
        }
        out.push_str(&text[at..start]);
        // A quoted word keeps its quotes, a statement its semicolon.
        let secret = &text[start..end];
        let kept_start = secret.len() - secret.trim_start_matches(['\'', '"']).len();
        let kept_end = secret.trim_end_matches(['\'', '"', ';']).len().max(kept_start);
        out.push_str(&secret[..kept_start]);
        out.push_str(HIDDEN);
        out.push_str(&secret[kept_end..]);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_connection_secret_is_redacted() {
        let cases = [
            ("postgres://bob:secret@db:5432/test", "postgres://bob:***@db:5432/test"),
            ("postgres://bob:p@ss@db/test", "postgres://bob:***@db/test"),
            ("postgres://127.0.0.1/test", "postgres://127.0.0.1/test"),
            ("postgres://bob@db/test", "postgres://bob@db/test"),
            ("postgres://bob@db/test?password=hunter2&sslmode=off", "postgres://bob@db/test?password=***&sslmode=off"),
            ("mysql://root@db/test?sslpassword=hunter2", "mysql://root@db/test?sslpassword=***"),
            ("host=db user=bob password=hunter2 dbname=test", "host=db user=bob password=*** dbname=test"),
            ("host=db password='two words' dbname=test", "host=db password='***' dbname=test"),
            ("PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=*** psql -h db"),
            ("mysql --password=hunter2 -u root", "mysql --password=*** -u root"),
            ("Server=db;Uid=sa;Pwd=hunter2;", "Server=db;Uid=sa;Pwd=***;"),
            ("Server=db;Pwd={a;b};Uid=sa", "Server=db;Pwd=***;Uid=sa"),
            (
                "tpch --target postgres://a:one@h1/x --db postgres://b:two@h2/y",
                "tpch --target postgres://a:***@h1/x --db postgres://b:***@h2/y",
            ),
            ("--label 'vm one' --tag a=b", "--label 'vm one' --tag a=b"),
        ];
        for (text, redacted) in cases {
            assert_eq!(redact_secrets(text), redacted, "{text}");
        }
    }

    /// The battery's finding D7: `,` `;` and `'` are legal in a URL's password.
    #[test]
    fn url_passwords_hide_whatever_they_hold() {
        for password in ["Co,mma4", "Semi;colon", "Quo'te", "a,b;c'd@e", "p%40ss", "sp\"ace"] {
            for text in [
                format!("postgres://postgres:{password}@127.0.0.1/DB"),
                format!("'postgres://postgres:{password}@127.0.0.1:5432/DB'"),
                format!("--target postgres://postgres:{password}@127.0.0.1 --users 2"),
                format!("mysql://root:{password}@db"),
                format!("postgres://u@h/db?password={password}&sslmode=off"),
                format!("postgres://u@h/db?sslmode=off&password={password}"),
            ] {
                let redacted = redact_secrets(&text);
                for piece in password.split([',', ';', '\'', '@', '"']).filter(|p| p.len() > 1) {
                    assert!(!redacted.contains(piece), "{text} -> {redacted}");
                }
                assert!(redacted.contains("***"), "{text} -> {redacted}");
            }
        }
        assert_eq!(redact_secrets("postgres://postgres:Co,mma4@127.0.0.1/DB"), "postgres://postgres:***@127.0.0.1/DB");
    }

    /// The battery's finding D11: the forms database tools take passwords in.
    #[test]
    fn client_command_lines_and_config_texts_hide_passwords() {
        let cases = [
            ("psql 'host=db password = hunter2 dbname=x'", "psql 'host=db password = *** dbname=x'"),
            ("mysql -uroot -phunter2 test < load.sql", "mysql -uroot -p*** test < load.sql"),
            ("/usr/bin/mariadb -p'hunter2' -e 'select 1'", "/usr/bin/mariadb -p'***' -e 'select 1'"),
            ("mysqldump -u root -phunter2 db | gzip", "mysqldump -u root -p*** db | gzip"),
            ("sqlplus scott/hunter2@orcl @run.sql", "sqlplus scott/***@orcl @run.sql"),
            ("sqlplus -s 'scott/hunter2@//db:1521/orcl'", "sqlplus -s 'scott/***@//db:1521/orcl'"),
            ("sqlplus -s scott/hunter2", "sqlplus -s scott/***"),
            ("echo 'connect scott/hunter2@orcl' | sqlplus /nolog", "echo 'connect scott/***@orcl' | sqlplus /nolog"),
            ("expdp system/hunter2 directory=dp dumpfile=x.dmp", "expdp system/*** directory=dp dumpfile=x.dmp"),
            ("sqlcmd -S db -U sa -P hunter2 -i load.sql", "sqlcmd -S db -U sa -P *** -i load.sql"),
            ("sqlcmd -S db -U sa -Phunter2", "sqlcmd -S db -U sa -P***"),
            ("essmsh -l admin hunter2 -s essbase01 calc.msh", "essmsh -l admin *** -s essbase01 calc.msh"),
            ("login admin hunter2 on essbase01;", "login admin *** on essbase01;"),
            ("login 'admin' 'hunter2' on 'essbase01';", "login 'admin' '***' on 'essbase01';"),
            ("ALTER USER app IDENTIFIED BY hunter2;", "ALTER USER app IDENTIFIED BY ***;"),
            ("{\"user\": \"app\", \"password\": \"hunter2\"}", "{\"user\": \"app\", \"password\": \"***\"}"),
            ("{\"password\":\"hun\\\"ter2\"}", "{\"password\":\"***\"}"),
            ("password: hunter2", "password: ***"),
            ("  db_password: 'hunter2'", "  db_password: '***'"),
            ("mongosh --password hunter2 --host db", "mongosh --password *** --host db"),
            ("client_secret=hunter2", "client_secret=***"),
        ];
        for (text, redacted) in cases {
            assert_eq!(redact_secrets(text), redacted, "{text}");
            assert!(!redact_secrets(text).contains("hunter2") && !redact_secrets(text).contains("ter2"), "{text}");
        }
    }

    /// What is no secret stays as it was.
    #[test]
    fn ordinary_text_is_left_alone() {
        for text in [
            "mkdir -p /data/x && psql -p 5432 -h db",
            "grep -P '^a' file | ssh -p22 host",
            "Login failed for user 'sa'.",
            "FATAL: password authentication failed for user \"bob\"",
            "sqlplus /nolog @script.sql",
            "cp -P a b",
            "tar -C /data/x -xf a.tar",
            "user:name@host",
            "",
        ] {
            assert_eq!(redact_secrets(text), text);
        }
    }
}
