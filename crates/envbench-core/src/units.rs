//! Units: byte sizes and durations as users type them, and how we print them.
//!
//! Sizes follow the specification: `k`, `m`, `g`, `t` (with or without `i`/`B`) are powers of two, because block sizes
//! and file sizes are; MB/s figures are printed in 10^6 bytes and are formatted elsewhere.

use std::fmt;
use std::time::Duration;

/// A size in bytes. Displayed with binary units (KiB, MiB, GiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// The number of bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

/// Why a size or duration could not be parsed; the message says what form is expected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("'{0}' is not a size: use a whole number with an optional unit, e.g. 4096, 8k, 256MiB, 1G")]
    BadSize(String),
    #[error("'{0}' is too large")]
    SizeOverflow(String),
    #[error("'{0}' is not a duration: use a number with a unit, e.g. 500us, 8ms, 5s, 2m")]
    BadDuration(String),
}

/// Parse a size such as `4096`, `8k`, `8K`, `8KiB`, `8kb`, `256MiB`, `1g`, `1.5G` (binary multiples).
pub fn parse_byte_size(text: &str) -> Result<ByteSize, UnitError> {
    let trimmed = text.trim();
    let bad = || UnitError::BadSize(text.to_string());
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    if number.is_empty() {
        return Err(bad());
    }
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    if number.contains('.') {
        let value: f64 = number.parse().map_err(|_| bad())?;
        let bytes = value * multiplier as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(UnitError::SizeOverflow(text.to_string()));
        }
        if bytes.fract() != 0.0 {
            return Err(bad());
        }
        return Ok(ByteSize(bytes as u64));
    }
    let value: u64 = number.parse().map_err(|_| bad())?;
    value.checked_mul(multiplier).map(ByteSize).ok_or_else(|| UnitError::SizeOverflow(text.to_string()))
}

impl std::str::FromStr for ByteSize {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_byte_size(s)
    }
}

impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(&str, u64); 4] = [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
        for (name, size) in UNITS {
            if self.0 >= size {
                if self.0.is_multiple_of(size) {
                    return write!(f, "{} {}", self.0 / size, name);
                }
                return write!(f, "{:.1} {}", self.0 as f64 / size as f64, name);
            }
        }
        write!(f, "{} B", self.0)
    }
}

/// Parse a duration such as `500us`, `8ms`, `5s`, `1.5s`, `2m`, `1h`. A bare number is rejected: the unit is
/// never guessed.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    let trimmed = text.trim();
    let bad = || UnitError::BadDuration(text.to_string());
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
    let (number, unit) = trimmed.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit.trim().to_ascii_lowercase().as_str() {
        "ns" => value / 1e9,
        "us" | "µs" => value / 1e6,
        "ms" => value / 1e3,
        "s" | "sec" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(bad()),
    };
    if !seconds.is_finite() || !(0.0..=1e9).contains(&seconds) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A duration option's value, parsed with the command line: clap's value parser takes any `FromStr`, so a wrong
/// form is refused there, naming the option and the form to write, by every command and every suite alike. It keeps
/// the text as written, for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct DurationArg {
    duration: Duration,
    written: String,
}

impl DurationArg {
    pub fn get(&self) -> Duration {
        self.duration
    }

    /// The duration, held within `min..=max`, so nonsense such as `--duration 1ns` or `--interval 100000h` is refused
    /// before a run starts. The error names `option`, the bounds and what to give.
    pub fn within(&self, option: &str, min: Duration, max: Duration) -> Result<Duration, String> {
        if self.duration < min || self.duration > max {
            return Err(format!(
                "{option} {}: give from {} to {}",
                self.written,
                format_duration_words(min),
                format_duration_words(max)
            ));
        }
        Ok(self.duration)
    }
}

impl std::str::FromStr for DurationArg {
    type Err = UnitError;
    fn from_str(text: &str) -> Result<DurationArg, UnitError> {
        Ok(DurationArg { duration: parse_duration(text)?, written: text.trim().to_string() })
    }
}

impl fmt::Display for DurationArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.written)
    }
}

