//! What checked reads add to an operation's records: each read's class ([`Class`], which
//! `verify::classify` decides), counts per class ([`VerifyCounts`]) over
//! an interval or a phase, and the first violations themselves ([`Violation`]: the key, the
//! write expected, what came back, when). Counts travel with the operation's other figures
//! (`stats::OpStats::verify`) into the store, summaries and reports; violations are kept a few
//! per interval here, and the first of the run are saved with it.

use serde::{Deserialize, Serialize};

/// What one checked read was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    Ok,
    Stale,
    Missing,
    Corrupt,
    Resurrected,
    Expired,
    Unchecked,
}

impl Class {
    /// The classes that are violations, in the order reports list them.
    pub const VIOLATIONS: [Class; 5] = [Class::Stale, Class::Missing, Class::Corrupt, Class::Resurrected, Class::Expired];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Stale => "stale",
            Class::Missing => "missing",
            Class::Corrupt => "corrupt",
            Class::Resurrected => "resurrected",
            Class::Expired => "expired",
            Class::Unchecked => "unchecked",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        [Class::Ok, Class::Stale, Class::Missing, Class::Corrupt, Class::Resurrected, Class::Expired, Class::Unchecked].into_iter().find(|c| c.as_str() == s)
    }

    pub fn is_violation(self) -> bool {
        Class::VIOLATIONS.contains(&self)
    }
}

/// Violations an interval's records keep per operation (the run keeps its first
/// `crate::verify::RUN_SAMPLES`).
pub const INTERVAL_SAMPLES: usize = 8;

/// How many replicas a read and the writes it may see reach, of how many: when `write + read`
/// is not more than `rf` they need not meet, and a read may miss an acknowledged write on a
/// correct cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overlap {
    /// Replicas the weakest write to the table reaches before it is acknowledged.
    pub write: u32,
    /// Replicas the read asks.
    pub read: u32,
    /// Replicas of each row.
    pub rf: u32,
}

impl Overlap {
    /// Whether a read is sure to meet every acknowledged write (W + R > RF).
    pub fn meets(&self) -> bool {
        self.write + self.read > self.rf
    }
}

/// Checked reads by class. A read of one row counts once; a read of several rows counts each
/// row it returned. Reads that cannot be judged are counted as unchecked, never as ok.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyCounts {
    pub ok: u64,
    pub stale: u64,
    pub missing: u64,
    pub corrupt: u64,
    pub resurrected: u64,
    pub expired: u64,
    /// Reads that could not be judged: of keys the record knows nothing of (or whose floor it
    /// does not know), rows whose columns cannot show which write they are, answers that could
    /// not be decoded, reads of tables or of kinds casslab does not verify (several rows,
    /// conditional writes, counters, batches, …) in an operation asked to verify.
    pub unchecked: u64,
    /// Checked reads while a write to their key was in flight (their answer was judged
    /// against every write that may have landed); counted in their class too.
    pub unsettled: u64,
    /// The replicas the reads and writes reach (CQL, one data center).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overlap: Option<Overlap>,
}

impl VerifyCounts {
    pub fn add(&mut self, class: Class, unsettled: bool) {
        *self.slot(class) += 1;
        if unsettled && class != Class::Unchecked {
            self.unsettled += 1;
        }
    }

    fn slot(&mut self, class: Class) -> &mut u64 {
        match class {
            Class::Ok => &mut self.ok,
            Class::Stale => &mut self.stale,
            Class::Missing => &mut self.missing,
            Class::Corrupt => &mut self.corrupt,
            Class::Resurrected => &mut self.resurrected,
            Class::Expired => &mut self.expired,
            Class::Unchecked => &mut self.unchecked,
        }
    }

    /// The count of one class.
    pub fn of(&self, class: Class) -> u64 {
        match class {
            Class::Ok => self.ok,
            Class::Stale => self.stale,
            Class::Missing => self.missing,
            Class::Corrupt => self.corrupt,
            Class::Resurrected => self.resurrected,
            Class::Expired => self.expired,
            Class::Unchecked => self.unchecked,
        }
    }

    pub fn merge(&mut self, o: &VerifyCounts) {
        self.ok += o.ok;
        self.stale += o.stale;
        self.missing += o.missing;
        self.corrupt += o.corrupt;
        self.resurrected += o.resurrected;
        self.expired += o.expired;
        self.unchecked += o.unchecked;
        self.unsettled += o.unsettled;
        self.overlap = self.overlap.or(o.overlap);
    }

