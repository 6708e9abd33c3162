//! Live metrics for the user's own dashboards (`--metrics-listen`): what a run is doing now, as Prometheus scrapes it.
//!
//! One registry for the process, as a Prometheus client library keeps one: the driver names the run, the OS sampler
//! sets its figures every interval, and a workload sets its own (rates, response-time percentiles, errors) as it goes.
//! Setting a figure costs nothing until an endpoint is serving ([`enabled`]), so workloads publish unconditionally.
//! [`render`] writes the text exposition format (version 0.0.4): `# HELP` and `# TYPE` once per family, then one line
//! per labelled series. The endpoint that serves it is `envbench-probe`'s (this crate does no I/O).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Whether a figure only goes up (a count since the run began) or goes up and down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
}

impl Kind {
    fn word(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// A family of series: one metric name with its help and kind, and a value per set of labels.
struct Family {
    help: &'static str,
    kind: Kind,
    series: BTreeMap<Vec<(String, String)>, f64>,
}

static ENABLED: AtomicBool = AtomicBool::new(false);

fn registry() -> &'static Mutex<BTreeMap<&'static str, Family>> {
    static REGISTRY: OnceLock<Mutex<BTreeMap<&'static str, Family>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(BTreeMap::new()))
}

/// Whether an endpoint is serving the figures (setting them is free otherwise).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Start or stop keeping figures (the endpoint's; a stop forgets them).
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::SeqCst);
    if !on {
        registry().lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// Set one series of family `name` (`envbench_` and snake case, with its unit last: `_seconds`, `_total`) to
/// `value`. `help` and `kind` describe the family; the first call for it decides them.
pub fn set(name: &'static str, help: &'static str, kind: Kind, labels: &[(&str, &str)], value: f64) {
    if !enabled() {
        return;
    }
    insert(&mut registry().lock().unwrap_or_else(|e| e.into_inner()), name, help, kind, labels, value);
}

/// Put one series into `families`, its family made with `help` and `kind` if it is new.
fn insert(
    families: &mut BTreeMap<&'static str, Family>,
    name: &'static str,
    help: &'static str,
    kind: Kind,
    labels: &[(&str, &str)],
    value: f64,
) {
    debug_assert!(valid_name(name), "{name}");
    let labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    families.entry(name).or_insert_with(|| Family { help, kind, series: BTreeMap::new() }).series.insert(labels, value);
}

/// Figures set together and published at once ([`Batch::replace_prefix`]): a scrape sees all of them or none, never a
/// family gone between two figures.
#[derive(Default)]
pub struct Batch {
    families: BTreeMap<&'static str, Family>,
}

impl Batch {
    /// Set one series, as [`set`] does.
    pub fn set(&mut self, name: &'static str, help: &'static str, kind: Kind, labels: &[(&str, &str)], value: f64) {
        insert(&mut self.families, name, help, kind, labels, value);
    }

    /// Replace every family whose name begins with `prefix` by the batch's, under one lock.
    pub fn replace_prefix(self, prefix: &str) {
        if !enabled() {
            return;
        }
        let mut families = registry().lock().unwrap_or_else(|e| e.into_inner());
        families.retain(|name, _| !name.starts_with(prefix));
        families.extend(self.families);
    }
}

/// Forget every series of family `name` (a step ended: its figures no longer describe what runs).
pub fn clear(name: &'static str) {
    if enabled() {
        registry().lock().unwrap_or_else(|e| e.into_inner()).remove(name);
    }
}

/// Forget every family whose name begins with `prefix` (a workload's figures, when its step ends).
pub fn clear_prefix(prefix: &str) {
    if enabled() {
        registry().lock().unwrap_or_else(|e| e.into_inner()).retain(|name, _| !name.starts_with(prefix));
    }
}

/// Every family in the text exposition format.
pub fn render() -> String {
    let families = registry().lock().unwrap_or_else(|e| e.into_inner());
    let mut out = String::new();
    for (name, family) in families.iter() {
        out.push_str(&format!("# HELP {name} {}\n# TYPE {name} {}\n", escape_help(family.help), family.kind.word()));
        for (labels, value) in &family.series {
            out.push_str(name);
            if !labels.is_empty() {
                let pairs: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{}\"", escape_label(v))).collect();
                out.push_str(&format!("{{{}}}", pairs.join(",")));
            }
            out.push(' ');
            out.push_str(&number(*value));
            out.push('\n');
        }
    }
    out
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

fn escape_label(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// A value as the format writes it: `NaN`, `+Inf`, `-Inf`, or the number.
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf".into() } else { "-Inf".into() }
    } else {
        format!("{value}")
    }
}

/// `--metrics-listen` as users write it: a port alone binds to loopback (127.0.0.1:PORT); an address with its port
/// (`127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`) is taken as given, so serving beyond this host is always asked
/// for by name.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let trimmed = text.trim();
    if let Ok(port) = trimmed.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    trimmed.parse::<SocketAddr>().map_err(|_| {
        format!(
            "--metrics-listen '{text}': give a port (served on 127.0.0.1) or an address with its port, e.g. 9464, \
             127.0.0.1:9464 or [::1]:9464"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures are kept only while an endpoint serves; the format names each family once with its help and type,
    /// escapes what labels and help may hold, and a cleared family is gone.
    #[test]
    fn figures_render_in_the_exposition_format() {
        set_enabled(false);
        set("envbench_test_ignored", "Never kept.", Kind::Gauge, &[], 1.0);
        set_enabled(true);
        assert!(!render().contains("envbench_test_ignored"));
        set("envbench_test_rate", "Transactions per second.", Kind::Gauge, &[("step", "U=2 \"a\\b\"")], 12.5);
        set("envbench_test_rate", "ignored", Kind::Counter, &[("step", "U=4")], f64::NAN);
        set("envbench_test_total", "Line one\nline two.", Kind::Counter, &[], 3.0);
        let text = render();
        assert!(text.contains("# HELP envbench_test_rate Transactions per second.\n# TYPE envbench_test_rate gauge\n"));
        assert!(text.contains("envbench_test_rate{step=\"U=2 \\\"a\\\\b\\\"\"} 12.5\n"), "{text}");
        assert!(text.contains("envbench_test_rate{step=\"U=4\"} NaN\n"), "{text}");
        assert!(
            text.contains("# HELP envbench_test_total Line one\\nline two.\n")
                && text.contains("envbench_test_total 3\n")
        );
        assert_eq!(text.matches("# TYPE envbench_test_rate").count(), 1);
        clear("envbench_test_rate");
        let mut batch = Batch::default();
        batch.set("envbench_test_batch", "Set together.", Kind::Gauge, &[], 2.0);
        batch.replace_prefix("envbench_test_");
        let text = render();
        assert!(text.contains("envbench_test_batch 2\n") && !text.contains("envbench_test_total"), "{text}");
        clear_prefix("envbench_test_");
        assert!(!render().contains("envbench_test_"));
        set_enabled(false);
    }

    #[test]
    fn a_port_alone_listens_on_loopback() {
        assert_eq!(parse_listen("9464"), Ok("127.0.0.1:9464".parse().unwrap()));
        assert_eq!(parse_listen("[::1]:9464"), Ok("[::1]:9464".parse().unwrap()));
        assert_eq!(parse_listen("0.0.0.0:9464"), Ok("0.0.0.0:9464".parse().unwrap()));
        for bad in ["", "localhost", "99999", "host:port"] {
            assert!(parse_listen(bad).unwrap_err().starts_with(&format!("--metrics-listen '{bad}': give a port")));
        }
    }
}
