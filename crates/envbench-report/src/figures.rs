//! The report's chart figures: a running count that keeps every chart's SVG ids unique in the page, each chart in a
//! `<figure>` with its caption, and a workload's figures split into the one headline shown and the rest collapsed.

use crate::change_chart::{ChangeChart, change_chart};
use crate::svg::{BarChart, LineChart, bar_chart, line_chart};
use maud::{Markup, html};

/// A running count of charts, so every chart's SVG ids are unique in the page.
#[derive(Default)]
pub struct Charts {
    count: usize,
}

impl Charts {
    fn next_id(&mut self) -> String {
        self.count += 1;
        format!("chart{}", self.count)
    }

    /// A figure holding a bar chart; `kind` names the chart family (`bars`, `percentiles`...) in `data-chart`.
    pub fn bars(&mut self, kind: &str, chart: &BarChart, caption: &str) -> Markup {
        let id = self.next_id();
        figure(kind, bar_chart(chart, &id), caption)
    }

    /// A figure holding a change chart (a forest plot against the baseline).
    pub fn changes(&mut self, kind: &str, chart: &ChangeChart, caption: &str) -> Markup {
        let id = self.next_id();
        figure(kind, change_chart(chart, &id), caption)
    }

    /// A figure holding a line chart.
    pub fn lines(&mut self, kind: &str, chart: &LineChart, caption: &str) -> Markup {
        let id = self.next_id();
        figure(kind, line_chart(chart, &id), caption)
    }
}

fn figure(kind: &str, svg: Markup, caption: &str) -> Markup {
    html! {
        figure class="chart" data-chart=(kind) { (svg) figcaption class="note" { (caption) } }
        "\n"
    }
}

/// A workload's figures split into its one headline (shown) and the rest (collapsed), with a count of the charts
/// collapsed. The first part to offer a headline keeps it; later ones go to the rest.
#[derive(Default)]
pub(crate) struct Charted {
    /// `Some` once something took the headline place (nothing drawn when that is not a chart, the grid).
    pub(crate) headline: Option<Markup>,
    pub(crate) rest: Vec<Markup>,
    pub(crate) count: usize,
}

impl Charted {
    /// The headline is taken by something that is not a chart (the read/write grid): whatever is added goes below.
    pub(crate) fn none() -> Charted {
        Charted { headline: Some(html! {}), ..Charted::default() }
    }

    /// Charts with no headline of their own: the first becomes the headline when nothing else offered one.
    pub(crate) fn later(figures: Vec<Markup>) -> Charted {
        let mut figures = figures.into_iter();
        let headline = figures.next();
        let rest: Vec<Markup> = figures.collect();
        Charted { headline, count: rest.len(), rest }
    }

    pub(crate) fn add(&mut self, other: Charted) {
        match (&self.headline, other.headline) {
            (None, headline) => self.headline = headline,
            (Some(_), Some(headline)) => {
                self.rest.push(headline);
                self.count += 1;
            }
            (Some(_), None) => {}
        }
        self.rest.extend(other.rest);
        self.count += other.count;
    }
}