    /// Reads judged: ok or a violation (unchecked ones are not).
    pub fn checked(&self) -> u64 {
        self.ok + self.violations()
    }

    pub fn violations(&self) -> u64 {
        self.stale + self.missing + self.corrupt + self.resurrected + self.expired
    }

    /// Violations per read judged (0 when none was judged).
    pub fn violation_rate(&self) -> f64 {
        self.violations() as f64 / self.checked().max(1) as f64
    }

    pub fn is_empty(&self) -> bool {
        *self == VerifyCounts::default()
    }
}

/// One violation, as found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub op: String,
    pub class: Class,
    /// The key, as the client bound it (`user42`, `0x…`), with the table it names a row of.
    pub key: String,
    /// The write a read sent then should have seen: its number, and the row (or "no row").
    pub expected: String,
    /// What came back.
    pub got: String,
    /// When the read came back, Unix milliseconds (the session turns it into run time).
    pub at_unix_ms: i64,
}

/// An operation's checked reads over a span: counts and its first violations.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VerifyStats {
    pub counts: VerifyCounts,
    pub samples: Vec<Violation>,
}

impl VerifyStats {
    pub fn merge(&mut self, o: &VerifyStats) {
        self.counts.merge(&o.counts);
        let room = INTERVAL_SAMPLES.saturating_sub(self.samples.len());
        self.samples.extend(o.samples.iter().take(room).cloned());
    }

    /// Counts one read, keeping its violation when there is room (`violation` is only made then).
    pub fn record(&mut self, class: Class, unsettled: bool, overlap: Option<Overlap>, violation: impl FnOnce() -> Violation) {
        self.counts.add(class, unsettled);
        if self.counts.overlap.is_none() {
            self.counts.overlap = overlap;
        }
        if class.is_violation() && self.samples.len() < INTERVAL_SAMPLES {
            self.samples.push(violation());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(class: Class) -> Violation {
        Violation { op: "read".into(), class, key: "kv user1".into(), expected: "write 2".into(), got: "no row".into(), at_unix_ms: 5 }
    }

    #[test]
    fn counts_add_per_class_and_rates_leave_unchecked_out() {
        let mut s = VerifyStats::default();
        for _ in 0..97 {
            s.record(Class::Ok, false, None, || unreachable!("no sample of an ok read"));
        }
        s.record(Class::Stale, true, None, || v(Class::Stale));
        s.record(Class::Missing, false, None, || v(Class::Missing));
        s.record(Class::Unchecked, true, None, || unreachable!());
        s.record(Class::Ok, true, None, || unreachable!());
        let c = s.counts;
        assert_eq!((c.ok, c.stale, c.missing, c.unchecked, c.unsettled), (98, 1, 1, 1, 2));
        assert_eq!((c.checked(), c.violations()), (100, 2));
        assert!((c.violation_rate() - 0.02).abs() < 1e-12);
        assert_eq!(s.samples.iter().map(|x| x.class).collect::<Vec<_>>(), [Class::Stale, Class::Missing]);
        assert_eq!(VerifyCounts::default().violation_rate(), 0.0);
    }

    #[test]
    fn merged_records_keep_a_bounded_number_of_violations() {
        let mut a = VerifyStats::default();
        let mut b = VerifyStats::default();
        for _ in 0..INTERVAL_SAMPLES + 3 {
            b.record(Class::Corrupt, false, None, || v(Class::Corrupt));
        }
        assert_eq!(b.samples.len(), INTERVAL_SAMPLES);
        a.record(Class::Stale, false, None, || v(Class::Stale));
        a.merge(&b);
        assert_eq!((a.counts.corrupt, a.counts.stale, a.samples.len()), (INTERVAL_SAMPLES as u64 + 3, 1, INTERVAL_SAMPLES));
        assert_eq!(a.samples[0].class, Class::Stale, "the first found stay first");
        let json = serde_json::to_value(a.counts).unwrap();
        assert_eq!(json["corrupt"], INTERVAL_SAMPLES as u64 + 3);
        assert_eq!(serde_json::from_value::<VerifyCounts>(json).unwrap(), a.counts);
    }
}
