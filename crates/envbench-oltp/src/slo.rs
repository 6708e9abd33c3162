//! Service levels (`--slo`): the response-time percentile each kind of transaction must stay within, TPC-C's own
//! limits by default (clause 5.2.5.4: the 90th percentile of New-Order, Payment and Order-Status within 5 s,
//! Stock-Level within 20 s, and Delivery, which envbench runs in full rather than deferred, within the 80 s its
//! deferred part has), and whether a step's response times held them.

use crate::profile::Profile;
use crate::transactions::Kind;
use envbench_base::latency::LatencyHistogram;
use envbench_core::units::parse_duration;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// One level: a kind's response-time percentile within a limit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Level {
    pub kind: Kind,
    /// The percentile, e.g. 90 or 99.9.
    pub percentile: f64,
    pub within_ms: f64,
}

impl Level {
    /// The level as written: `new-order:p90<=5s`.
    pub fn text(&self) -> String {
        format!("{}:p{}<={}", kind_word(self.kind), trim(self.percentile), duration_words(self.within_ms))
    }
}

/// The levels a run's steps are judged by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub levels: Vec<Level>,
}

/// How a step stood against each level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub level: Level,
    /// The kind's response time at the level's percentile, in ms (`None`: no such transaction ended).
    pub measured_ms: Option<f64>,
    pub met: bool,
}

fn kind_word(kind: Kind) -> String {
    kind.name().to_ascii_lowercase()
}

