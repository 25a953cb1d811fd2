//! Checks a parsed workload before anything touches a cluster: every bound generator exists,
//! every statement gets as many values as it has `?` markers, phases name real operations,
//! ratios and durations make sense, and the generators themselves build. Type checks against
//! the cluster's prepared-statement metadata happen later, in the engine.

use super::error::WorkloadError;
use super::parse::LineIndex;
use crate::cql::count_markers;
use super::Workload;
use crate::gen::GeneratorSet;
use crate::suggest::did_you_mean;

pub(crate) fn validate(w: &Workload, file: &str, lines: &LineIndex) -> Result<(), WorkloadError> {
    let err = |line: Option<usize>, msg: String| WorkloadError::new(file, line, msg);

    if !is_identifier(&w.keyspace) {
        return Err(err(
            lines.section("keyspace"),
            format!("keyspace \"{}\" is not a valid CQL name (letters, digits and _, at most 48, starting with a letter)", w.keyspace),
        ));
    }

    if let Err(e) = GeneratorSet::build(&w.generators) {
        let gen_line = lines.key_in(lines.section("generators"), &e.generator);
        let line = e.field.as_deref().and_then(|f| lines.key_in(gen_line, f)).or(gen_line);
        return Err(err(line, format!("generator \"{}\": {}", e.generator, e.message)));
    }
    let gen_names: Vec<&str> = w.generators.keys().map(|s| s.as_str()).collect();

    for op in &w.operations {
        for st in &op.statements {
            for a in &st.args {
                if !w.generators.contains_key(a) {
                    let sugg = did_you_mean(a, &gen_names).map(|s| format!("; did you mean \"{s}\"?")).unwrap_or_default();
                    let block = if op.statements.len() > 1 { st.line } else { op.line };
                    let line = lines.word_after(block, a).unwrap_or(st.line);
                    return Err(err(
                        Some(line),
                        format!("operation \"{}\" binds unknown generator \"{a}\"{sugg} (declare it under `generators:`)", op.name),
                    ));
                }
            }
            let markers = count_markers(&st.cql);
            if markers != st.args.len() {
                return Err(err(
                    Some(st.line),
                    format!(
                        "operation \"{}\": the statement has {markers} bind marker(s) `?` but {} value(s) in `args`; give one generator per `?`",
                        op.name,
                        st.args.len()
                    ),
                ));
            }
        }
    }

    let op_names: Vec<&str> = w.operations.iter().map(|o| o.name.as_str()).collect();
    let unknown_op = |name: &str| {
        let sugg = did_you_mean(name, &op_names).map(|s| format!("; did you mean \"{s}\"?")).unwrap_or_default();
        format!("unknown operation \"{name}\"{sugg} (declared: {})", op_names.join(", "))
    };

    if w.load.is_none() && w.run.is_none() {
        return Err(err(None, "the workload has neither a `load:` nor a `run:` phase; add at least one".into()));
    }
    if let Some(l) = &w.load {
        if w.operation(&l.op).is_none() {
            return Err(err(lines.key_in(Some(l.line), "op"), format!("load: {}", unknown_op(&l.op))));
        }
    }
    if let Some(r) = &w.run {
        let mix_line = lines.key_in(Some(r.line), "mix");
        if r.mix.is_empty() {
            return Err(err(mix_line, "run: `mix` is empty; give each operation a ratio, e.g. `mix: { read: 1, update: 1 }`".into()));
        }
        for (name, ratio) in &r.mix {
            let line = lines.key_in(mix_line, name).or(mix_line);
            if w.operation(name).is_none() {
                return Err(err(line, format!("run.mix: {}", unknown_op(name))));
            }
            if !ratio.is_finite() || *ratio < 0.0 {
                return Err(err(line, format!("run.mix: ratio of \"{name}\" must be a number ≥ 0, not {ratio}")));
            }
        }
        if r.mix.iter().all(|(_, x)| *x == 0.0) {
            return Err(err(mix_line, "run.mix: every ratio is 0, so nothing would run; give at least one operation a ratio > 0".into()));
        }
        if r.duration_s <= 0.0 {
            return Err(err(lines.key_in(Some(r.line), "duration"), "run.duration must be longer than 0s".into()));
        }
    }
    Ok(())
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(f) if f.is_ascii_alphabetic()) && s.len() <= 48 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
