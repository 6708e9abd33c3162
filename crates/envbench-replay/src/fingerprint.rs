//! A statement's fingerprint: its text with every constant and parameter a placeholder (`$1`, `$2`... in order),
//! comments dropped, whitespace collapsed and words lower-cased outside quoted names, so the calls of one statement
//! with different values group as `pg_stat_statements` groups them. Quoted names (`"Order"`, `` `order` ``) keep
//! their case, and a statement's shape never changes: `IN (1, 2)` and `IN (1, 2, 3)` are two fingerprints.

/// The fingerprint of `sql` in PostgreSQL's or MySQL's lexical rules (they agree on what matters here: `'...'`
/// strings with `''`, `E'...'` and MySQL's backslash escapes, `"..."` and `` `...` `` names, `--`, `#` and `/* */`
/// comments, PostgreSQL's `$tag$...$tag$` strings).
pub fn fingerprint(sql: &str) -> String {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len());
    let mut placeholders = 0;
    let mut placeholder = |out: &mut String| {
        placeholders += 1;
        out.push('$');
        out.push_str(&placeholders.to_string());
    };
    let mut space = false;
    let mut i = 0;
    // Whether the last thing written can be followed by a sign that belongs to a number (`= -1`, `(-1`, `, -1`).
    let signed_number_may_follow = |out: &str| {
        let last = out.trim_end().chars().last();
        last.is_none_or(|c| "=<>+-*/(,%|".contains(c))
            || out.trim_end().rsplit(' ').next().is_some_and(|w| {
                ["select", "and", "or", "then", "else", "when", "by", "values", "return", "not"].contains(&w)
            })
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        if c == '-' && next == Some('-') || c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            space = true;
            continue;
        }
        if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i = (i + 2).min(chars.len());
            space = true;
            continue;
        }
        let put = |out: &mut String, space: &mut bool| {
            if *space && !out.is_empty() {
                out.push(' ');
            }
            *space = false;
        };
        // A string: '...' (with '' inside), E'...' or N'...' (and backslash escapes, as MySQL reads every string).
        let prefixed = (c == 'e' || c == 'E' || c == 'n' || c == 'N' || c == 'b' || c == 'B' || c == 'x' || c == 'X')
            && next == Some('\'');
        if c == '\'' || prefixed {
            i += if prefixed { 2 } else { 1 };
            while i < chars.len() {
                match chars[i] {
                    '\\' => i += 2,
                    '\'' if chars.get(i + 1) == Some(&'\'') => i += 2,
                    '\'' => {
                        i += 1;
                        break;
                    }
                    _ => i += 1,
                }
            }
            put(&mut out, &mut space);
            placeholder(&mut out);
            continue;
        }
        // A dollar-quoted string, $$...$$ or $tag$...$tag$.
        if c == '$' && !next.is_some_and(|n| n.is_ascii_digit()) {
            let tag_end = chars[i + 1..].iter().position(|&t| !(t.is_alphanumeric() || t == '_')).map(|p| i + 1 + p);
            if let Some(end) = tag_end.filter(|&e| chars[e] == '$') {
                let tag: String = chars[i..=end].iter().collect();
                let body_start = end + 1;
                let rest: String = chars[body_start..].iter().collect();
                if let Some(close) = rest.find(&tag) {
                    i = body_start + rest[..close].chars().count() + tag.chars().count();
                    put(&mut out, &mut space);
                    placeholder(&mut out);
                    continue;
                }
            }
        }
        // A parameter, $1: a placeholder like any constant.
        if c == '$' && next.is_some_and(|n| n.is_ascii_digit()) {
            i += 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            put(&mut out, &mut space);
            placeholder(&mut out);
            continue;
        }
        // A quoted name keeps its text.
        if c == '"' || c == '`' {
            put(&mut out, &mut space);
            out.push(c);
            i += 1;
            while i < chars.len() {
                out.push(chars[i]);
                if chars[i] == c {
                    if chars.get(i + 1) == Some(&c) {
                        out.push(c);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                i += 1;
            }
            continue;
        }
        // A number, with its sign where the sign is not an operator between two values.
        let negative =
            c == '-' && next.is_some_and(|n| n.is_ascii_digit() || n == '.') && signed_number_may_follow(&out);
        if c.is_ascii_digit() || negative || c == '.' && next.is_some_and(|n| n.is_ascii_digit()) {
            let after_word = out.chars().last().is_some_and(|p| p.is_alphanumeric() || p == '_') && !space;
            if !after_word {
                i += 1;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric()
                        || chars[i] == '.'
                        || (matches!(chars[i], '+' | '-') && matches!(chars[i - 1], 'e' | 'E')))
                {
                    i += 1;
                }
                put(&mut out, &mut space);
                placeholder(&mut out);
                continue;
            }
        }
        if c.is_alphanumeric() || c == '_' {
            put(&mut out, &mut space);
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$') {
                out.extend(chars[i].to_lowercase());
                i += 1;
            }
            continue;
        }
        // An operator or punctuation: no space before a comma or a closing bracket, none after an opening one.
        if c == ';' && chars[i + 1..].iter().all(|t| t.is_whitespace() || *t == ';') {
            break;
        }
        if !matches!(c, ',' | ')') && !out.ends_with('(') {
            put(&mut out, &mut space);
        }
        out.push(c);
        // A comma is followed by one space, whatever the text had.
        space = c == ',';
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn constants_and_parameters_become_placeholders() {
        let cases = [
            (
                "SELECT abalance FROM pgbench_accounts WHERE aid = 47165;",
                "select abalance from pgbench_accounts where aid = $1",
            ),
            (
                "UPDATE pgbench_accounts SET abalance = abalance + -2981 WHERE aid = 47165;",
                "update pgbench_accounts set abalance = abalance + $1 where aid = $2",
            ),
            ("select  a-1 , 'it''s' , E'a\\'b', $$x$y$$ from t  -- note\n", "select a-$1, $2, $3, $4 from t"),
            (
                "SELECT \"Order\".\"Id\" FROM \"Order\" WHERE x IN ($1,$2)",
                "select \"Order\".\"Id\" from \"Order\" where x in ($1, $2)",
            ),
            (
                "select `Weird``Name` from t1 where c2 = 1.5e-3 /* hint */ and c3 > .5",
                "select `Weird``Name` from t1 where c2 = $1 and c3 > $2",
            ),
            ("INSERT INTO t VALUES (-1, 'x', NULL, true)", "insert into t values ($1, $2, null, true)"),
            ("select $body$ it's; -- not a comment $body$, x2 from y", "select $1, x2 from y"),
        ];
        for (sql, expected) in cases {
            assert_eq!(fingerprint(sql), expected, "{sql}");
        }
        assert_eq!(fingerprint("select 1"), fingerprint("SELECT   2 ;"));
        assert_ne!(fingerprint("select 1 from t where a in (1)"), fingerprint("select 1 from t where a in (1, 2)"));
    }
}
