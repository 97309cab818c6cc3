//! The risk sets of the Cox loss (`cox.rs`): its labels, one or three target columns per row, and
//! the rows grouped by stratum and tied stop time, with the order in which counting-process rows
//! enter and leave the risk sets.
//!
//! * One column: the signed time (XGBoost's convention), > 0 an event at that time, < 0 a row
//!   censored at its absolute value. Every row is at risk from the start, one stratum.
//! * Three columns ([`COX_COLUMNS`]): the signed stop time, the start time and the stratum (R's
//!   `Surv(start, stop, event)` and `strata(g)`; Andersen & Gill 1982). Row j is at risk at t when
//!   it is in the event's stratum and start_j < t ≤ stop_j. Right-censored data are start 0.

/// The target columns of a Cox loss with start times and strata: signed stop, start, stratum.
pub const COX_COLUMNS: usize = 3;

/// A Cox target: `width` values per row (1 or [`COX_COLUMNS`]).
#[derive(Clone, Copy)]
pub(super) struct Labels<'a> {
    pub y: &'a [f64],
    pub width: usize,
}

impl Labels<'_> {
    pub fn n(&self) -> usize {
        self.y.len() / self.width
    }
    pub fn stop(&self, i: usize) -> f64 {
        self.y[i * self.width].abs()
    }
    pub fn event(&self, i: usize) -> bool {
        self.y[i * self.width] > 0.0
    }
    /// Whether rows have start times (and strata).
    pub fn counting(&self) -> bool {
        self.width > 1
    }
    /// The start time; −∞ for a target of one column (at risk from the start).
    pub fn start(&self, i: usize) -> f64 {
        if self.counting() {
            self.y[i * self.width + 1]
        } else {
            f64::NEG_INFINITY
        }
    }
    pub fn stratum(&self, i: usize) -> f64 {
        if self.counting() {
            self.y[i * self.width + 2]
        } else {
            0.0
        }
    }

    /// The first row that is not a valid label, and what is wrong with it.
    pub fn error(&self) -> Option<String> {
        let width = self.width;
        if self.y.len() % width != 0 {
            return Some(format!(
                "{} values do not make rows of {width} (signed stop time, start time, stratum)",
                self.y.len()
            ));
        }
        (0..self.n()).find_map(|i| {
            let signed = self.y[i * width];
            if !(signed.is_finite() && signed != 0.0) {
                return Some(format!(
                    "row {i} is {signed} (the cox loss needs a signed time: > 0 for an event at \
                     that time, < 0 for a row censored at its absolute value; never 0 or missing)"
                ));
            }
            if !self.counting() {
                return None;
            }
            let (start, stratum) = (self.start(i), self.stratum(i));
            if !(start.is_finite() && start < self.stop(i)) {
                return Some(format!(
                    "row {i} starts at {start} and stops at {} (counting-process data need a \
                     finite start before the stop time)",
                    self.stop(i)
                ));
            }
            (!stratum.is_finite()).then(|| format!("row {i} has stratum {stratum}"))
        })
    }
}

/// Rows grouped for the risk-set sweeps: by stratum, then by stop time (ascending, ties in row
/// order), each run of tied stop times within a stratum a group.
pub(super) struct RiskSets {
    order: Vec<usize>,
    /// Where each run of tied stop times starts in `order`, with n last.
    starts: Vec<usize>,
    /// The first run of each stratum, with the number of runs last.
    strata: Vec<usize>,
    /// Each stratum's rows by start time, descending, at the positions the stratum has in
    /// `order`; empty without start times.
    by_start: Vec<usize>,
}

impl RiskSets {
    pub fn new(labels: Labels<'_>) -> RiskSets {
        let mut order: Vec<usize> = (0..labels.n()).collect();
        order.sort_by(|&a, &b| {
            (labels.stratum(a).total_cmp(&labels.stratum(b)))
                .then(labels.stop(a).total_cmp(&labels.stop(b)))
        });
        let (mut starts, mut strata) = (Vec::new(), Vec::new());
        for (pos, &i) in order.iter().enumerate() {
            let new_stratum = pos == 0 || labels.stratum(i) != labels.stratum(order[pos - 1]);
            if new_stratum {
                strata.push(starts.len());
            }
            if new_stratum || labels.stop(i) != labels.stop(order[pos - 1]) {
                starts.push(pos);
            }
        }
        starts.push(order.len());
        strata.push(starts.len() - 1);
        let mut sets = RiskSets {
            order,
            starts,
            strata,
            by_start: Vec::new(),
        };
        if labels.counting() {
            let mut by_start = sets.order.clone();
            for s in 0..sets.n_strata() {
                by_start[sets.positions(s)]
                    .sort_by(|&a, &b| labels.start(b).total_cmp(&labels.start(a)));
            }
            sets.by_start = by_start;
        }
        sets
    }

    pub fn n_strata(&self) -> usize {
        self.strata.len() - 1
    }
    pub fn n_runs(&self) -> usize {
        self.starts.len() - 1
    }
    /// The runs of stratum `s`, earliest first.
    pub fn runs(&self, s: usize) -> std::ops::Range<usize> {
        self.strata[s]..self.strata[s + 1]
    }
    /// The rows of run `run`.
    pub fn rows(&self, run: usize) -> &[usize] {
        &self.order[self.starts[run]..self.starts[run + 1]]
    }
    fn positions(&self, s: usize) -> std::ops::Range<usize> {
        self.starts[self.strata[s]]..self.starts[self.strata[s + 1]]
    }
    /// The rows of stratum `s` by start time, latest first (empty without start times).
    pub fn by_start(&self, s: usize) -> &[usize] {
        if self.by_start.is_empty() {
            &[]
        } else {
            &self.by_start[self.positions(s)]
        }
    }
}
