//! What a run's verified reads found, in words, for every format that shows a run: one line
//! per phase (`data: read 12 stale of 40,000 reads verified at ONE (0.030%)`), the consistency
//! level each operation read at (from the workload the run saved), and the table of the first
//! violations (when, which operation, the class, the key, the write expected and what came
//! back). Verification is a measured figure, not a verdict on the run: a run with violations
//! is as valid as the cluster it measured; `expect: consistent` makes it fail.

use super::run_view::grouped;
use super::table::TextTable;
use crate::store::{PhaseSummary, RunRecord, SavedViolation};
use crate::verify::{Class, VerifyCounts};
use std::collections::BTreeMap;

/// The consistency level each CQL operation of the run's workload reads at, by name.
pub fn levels_of(r: &RunRecord) -> BTreeMap<String, String> {
    let w = crate::workload::parse_workload(&r.config.workload_source, &r.config.workload, &r.config.params).ok();
    w.map(|w| w.operations.iter().filter_map(|o| o.cql().map(|c| (o.name.clone(), level_name(c.consistency)))).collect()).unwrap_or_default()
}

fn level_name(c: crate::workload::Consistency) -> String {
    serde_json::to_value(c).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
}

/// The violations of `c`, worded: `12 stale and 3 missing` (`None`: none).
pub fn violations_words(c: &VerifyCounts) -> Option<String> {
    let parts: Vec<String> = Class::VIOLATIONS.iter().filter(|k| c.of(**k) > 0).map(|k| format!("{} {}", grouped(c.of(*k)), k.as_str())).collect();
    match parts.len() {
        0 => None,
        1 => Some(parts[0].clone()),
        n => Some(format!("{} and {}", parts[..n - 1].join(", "), parts[n - 1])),
    }
}

/// One operation's verified reads: `read 12 stale of 40,000 reads verified at ONE (0.030%),
/// 5 unchecked`, and, when some were not as written and the replicas are known, whether that
/// is a defect or what the levels allow.
pub fn op_words(op: &str, c: &VerifyCounts, level: Option<&str>) -> String {
    let at = level.map(|l| format!(" at {l}")).unwrap_or_default();
    let mut s = match violations_words(c) {
        Some(v) => format!("{op} {v} of {} reads verified{at} ({:.3}%)", grouped(c.checked()), 100.0 * c.violation_rate()),
        None if c.checked() == 0 => format!("{op} no read verified{at}"),
        None => format!("{op} {} reads verified{at}, every one ok", grouped(c.checked())),
    };
    if c.unchecked > 0 {
        s.push_str(&format!(", {} unchecked", grouped(c.unchecked)));
    }
    if c.unsettled > 0 {
        s.push_str(&format!(", {} while a write to their key was in flight", grouped(c.unsettled)));
    }
    if let (Some(o), true) = (c.overlap, c.violations() > 0) {
        s.push_str(&format!("; {}", overlap_words(c, &o)));
    }
    s
}

/// Whether a run's violations are a defect or an anomaly its levels allow: stale, missing and
/// resurrected reads are expected where reads and writes need not meet (W + R ≤ RF); values no
/// write made and rows past their TTL are a defect at any level.
pub fn overlap_words(c: &VerifyCounts, o: &crate::verify::Overlap) -> String {
    let sums = format!("W + R = {} + {}", o.write, o.read);
    if o.meets() {
        return format!("{sums} > RF = {}: reads meet every acknowledged write, so each is a defect", o.rf);
    }
    let anomalies = c.stale + c.missing + c.resurrected;
    let defects = c.corrupt + c.expired;
    let mut s = format!("{sums} ≤ RF = {}: reads need not meet every acknowledged write", o.rf);
    if anomalies > 0 {
        s.push_str(", so stale, missing and resurrected reads are an expected anomaly there, not a defect");
    }
    if defects > 0 {
        s.push_str(&format!("{}corrupt and expired reads are a defect at any level", if anomalies > 0 { "; " } else { ", but " }));
    }
    s
}

/// The phase's `data:` line, when an operation of it verified reads.
pub fn data_line(p: &PhaseSummary, levels: &BTreeMap<String, String>) -> Option<String> {
    let parts: Vec<String> = p
        .ops
        .iter()
        .filter_map(|o| o.verify.as_ref().filter(|c| c.checked() + c.unchecked > 0).map(|c| op_words(&o.op, c, levels.get(&o.op).map(String::as_str))))
        .collect();
    (!parts.is_empty()).then(|| format!("data: {}", parts.join("; ")))
}

/// The verified reads of a whole run added up (its run phase, else its load phase).
pub fn run_counts(phases: &[PhaseSummary]) -> Option<VerifyCounts> {
    let p = phases.iter().rev().find(|p| p.ops.iter().any(|o| o.verify.is_some()))?;
    let mut total = VerifyCounts::default();
    for c in p.ops.iter().filter_map(|o| o.verify.as_ref()) {
        total.merge(c);
    }
    Some(total)
}

