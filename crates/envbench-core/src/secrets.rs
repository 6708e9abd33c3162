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

/// True when the `"` at byte `i` closes a JSON string (`"...",` `"...}` `"...]` `"...":`, or at the end): a secret
/// inside a JSON text ends there, and the JSON stays whole. A `"` inside a value is escaped (`\"`) or followed by
/// more of the value.
fn closes_json_string(text: &str, i: usize) -> bool {
    let bytes = text.as_bytes();
    bytes[i] == b'"'
        && (i == 0 || bytes[i - 1] != b'\\')
        && bytes.get(i + 1).is_none_or(|next| matches!(next, b',' | b'}' | b']' | b':') || next.is_ascii_whitespace())
}

/// Where a URL's authority (`user:password@host:port`) that starts `after` ends: at the path, the query, the
/// fragment, the end of the word, or the end of the JSON string around it.
fn authority_len(after: &str) -> usize {
    after
        .char_indices()
        .find(|&(i, c)| c.is_whitespace() || matches!(c, '/' | '?' | '#') || closes_json_string(after, i))
        .map_or(after.len(), |(i, _)| i)
}

fn redact_url_credentials(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(scheme_end) = rest.find("://") {
        let authority_start = scheme_end + 3;
        out.push_str(&rest[..authority_start]);
        let after = &rest[authority_start..];
        let authority_len = authority_len(after);
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
        let closes_json = c == '"'
            && chars.get(i.wrapping_sub(1)) != Some(&'\\')
            && chars.get(i + 1).is_none_or(|n| matches!(n, ',' | '}' | ']' | ':') || n.is_whitespace());
        let ends = c.is_whitespace()
            || c == '&'
            || (in_url_query && (c == '#' || closes_json))
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
                // A JSON key's value is a secret only as a string: numbers, booleans and null stay (and stay JSON).
                let json_non_string = quoted_key && !matches!(chars.get(value_start), Some('"'));
                if end > value_start && !json_non_string {
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

/// The words of `text`, with byte positions: separated by white space, and by the commas of a compact JSON array
/// (`"mysql","-pX"`).
fn words(text: &str) -> Vec<Word> {
    let bytes = text.as_bytes();
    let json_comma = |i: usize| bytes[i] == b',' && i > 0 && bytes[i - 1] == b'"' && bytes.get(i + 1) == Some(&b'"');
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace() || json_comma(i), start) {
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

/// True for the quotes and punctuation that may wrap a word of a command line, a script or a JSON array.
fn wraps(c: char) -> bool {
    matches!(c, '\'' | '"' | '(' | ')' | '[' | ']' | '{' | '}' | ',' | ';' | '`' | '|' | '&')
}

/// A word without the quotes and punctuation around it.
fn bare(word: &str) -> &str {
    word.trim_matches(wraps)
}

/// The byte range of `words[k]` without its wrapping quotes and punctuation.
fn inner_span(text: &str, word: &Word) -> (usize, usize) {
    let raw = &text[word.start..word.end];
    let lead = raw.len() - raw.trim_start_matches(wraps).len();
    let start = word.start + lead;
    (start, start + bare(raw).len())
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
    // The program's name: a path's last part, or the end of a JSON text (`"command":"mysql`).
    let name = bare(word).rsplit(['/', '"', '\'', ':', '=', ',', '(', '[', '{']).next().unwrap_or_default();
    let name = name.to_ascii_lowercase();
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

/// The range, within a bare word, of an Oracle `user/password@db` password: between `/` and `@` (or the end).
fn oracle_password(inner: &str) -> Option<(usize, usize)> {
    let slash = inner.find('/')?;
    let user = &inner[..slash];
    let user = user.strip_prefix("userid=").or_else(|| user.strip_prefix("USERID=")).unwrap_or(user);
    let identifier = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '#' | '"');
    if user.is_empty()
        || !user.starts_with(|c: char| c.is_ascii_alphabetic() || c == '"')
        || !user.chars().all(identifier)
    {
        return None;
    }
    let password_end = inner[slash + 1..].find('@').map_or(inner.len(), |at| slash + 1 + at);
    (password_end > slash + 1).then_some((slash + 1, password_end))
}

fn redact_command_words(text: &str) -> String {
    let words = words(text);
    let word_at = |k: usize| words.get(k).map(|w| &text[w.start..w.end]).unwrap_or_default();
    let span = |k: usize| inner_span(text, &words[k]);
    // Byte ranges of text to replace with `***`.
    let mut hidden: Vec<(usize, usize)> = Vec::new();
    let mut current: Option<Client> = None;
    for i in 0..words.len() {
        let raw = word_at(i);
        let (inner_start, inner_end) = span(i);
        let inner = &text[inner_start..inner_end];
        let lower = inner.to_ascii_lowercase();
        let has_next = i + 1 < words.len();
        // A new JSON key (`"command":`) ends whatever command came before it.
        if raw.contains("\":") {
            current = None;
        }
        if let Some(started) = client(raw) {
            current = Some(started);
        }
        match current {
            Some(Client::MySql) if inner.starts_with("-p") && inner.len() > 2 && !inner.starts_with("--") => {
                hidden.push((inner_start + 2, inner_end));
            }
            Some(Client::SqlServer) if inner == "-P" && has_next => hidden.push(span(i + 1)),
            Some(Client::SqlServer) if inner.starts_with("-P") && inner.len() > 2 => {
                hidden.push((inner_start + 2, inner_end));
            }
            Some(Client::Essbase) if inner == "-l" && i + 2 < words.len() => hidden.push(span(i + 2)),
            Some(Client::Oracle) if client(raw) != Some(Client::Oracle) => {
                if let Some((start, end)) = oracle_password(inner) {
                    hidden.push((inner_start + start, inner_start + end));
                }
            }
            _ => {}
        }
        // Forms that need no client: `--password x`, `IDENTIFIED BY x`, MaxL's `login user pw on host`.
        match lower.as_str() {
            "--password" | "-password" | "--passwd" | "--pass" if has_next => hidden.push(span(i + 1)),
            "identified" if i + 2 < words.len() && bare(word_at(i + 1)).eq_ignore_ascii_case("by") => {
                hidden.push(span(i + 2))
            }
            "login" if i + 3 < words.len() && bare(word_at(i + 3)).eq_ignore_ascii_case("on") => {
                hidden.push(span(i + 2))
            }
            _ => {}
        }
        if ends_command(raw) {
            current = None;
        }
    }
    if hidden.is_empty() {
        return text.to_string();
    }
    hidden.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in hidden {
        if start < at || start >= end {
            continue;
        }
        out.push_str(&text[at..start]);
        // A secret inside a JSON string ends with it: the rest of the text stays JSON.
        let end = (start + 1..end).find(|&i| closes_json_string(text, i)).unwrap_or(end);
        // A quoted password keeps its opening quote (`-p'***'`); the closing one is outside the range.
        let secret = &text[start..end];
        let kept = secret.len() - secret.trim_start_matches(['\'', '"']).len();
        out.push_str(&secret[..kept]);
        out.push_str(HIDDEN);
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
            ("[\"mysql\", \"-uroot\", \"-phunter2\", \"db\"]", "[\"mysql\", \"-uroot\", \"-p***\", \"db\"]"),
            ("(sqlcmd -P hunter2)", "(sqlcmd -P ***)"),
        ];
        for (text, redacted) in cases {
            assert_eq!(redact_secrets(text), redacted, "{text}");
            assert!(!redact_secrets(text).contains("hunter2") && !redact_secrets(text).contains("ter2"), "{text}");
        }
    }

    /// `results show --json` redacts its whole text: it must stay JSON.
    #[test]
    fn redacted_json_is_still_json() {
        let document = serde_json::json!({
            "command": "mysql -uroot -phunter2 test; sqlplus scott/hunter2@orcl",
            "argv": ["sqlcmd", "-P", "hunter2", "--password", "hunter2"],
            "password": "hunter2",
            "pass": 2,
            "access_token": null,
            "url": "postgres://u:Co,mma'4@h/db?password=x;y",
        });
        for text in [document.to_string(), serde_json::to_string_pretty(&document).unwrap()] {
            assert!(text.contains("hunter2"));
            let redacted = redact_secrets(&text);
            let back: serde_json::Value = serde_json::from_str(&redacted).unwrap_or_else(|e| panic!("{e}: {redacted}"));
            assert!(!redacted.contains("hunter2") && !redacted.contains("mma'4"), "{redacted}");
            assert_eq!(back["pass"], 2);
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
            "{\"pass\": 2, \"password_rounds\": 3, \"db_password\": null, \"token\": 17}",
            "cp -P a b",
            "tar -C /data/x -xf a.tar",
            "user:name@host",
            "",
        ] {
            assert_eq!(redact_secrets(text), text);
        }
    }
}