/// A number as a level writes it: `99`, `99.9`, `2.5`.
pub(crate) fn trim(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn duration_words(ms: f64) -> String {
    if ms >= 1000.0 && (ms / 1000.0).fract() == 0.0 { format!("{}s", ms / 1000.0) } else { format!("{}ms", trim(ms)) }
}

impl Slo {
    /// TPC-C's response-time limits (clause 5.2.5.4); tpcb has none.
    pub fn tpcc() -> Slo {
        let level = |kind, seconds: f64| Level { kind, percentile: 90.0, within_ms: seconds * 1e3 };
        Slo {
            levels: vec![
                level(Kind::NewOrder, 5.0),
                level(Kind::Payment, 5.0),
                level(Kind::OrderStatus, 5.0),
                level(Kind::Delivery, 80.0),
                level(Kind::StockLevel, 20.0),
            ],
        }
    }

    /// The default of a profile: TPC-C's limits, none for tpcb.
    pub fn default_for(profile: Profile) -> Option<Slo> {
        (profile == Profile::Tpcc).then(Slo::tpcc)
    }

    /// `--slo` as users write it: `KIND:pPERCENTILE<=DURATION`, comma-separated, e.g.
    /// `new-order:p99<=10ms,payment:p99<=10ms`; each kind once.
    pub fn parse(text: &str) -> Result<Slo, String> {
        let example = "e.g. --slo new-order:p90<=5s or new-order:p99<=10ms,payment:p99<=10ms";
        let names: Vec<String> = Kind::TPCC.iter().chain([&Kind::TpcB]).map(|&k| kind_word(k)).collect();
        let mut levels: Vec<Level> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = |why: &str| format!("--slo '{part}': {why}, {example}");
            let (name, rest) = part.split_once(':').ok_or_else(|| bad("give each level as KIND:pNN<=DURATION"))?;
            let name = name.trim().to_ascii_lowercase();
            let kind =
                Kind::TPCC.iter().chain([&Kind::TpcB]).copied().find(|&k| kind_word(k) == name).ok_or_else(|| {
                    let hint = envbench_core::text::did_you_mean(&envbench_core::text::suggestions(
                        &name,
                        names.iter().map(String::as_str),
                    ));
                    format!("--slo '{part}': '{name}' is no transaction; give one of {}{hint}", names.join(", "))
                })?;
            let (percentile, limit) =
                rest.split_once("<=").ok_or_else(|| bad("give the percentile and its limit as pNN<=DURATION"))?;
            let percentile = percentile
                .trim()
                .strip_prefix(['p', 'P'])
                .and_then(|p| p.parse::<f64>().ok())
                .filter(|p| *p > 0.0 && *p < 100.0)
                .ok_or_else(|| bad("the percentile is p and a number above 0 and below 100, such as p90 or p99.9"))?;
            let limit = parse_duration(limit.trim())
                .ok()
                .filter(|d| *d >= Duration::from_micros(1) && *d <= Duration::from_secs(3600))
                .ok_or_else(|| bad("the limit is a duration from 1us to 1h with its unit, such as 10ms or 5s"))?;
            if levels.iter().any(|l| l.kind == kind) {
                return Err(format!("--slo: {name} is given twice; give each transaction one level"));
            }
            levels.push(Level { kind, percentile, within_ms: limit.as_secs_f64() * 1e3 });
        }
        if levels.is_empty() {
            return Err(format!("--slo '{text}': give at least one level, {example}"));
        }
        Ok(Slo { levels })
    }

    /// The levels as written.
    pub fn text(&self) -> String {
        self.levels.iter().map(Level::text).collect::<Vec<_>>().join(",")
    }

    /// A level that names a transaction the run does not run: `kinds` are those of `profile` with its mix
    /// ([`crate::mix::Mix::kinds`]).
    pub fn check_kinds(&self, profile: Profile, kinds: &[Kind]) -> Result<(), String> {
        match self.levels.iter().find(|l| !kinds.contains(&l.kind)) {
            Some(level) => Err(format!(
                "--slo {}: {} does not run {}; give levels of {}",
                level.text(),
                match profile {
                    Profile::Tpcc => "this run's mix",
                    Profile::Tpcb => "tpcb",
                },
                level.kind.name(),
                kinds.iter().map(|k| kind_word(*k)).collect::<Vec<_>>().join(", ")
            )),
            None => Ok(()),
        }
    }

    /// How a step's response times (by kind) stood against each level. A kind with no transaction ended has no
    /// figure and misses its level: a step that ends none of them has not shown it holds.
    pub fn judge(&self, latency: &BTreeMap<Kind, LatencyHistogram>) -> Vec<Judged> {
        self.levels
            .iter()
            .map(|&level| {
                let measured_ms = latency
                    .get(&level.kind)
                    .filter(|h| h.count() > 0)
                    .map(|h| h.quantile_ns(level.percentile / 100.0) as f64 / 1e6);
                Judged { level, measured_ms, met: measured_ms.is_some_and(|ms| ms <= level.within_ms) }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_check_and_judge() {
        let slo = Slo::parse("new-order:p99<=10ms, Payment:p99.9<=1.5s").unwrap();
        assert_eq!(slo.levels[0], Level { kind: Kind::NewOrder, percentile: 99.0, within_ms: 10.0 });
        assert_eq!(slo.levels[1], Level { kind: Kind::Payment, percentile: 99.9, within_ms: 1500.0 });
        assert_eq!(slo.text(), "new-order:p99<=10ms,payment:p99.9<=1500ms");
        assert_eq!(Slo::tpcc().text().split(',').next(), Some("new-order:p90<=5s"));
        assert_eq!(Slo::parse(&Slo::tpcc().text()), Ok(Slo::tpcc()));
        for (bad, says) in [
            ("new-order", "give each level as KIND:pNN<=DURATION"),
            ("new-ordr:p90<=5s", "did you mean new-order?"),
            ("new-order:p100<=5s", "the percentile is p and a number"),
            ("new-order:90<=5s", "the percentile is p and a number"),
            ("new-order:p90<5s", "as pNN<=DURATION"),
            ("new-order:p90<=5", "the limit is a duration"),
            ("new-order:p90<=0s", "the limit is a duration"),
            ("new-order:p90<=5s,new-order:p99<=9s", "new-order is given twice"),
            ("", "give at least one level"),
        ] {
            let error = Slo::parse(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
        assert!(slo.check_kinds(Profile::Tpcc, &Kind::TPCC).is_ok());
        let error = slo.check_kinds(Profile::Tpcc, &[Kind::NewOrder]).unwrap_err();
        assert!(error.contains("this run's mix does not run Payment"), "{error}");
        assert!(Slo::parse("tpc-b:p95<=20ms").unwrap().check_kinds(Profile::Tpcb, &[Kind::TpcB]).is_ok());
        let mut latency = BTreeMap::new();
        let mut new_order = LatencyHistogram::new();
        for ms in 1..=100u64 {
            new_order.record_ns(ms * 100_000);
        }
        latency.insert(Kind::NewOrder, new_order);
        let judged = slo.judge(&latency);
        assert!(judged[0].met && (judged[0].measured_ms.unwrap() - 9.9).abs() < 0.2, "{judged:?}");
        assert_eq!((judged[1].measured_ms, judged[1].met), (None, false));
    }
}
