//! The data-model linter's findings on the terminal: grouped by severity, worst first, each
//! with why and what to do instead (`casslab lint`), the one-line tally, the short list
//! `run` and `experiment` print before they start, and the JSON of `lint --json`.

use crate::lint::{Finding, Severity};

/// Findings grouped by severity, worst first, each with why and what to do instead.
pub fn text(findings: &[&Finding]) -> String {
    let mut out = String::new();
    for sev in [Severity::Error, Severity::Warning, Severity::Info] {
        let group: Vec<&&Finding> = findings.iter().filter(|f| f.severity == sev).collect();
        if group.is_empty() {
            continue;
        }
        let title = match sev {
            Severity::Error => "errors",
            Severity::Warning => "warnings",
            Severity::Info => "notes",
        };
        out.push_str(&format!("{title} ({})\n", group.len()));
        for f in group {
            out.push_str(&format!("  {}  [{}] {}\n", f.location(), f.rule.id(), f.subject));
            out.push_str(&format!("    {}\n", f.message));
            if !f.statement.is_empty() {
                out.push_str(&format!("    > {}\n", f.statement));
            }
            out.push_str(&format!("    why: {}\n", f.why));
            out.push_str(&format!("    fix: {}\n", f.fix));
        }
        out.push('\n');
    }
    out
}

pub fn tally(findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "lint: no findings".into();
    }
    let n = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let plural = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    format!(
        "lint: {}, {}, {}",
        plural(n(Severity::Error), "error", "errors"),
        plural(n(Severity::Warning), "warning", "warnings"),
        plural(n(Severity::Info), "note", "notes")
    )
}

/// The warnings and errors among `findings`, as the few lines printed before a run (`None`
/// when there are none); `target` is what `casslab lint` would be given for the details.
pub fn brief(findings: &[Finding], target: &str) -> Option<String> {
    let shown: Vec<&Finding> = findings.iter().filter(|f| f.severity >= Severity::Warning).collect();
    if shown.is_empty() {
        return None;
    }
    let mut out = format!("lint: {} finding(s) in the data model (details: `casslab lint {target}`; --no-lint hides this):\n", shown.len());
    for f in shown {
        out.push_str(&format!("  {} {}  [{}] {}\n", f.severity.name(), f.location(), f.rule.id(), f.message));
        out.push_str(&format!("    fix: {}\n", f.fix));
    }
    Some(out)
}

/// `lint --json`: the counts of every finding, and the findings shown.
pub fn json(target: &str, findings: &[Finding], shown: &[&Finding]) -> serde_json::Value {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    serde_json::json!({
        "target": target,
        "errors": count(Severity::Error),
        "warnings": count(Severity::Warning),
        "infos": count(Severity::Info),
        "findings": shown,
    })
}
