//! The moments logs write, as microseconds since the Unix epoch. A log's zone name is read past and not applied: a
//! replay needs the gaps between statements, which one zone keeps (a capture across a daylight-saving change is the
//! exception docs/replay.md names).

/// Days from 1970-01-01 to a civil date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = if year >= 0 { year } else { year - 399 } / 400;
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

fn number(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Microseconds of a fraction of a second written after the point (`123` is 123,000 µs).
fn fraction_us(text: &str) -> Option<i64> {
    if text.is_empty() || text.len() > 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut digits = text.to_string();
    while digits.len() < 6 {
        digits.push('0');
    }
    digits[..6].parse().ok()
}

fn moment(year: i64, month: i64, day: i64, clock: &str) -> Option<i64> {
    let (clock, fraction) = match clock.split_once('.') {
        Some((clock, fraction)) => (clock, fraction_us(fraction)?),
        None => (clock, 0),
    };
    let mut parts = clock.split(':');
    let (hour, minute, second) = (number(parts.next()?)?, number(parts.next()?)?, number(parts.next()?)?);
    if parts.next().is_some()
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    Some(seconds * 1_000_000 + fraction)
}

/// `2026-12-02 15:30:00.123` (PostgreSQL's `%m` without its zone) or `2026-12-02T15:30:00.123456Z` (MySQL 8's
/// logs).
pub(crate) fn iso(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z').unwrap_or(text);
    let (date, clock) = text.split_once([' ', 'T'])?;
    let mut date = date.split('-');
    let (year, month, day) = (number(date.next()?)?, number(date.next()?)?, number(date.next()?)?);
    if date.next().is_some() {
        return None;
    }
    moment(year, month, day, clock)
}

/// `2026-12-02 15:30:00.123 UTC`: PostgreSQL's `%m` and its csvlog and jsonlog time, with the zone name read past.
pub(crate) fn postgres(text: &str) -> Option<i64> {
    let mut words = text.splitn(3, ' ');
    let (date, clock) = (words.next()?, words.next()?);
    iso(&format!("{date} {clock}"))
}

/// `241202 15:30:00` or `241202  9:05:01`: MariaDB's (and MySQL 5's) general and slow log time, to the second.
pub(crate) fn mariadb(text: &str) -> Option<i64> {
    let (date, clock) = text.trim().split_once(' ')?;
    let clock = clock.trim_start();
    if date.len() != 6 || clock.len() < 7 {
        return None;
    }
    let (year, month, day) = (number(&date[..2])?, number(&date[2..4])?, number(&date[4..])?);
    moment(2000 + year, month, day, clock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_logs_clock_reads_the_same_moment() {
        let epoch_us = 1_764_689_400_123_000; // 2025-12-02 15:30:00.123 UTC
        assert_eq!(postgres("2025-12-02 15:30:00.123 UTC"), Some(epoch_us));
        assert_eq!(postgres("2025-12-02 15:30:00.123 CET"), Some(epoch_us));
        assert_eq!(iso("2025-12-02T15:30:00.123000Z"), Some(epoch_us));
        assert_eq!(mariadb("251202 15:30:00"), Some(epoch_us - 123_000));
        assert_eq!(mariadb("251202  9:05:01"), Some(epoch_us - 123_000 - (6 * 3600 + 24 * 60 + 59) * 1_000_000));
        assert_eq!(iso("1970-01-01 00:00:00"), Some(0));
        assert_eq!(iso("2024-02-29 00:00:00").map(|us| us / 86_400_000_000), Some(19_782));
        for bad in ["", "2025-13-02 15:30:00", "2025-12-02 25:30:00", "yesterday", "2025-12-02 15:30", "251302 1:0:0"] {
            assert_eq!(iso(bad).or(mariadb(bad)), None, "{bad}");
        }
    }
}