/// A bound as people write it: `1s`, `10m`, `24h`, `500ms`.
fn format_duration_words(duration: Duration) -> String {
    let ms = duration.as_millis();
    match ms {
        ms if ms % 3_600_000 == 0 && ms > 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 && ms > 0 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

/// A percentage as people write it, `5%` or `5` (or `2.5%`), from 0 to 1000: an allowed change, such as
/// `compare --fail-if-worse 5%`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percent(f64);

impl Percent {
    /// The share as a fraction: 0.05 for 5%.
    pub fn fraction(self) -> f64 {
        self.0 / 100.0
    }
}

impl std::str::FromStr for Percent {
    type Err = String;
    fn from_str(text: &str) -> Result<Percent, String> {
        let number = text.trim().trim_end_matches('%').trim();
        match number.parse::<f64>() {
            Ok(value) if value.is_finite() && (0.0..=1000.0).contains(&value) => Ok(Percent(value)),
            _ => Err(format!("'{text}' is not a percentage from 0 to 1000: write e.g. 5% or 2.5")),
        }
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0)
    }
}

/// Refuse a list of settings (`--users 1,2,4`, `--threads`, `--jobs`) with more than `max` entries or an entry given
/// twice: a sweep measures each setting once.
pub fn check_settings<T: PartialEq + std::fmt::Display>(option: &str, values: &[T], max: usize) -> Result<(), String> {
    if values.len() > max {
        return Err(format!("{option}: {} settings are more than {max}; give at most {max}", values.len()));
    }
    if let Some((_, value)) = values.iter().enumerate().find(|(i, v)| values[..*i].contains(v)) {
        return Err(format!("{option}: {value} is given twice; give each setting once"));
    }
    Ok(())
}

/// Format a duration for people: `850 µs`, `8.20 ms`, `5.00 s`, `4m 10s`.
pub fn format_duration(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs < 1e-3 {
        format!("{:.0} µs", secs * 1e6)
    } else if secs < 1.0 {
        format!("{:.2} ms", secs * 1e3)
    } else if secs < 120.0 {
        format!("{secs:.2} s")
    } else {
        format!("{}m {:02}s", duration.as_secs() / 60, duration.as_secs() % 60)
    }
}

/// A clap value parser whose refusal is the parse function's own message alone (still a usage error, exit 2). clap's
/// usual refusal repeats the value as written, which for a database URL shows its password; the function's message
/// names it with the password hidden. `what` names the option and what it takes, for a value that is not UTF-8.
#[derive(Clone, Copy)]
pub struct OwnMessage<T: 'static> {
    pub parse: fn(&str) -> Result<T, String>,
    pub what: &'static str,
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for OwnMessage<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, _: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<T, clap::Error> {
        let refused = |message: String| {
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{message}\n")).with_cmd(cmd)
        };
        let text = value.to_str().ok_or_else(|| refused(format!("{} is not UTF-8", self.what)))?;
        (self.parse)(text).map_err(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_settings_are_bounded() {
        let (second, day) = (Duration::from_secs(1), Duration::from_secs(86_400));
        let arg = |text: &str| text.parse::<DurationArg>();
        assert_eq!(arg("5m").unwrap().within("--duration", second, day).unwrap(), Duration::from_secs(300));
        let short = arg(" 1ns").unwrap().within("--duration", second, day).unwrap_err();
        assert_eq!(short, "--duration 1ns: give from 1s to 24h");
        assert!(arg("100000h").unwrap().within("--interval", second, day).unwrap_err().contains("to 24h"));
        assert_eq!(arg("soon").unwrap_err(), UnitError::BadDuration("soon".into()));
        assert_eq!(arg("90s").unwrap().to_string(), "90s");
        assert!(check_settings("--users", &[1, 2, 4], 64).is_ok());
        assert_eq!(
            check_settings("--users", &[2, 2], 64).unwrap_err(),
            "--users: 2 is given twice; give each setting once"
        );
        let many: Vec<u32> = (1..=5000).collect();
        assert!(check_settings("--jobs", &many, 64).unwrap_err().contains("5000 settings are more than 64"));
    }

    #[test]
    fn sizes_parse_as_binary_multiples() {
        assert_eq!(parse_byte_size("4096").unwrap(), ByteSize(4096));
        assert_eq!(parse_byte_size("8k").unwrap(), ByteSize(8192));
        assert_eq!(parse_byte_size("8KiB").unwrap(), ByteSize(8192));
        assert_eq!(parse_byte_size("256MiB").unwrap(), ByteSize(256 << 20));
        assert_eq!(parse_byte_size("1G").unwrap(), ByteSize(1 << 30));
        assert_eq!(parse_byte_size("1.5g").unwrap(), ByteSize(3 << 29));
        assert_eq!(parse_byte_size(" 2 TiB").unwrap(), ByteSize(2 << 40));
    }

    #[test]
    fn garbled_sizes_are_rejected() {
        for text in ["", "k", "-1", "1x", "1.2.3G", "abc", "0.3"] {
            assert!(parse_byte_size(text).is_err(), "{text} should be rejected");
        }
        assert!(matches!(parse_byte_size("99999999999T"), Err(UnitError::SizeOverflow(_))));
    }

    #[test]
    fn sizes_display_in_binary_units() {
        assert_eq!(ByteSize(1 << 30).to_string(), "1 GiB");
        assert_eq!(ByteSize(1536 << 20).to_string(), "1.5 GiB");
        assert_eq!(ByteSize(512).to_string(), "512 B");
    }

    #[test]
    fn durations_need_units() {
        assert_eq!(parse_duration("8ms").unwrap(), Duration::from_millis(8));
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        for text in ["8", "ms", "-1s", "8 parsecs", ""] {
            assert!(parse_duration(text).is_err(), "{text} should be rejected");
        }
    }

    #[test]
    fn durations_format_for_people() {
        assert_eq!(format_duration(Duration::from_micros(850)), "850 µs");
        assert_eq!(format_duration(Duration::from_micros(8200)), "8.20 ms");
        assert_eq!(format_duration(Duration::from_secs(250)), "4m 10s");
    }

    #[test]
    fn percentages_parse_with_or_without_the_sign() {
        assert_eq!("5%".parse::<Percent>().unwrap().fraction(), 0.05);
        assert_eq!(" 2.5 ".parse::<Percent>().unwrap().fraction(), 0.025);
        for bad in ["", "x", "-1%", "1001", "NaN"] {
            assert!(bad.parse::<Percent>().unwrap_err().contains("e.g. 5%"), "{bad}");
        }
    }
}