/// Why a run of workload `w` failed its `expect: consistent`, if it did: a verified read that
/// was not ok, or no read verified at all (then it cannot say).
pub fn expectation_failed(w: &crate::workload::Workload, s: &crate::store::RunSummary) -> Option<String> {
    if !w.expect_consistent {
        return None;
    }
    let counts = run_counts(&s.phases).filter(|c| c.checked() > 0);
    match counts {
        None => Some("expect: consistent, but no read was verified (see the notes on verification above)".into()),
        Some(c) => violations_words(&c).map(|v| format!("expect: consistent, but {v} of {} reads verified", grouped(c.checked()))),
    }
}

/// A verification pass as text ([`pass_text`]).
pub struct PassText;

impl super::format_trait::Format<crate::verify::pass_report::PassReport> for PassText {
    fn name(&self) -> &'static str {
        "text"
    }
    fn render(&self, p: &crate::verify::pass_report::PassReport) -> String {
        pass_text(p)
    }
}

/// A verification pass, as `casslab verify` prints it: per table the keys read back, rows
/// expected and found, each class, failed reads and the checksum; then the first violations.
pub fn pass_text(p: &crate::verify::pass_report::PassReport) -> String {
    let at = p.consistency.as_deref().map(|c| format!(", read at {c}")).unwrap_or_default();
    let mut out = format!("verify {} in {}: every key against {}{at}, {:.1} s\n", p.workload, p.keyspace, p.expected_from, p.duration_s);
    let mut t = TextTable::new([
        "table",
        "keys",
        "rows expected",
        "found",
        "ok",
        "missing",
        "mismatched",
        "of which stale",
        "corrupt",
        "resurrected",
        "unchecked",
        "read errors",
        "checksum",
    ])
    .indent(2)
    .right(1..12);
    for x in &p.tables {
        let c = &x.counts;
        t.row([
            x.table.clone(),
            grouped(x.keys),
            grouped(x.rows_expected),
            grouped(x.rows_found),
            grouped(c.ok),
            grouped(c.missing),
            grouped(x.mismatched()),
            grouped(c.stale),
            grouped(c.corrupt),
            grouped(c.resurrected),
            grouped(c.unchecked),
            grouped(x.errors),
            x.checksum.clone(),
        ]);
    }
    out.push_str(&t.to_string());
    let found: Vec<SavedViolation> = p
        .tables
        .iter()
        .flat_map(|x| x.violations.iter())
        .map(|v| SavedViolation { at_ms: 0, op: v.op.clone(), class: v.class, key: v.key.clone(), expected: v.expected.clone(), got: v.got.clone() })
        .collect();
    if !found.is_empty() {
        let mut t = TextTable::new(["class", "key", "expected", "got"]).indent(2);
        for v in &found {
            t.row([v.class.as_str().to_string(), v.key.clone(), v.expected.clone(), v.got.clone()]);
        }
        out.push_str(&format!("\nrows not as written (first {}):\n{t}", found.len()));
    }
    out.push_str(if p.clean() { "\nevery row is as written\n" } else { "" });
    out
}

/// The first violations as a table: when (s since the run started), operation, class, key,
/// expected and what came back.
pub fn violations_table(found: &[SavedViolation]) -> String {
    if found.is_empty() {
        return String::new();
    }
    let mut t = TextTable::new(["at", "op", "class", "key", "expected", "got"]).indent(2).right([0]);
    for v in found {
        t.row([format!("{:.1}s", v.at_ms as f64 / 1000.0), v.op.clone(), v.class.as_str().to_string(), v.key.clone(), v.expected.clone(), v.got.clone()]);
    }
    format!("\nfirst violations ({}):\n{t}", found.len())
}

/// Verified reads compared between sides: per side and operation the share not as written
/// with its interval, and the change against the baseline (`*` where its interval excludes 0).
pub fn verified_comparison_text(c: &crate::analysis::verified::VerifiedComparison) -> String {
    let pct = |x: f64| format!("{:.3}%", 100.0 * x);
    let pp = |x: f64| format!("{:+.3}", 100.0 * x);
    let mut t = TextTable::new(["side", "op", "verified", "not as written", "share", "interval", "change (pp)", "interval"]).indent(2).right([2, 3, 4, 6]);
    for (s, change) in &c.rows {
        let what = violations_words(&s.counts).unwrap_or_else(|| "0".into());
        let (ch, chi) = match change {
            Some(d) => (format!("{}{}", pp(d.diff), if d.significant { "*" } else { "" }), format!("{} to {}", pp(d.low), pp(d.high))),
            None => ("baseline".into(), String::new()),
        };
        t.row([s.side.clone(), s.op.clone(), grouped(s.counts.checked()), what, pct(s.rate), format!("{}–{}", pct(s.low), pct(s.high)), ch, chi]);
    }
    format!("\nverified reads not as written, per read ({:.0}% intervals over windows or runs; change in percentage points):\n{t}", 100.0 * c.confidence)
}

/// The first violations as an HTML table (nothing when there are none).
pub fn violations_html(s: &mut String, found: &[SavedViolation]) {
    use super::svg_chart::esc;
    if found.is_empty() {
        return;
    }
    s.push_str(&format!(
        r#"<h4>First violations ({})</h4><table class="violations"><tr><th>at</th><th>op</th><th>class</th><th>key</th><th>expected</th><th>got</th></tr>"#,
        found.len()
    ));
    for v in found {
        s.push_str(&format!(
            "<tr><td>{:.1} s</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            v.at_ms as f64 / 1000.0,
            esc(&v.op),
            v.class.as_str(),
            esc(&v.key),
            esc(&v.expected),
            esc(&v.got)
        ));
    }
    s.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{OpStats, Phase};

    fn counts(ok: u64, stale: u64, missing: u64) -> VerifyCounts {
        VerifyCounts { ok, stale, missing, ..VerifyCounts::default() }
    }

    #[test]
    fn the_data_line_names_each_class_the_level_and_the_share() {
        let c = counts(39_988, 12, 0);
        assert_eq!(op_words("read", &c, Some("ONE")), "read 12 stale of 40,000 reads verified at ONE (0.030%)");
        let c = VerifyCounts { unsettled: 7, unchecked: 2, ..counts(10, 1, 2) };
        assert_eq!(op_words("r", &c, None), "r 1 stale and 2 missing of 13 reads verified (23.077%), 2 unchecked, 7 while a write to their key was in flight");
        assert_eq!(op_words("r", &counts(5, 0, 0), Some("QUORUM")), "r 5 reads verified at QUORUM, every one ok");
        let unchecked = VerifyCounts { unchecked: 9, ..counts(5, 0, 0) };
        assert_eq!(op_words("r", &unchecked, Some("QUORUM")), "r 5 reads verified at QUORUM, every one ok, 9 unchecked", "never counted as ok");
        assert_eq!(op_words("scan", &VerifyCounts { unchecked: 4, ..Default::default() }, None), "scan no read verified, 4 unchecked");
        let read = OpStats { verify: Some(Box::new(crate::verify::VerifyStats { counts: counts(99, 1, 0), samples: vec![] })), ..Default::default() };
        let p = PhaseSummary::of(Phase::Run, 1.0, &[("read".into(), read), ("update".into(), OpStats::default())], None, &mut Vec::new());
        let levels = BTreeMap::from([("read".to_string(), "ONE".to_string())]);
        assert_eq!(data_line(&p, &levels).unwrap(), "data: read 1 stale of 100 reads verified at ONE (1.000%)");
        assert_eq!(run_counts(std::slice::from_ref(&p)).unwrap().stale, 1);
        let quiet = PhaseSummary::of(Phase::Run, 1.0, &[("update".into(), OpStats::default())], None, &mut Vec::new());
        assert_eq!(data_line(&quiet, &levels), None);
    }

    #[test]
    fn violations_say_whether_the_levels_allow_them() {
        use crate::verify::Overlap;
        let one = Some(Overlap { write: 1, read: 1, rf: 3 });
        let c = VerifyCounts { overlap: one, ..counts(90, 10, 0) };
        assert_eq!(
            op_words("read", &c, Some("ONE")),
            "read 10 stale of 100 reads verified at ONE (10.000%); W + R = 1 + 1 ≤ RF = 3: reads need not meet every acknowledged write, so stale, missing and resurrected reads are an expected anomaly there, not a defect"
        );
        let c = VerifyCounts { overlap: one, corrupt: 2, ..counts(90, 0, 0) };
        assert!(op_words("read", &c, None)
            .ends_with("≤ RF = 3: reads need not meet every acknowledged write, but corrupt and expired reads are a defect at any level"));
        let c = VerifyCounts { overlap: Some(Overlap { write: 2, read: 2, rf: 3 }), ..counts(90, 1, 0) };
        assert!(op_words("read", &c, Some("QUORUM")).ends_with("; W + R = 2 + 2 > RF = 3: reads meet every acknowledged write, so each is a defect"));
        let c = VerifyCounts { overlap: one, ..counts(90, 0, 0) };
        assert_eq!(op_words("read", &c, Some("ONE")), "read 90 reads verified at ONE, every one ok", "nothing to explain");
    }

    #[test]
    fn violations_are_listed_with_their_key() {
        let v = SavedViolation {
            at_ms: 12_345,
            op: "read".into(),
            class: Class::Corrupt,
            key: "kv key=0x01".into(),
            expected: "write 1: value=0x02".into(),
            got: "value=0x03, which no write made".into(),
        };
        let t = violations_table(&[v]);
        assert!(t.starts_with("\nfirst violations (1):\n"), "{t}");
        assert!(t.contains("12.3s") && t.contains("corrupt") && t.contains("kv key=0x01") && t.contains("which no write made"), "{t}");
        assert_eq!(violations_table(&[]), "");
    }
}
