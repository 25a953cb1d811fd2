//! Checking and building generator specs: parses types, rejects fields that would be ignored
//! or values that cannot work (with the field to fix), wires each `latest` to the counter of
//! the sequence it follows, and checks `values_of` against the generator it names. The result is assembled into a [`GeneratorSet`](super::GeneratorSet).

use super::dist::Dist;
use super::dist_params::{Ctx, Domain, Params};
use super::spec::{ElementSpec, FieldSpec, GeneratorSpec, Scalar, SizeSpec, VectorSpec};
use super::types::CqlType;
use super::value_of::{default_start_ms, default_step_ms, Body, Simple, Size};
use super::vectors::{VectorBody, VectorKind};
use super::{GenError, VECTOR_KINDS};
use crate::suggest::hint;
use crate::units::parse_start_ms;
use std::collections::BTreeMap;

/// Largest text or blob size, in characters or bytes.
const MAX_SIZE: i64 = 64 << 20;
/// Largest collection, in elements.
const MAX_ELEMENTS: i64 = 100_000;

/// One checked generator.
pub(super) struct Built {
    pub name: String,
    pub ty: CqlType,
    pub dist: Dist,
    pub body: Body,
    /// The name whose content this generator makes (its own unless `values_of`).
    pub content_of: String,
}

/// Checks and builds every spec, in name order; the first problem found is returned.
pub(super) fn build_all(specs: &BTreeMap<String, GeneratorSpec>) -> Result<Vec<Built>, GenError> {
    let mut parts = Vec::with_capacity(specs.len());
    for (name, spec) in specs {
        parts.push(build_one(name, spec)?);
    }
    // `latest` shares the counter of the sequence it follows, built in the first pass.
    let mut dists: Vec<Option<Dist>> = parts.iter().map(|p| p.2.clone()).collect();
    for (i, (name, spec)) in specs.iter().enumerate() {
        if dists[i].is_none() {
            dists[i] = Some(latest(name, spec, &parts[i].0, specs, &parts)?);
        }
    }
    let mut content = Vec::with_capacity(specs.len());
    for (i, (name, spec)) in specs.iter().enumerate() {
        content.push(content_of(name, spec, &parts[i].0, specs, &parts)?);
    }
    // a vector generator with `values_of` makes the named generator's vectors, as it makes them
    for (i, spec) in specs.values().enumerate() {
        if let (CqlType::Vector { .. }, Some(j)) = (&parts[i].0, specs.keys().position(|k| *k == content[i])) {
            if j != i && spec.vector.is_none() {
                parts[i].1 = parts[j].1.clone();
            }
        }
    }
    Ok(specs
        .keys()
        .zip(parts)
        .zip(dists)
        .zip(content)
        .map(|(((name, (ty, body, _)), dist), content_of)| Built {
            name: name.clone(),
            ty,
            dist: dist.expect("every distribution is built above"),
            body,
            content_of,
        })
        .collect())
}

/// The name whose values generator `name` makes: its own, or the one `values_of` names (which
/// must exist and make the same type).
fn content_of(
    name: &str,
    spec: &GeneratorSpec,
    ty: &CqlType,
    specs: &BTreeMap<String, GeneratorSpec>,
    parts: &[(CqlType, Body, Option<Dist>)],
) -> Result<String, GenError> {
    let cx = Ctx { generator: name, field_prefix: "" };
    let Some(other) = spec.values_of.as_deref().map(str::trim) else { return Ok(name.to_string()) };
    let Some(j) = specs.keys().position(|k| k == other) else {
        return Err(cx.err("values_of", format!("no generator named \"{other}\"{}", hint(other, specs.keys()))));
    };
    if parts[j].0 != *ty {
        return Err(cx.err("values_of", format!("\"{other}\" makes {}, this generator {ty}; give both the same type", parts[j].0)));
    }
    // follow a chain to the name whose content both make
    match specs[other].values_of.as_deref() {
        Some(next) if next.trim() != other => content_of(other, &specs[other], ty, specs, parts),
        _ => Ok(other.to_string()),
    }
}

/// A `latest` generator: checks that `follows` names a sequence whose values fit this
/// generator's type, and that `min` (default: the sequence's) does not leave the sequence's range.
fn latest(
    name: &str,
    spec: &GeneratorSpec,
    ty: &CqlType,
    specs: &BTreeMap<String, GeneratorSpec>,
    parts: &[(CqlType, Body, Option<Dist>)],
) -> Result<Dist, GenError> {
    let cx = Ctx { generator: name, field_prefix: "" };
    let follows = spec.follows.as_deref().unwrap_or_default().trim();
    let Some(j) = specs.keys().position(|k| k == follows) else {
        let sugg = hint(follows, specs.keys());
        return Err(cx.err("follows", format!("no generator named \"{follows}\"{sugg}")));
    };
    let Some(seq) = parts[j].2.as_ref().and_then(Dist::as_sequence) else {
        let its = specs[follows].dist.as_deref().unwrap_or("uniform");
        return Err(cx.err("follows", format!("\"{follows}\" has dist {its}; latest must follow a generator with dist sequence")));
    };
    let (seq_min, seq_span) = (seq.min, seq.span);
    let base = match cx.int("min", spec.min.as_ref())? {
        None => seq_min,
        Some(m) if m > seq_min => {
            let fix = "latest reads from min up to the sequence's last value";
            return Err(cx.err("min", format!("{m} is above the start of \"{follows}\" ({seq_min}); {fix}")));
        }
        Some(m) if m < seq_min && seq_span.is_some() => {
            return Err(cx.err("min", format!("\"{follows}\" wraps at its max, so latest cannot read below its min ({seq_min}); remove `min`")));
        }
        Some(m) => m,
    };
    let dom = Domain::of_type(if ty.is_composite() { &CqlType::BigInt } else { ty });
    let top = seq_span.map_or(i64::MAX as i128, |s| seq_min as i128 + s as i128 - 1);
    if (base as i128) < dom.lowest as i128 || top > dom.highest as i128 {
        return Err(cx.err("follows", format!("\"{follows}\" counts beyond what {ty} holds; give it a `max` that fits")));
    }
    Ok(Dist::latest(seq, base, Params::of_generator(spec).theta(&cx)?))
}

/// Type, body and (except for `latest`, built later) distribution of one generator.
fn build_one(name: &str, spec: &GeneratorSpec) -> Result<(CqlType, Body, Option<Dist>), GenError> {
    let cx = Ctx { generator: name, field_prefix: "" };
    let (ty, udt_fields) = type_of(name, spec, &cx)?;
    check_fields_apply(spec, &ty, &cx)?;
    let body = listed_values(spec, &ty, body_of(name, spec, &ty, udt_fields, &cx)?, &cx)?;
    let dist = dist_of(spec, &ty, &cx)?;
    Ok((ty, body, dist))
}

/// `values: [...]`: the generator's values are these literals (of a simple type) instead of
/// `body`'s.
fn listed_values(spec: &GeneratorSpec, ty: &CqlType, body: Body, cx: &Ctx) -> Result<Body, GenError> {
    Ok(match &spec.values {
        None => body,
        Some(_) if ty.is_composite() => return Err(cx.err("values", format!("lists values of simple types, not {ty}"))),
        Some(items) if items.is_empty() => return Err(cx.err("values", "list at least one value")),
        Some(items) => {
            let parsed: Result<Vec<_>, _> =
                items.iter().enumerate().map(|(i, v)| super::values::literal(ty, v).map_err(|m| cx.err(&format!("values[{i}]"), m))).collect();
            Body::Values(parsed?.into())
        }
    })
}

/// A user-defined type's fields and how each looks.
type UdtFields = Vec<(String, Simple)>;

/// The generator's CQL type; for a user-defined type, also its fields' looks.
fn type_of(name: &str, spec: &GeneratorSpec, cx: &Ctx) -> Result<(CqlType, Option<UdtFields>), GenError> {
    Ok(match (CqlType::parse(&spec.cql_type), &spec.fields, CqlType::udt_name(&spec.cql_type)) {
        (Err(_), Some(fields), Some((udt, frozen))) => {
            let fields = udt_fields(fields, name)?;
            let types = fields.iter().map(|(f, s)| (f.clone(), s.ty.clone())).collect();
            (CqlType::Udt { name: udt, fields: types, frozen }, Some(fields))
        }
        (Ok(t), _, _) => (t, None),
        (Err(m), None, Some(_)) => {
            return Err(cx.err("type", format!("{m}; a user-defined type needs `fields:`, e.g. `fields: {{ street: {{ type: text }} }}`")))
        }
        (Err(m), _, _) => return Err(cx.err("type", m)),
    })
}

/// Rejects the fields that would have no effect on a generator of type `ty`.
fn check_fields_apply(spec: &GeneratorSpec, ty: &CqlType, cx: &Ctx) -> Result<(), GenError> {
    let is = |ok: bool, field: &str, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(cx.err(field, format!("applies to {what}, not to {ty}")))
        }
    };
    let timed = matches!(ty, CqlType::Timestamp | CqlType::TimeUuid | CqlType::Date | CqlType::Time | CqlType::Duration);
    if spec.prefix.is_some() {
        is(*ty == CqlType::Text, "prefix", "text (for text elements use `element: { prefix: ... }`)")?;
    }
    if spec.size.is_some() {
        is(matches!(ty, CqlType::Text | CqlType::Blob) || ty.is_collection(), "size", "text, blob and collections")?;
    }
    if spec.start.is_some() {
        is(timed, "start", "timestamp, timeuuid, date, time and duration")?;
    }
    if spec.step_ms.is_some() {
        is(timed, "step_ms", "timestamp, timeuuid, date, time and duration")?;
    }
    if spec.fields.is_some() {
        is(matches!(ty, CqlType::Udt { .. }), "fields", "user-defined types (`type: address` with the type's name)")?;
    }
    if spec.element.is_some() {
        is(matches!(ty, CqlType::List { .. } | CqlType::Set { .. }), "element", "lists and sets (maps take `key:` and `value:`)")?;
    }
    if spec.key.is_some() {
        is(matches!(ty, CqlType::Map { .. }), "key", "maps")?;
    }
    if spec.vector.is_some() {
        is(matches!(ty, CqlType::Vector { .. }), "vector", "vector<float, N>")?;
        if spec.values_of.is_some() {
            return Err(cx.err("vector", "a generator with `values_of` makes the vectors of the one it names; remove `vector:`"));
        }
    }
    if spec.value.is_some() {
        is(matches!(ty, CqlType::Map { .. }), "value", "maps")?;
    }
    Ok(())
}

/// How the values of generator `name` (of type `ty`) look.
fn body_of(name: &str, spec: &GeneratorSpec, ty: &CqlType, udt_fields: Option<Vec<(String, Simple)>>, cx: &Ctx) -> Result<Body, GenError> {
    Ok(match ty {
        CqlType::List { element, .. } | CqlType::Set { element, .. } => {
            let size = collection_size(spec.size.as_ref(), cx)?;
            let element = element_body(element, spec.element.as_ref(), "element.", name)?;
            if matches!(ty, CqlType::List { .. }) {
                Body::List { size, element }
            } else {
                Body::Set { size, element }
            }
        }
        CqlType::Map { key, value, .. } => Body::Map {
            size: collection_size(spec.size.as_ref(), cx)?,
            key: element_body(key, spec.key.as_ref(), "key.", name)?,
            value: element_body(value, spec.value.as_ref(), "value.", name)?,
        },
        CqlType::Vector { dims } => Body::Vector(std::sync::Arc::new(vector_body(spec.vector.as_ref(), *dims as usize, name)?)),
        CqlType::Tuple(elements) => Body::Tuple(elements.iter().map(|t| element_body(t, None, "type.", name)).collect::<Result<_, _>>()?),
        CqlType::Udt { name: udt, .. } => Body::Udt { keyspace: String::new(), name: udt.clone(), fields: udt_fields.unwrap_or_default() },
        simple => {
            let start_ms = match &spec.start {
                None => default_start_ms(simple),
                Some(Scalar::Text(t)) => parse_start_ms(t).map_err(|m| cx.err("start", m))?,
                Some(other) => other.as_i64().map_err(|m| cx.err("start", m))?,
            };
            Body::Simple(Simple {
                ty: simple.clone(),
                prefix: spec.prefix.clone().unwrap_or_default(),
                size: size(spec.size.as_ref(), MAX_SIZE, &Ctx { generator: name, field_prefix: "size" })?,
                start_ms,
                step_ms: cx.int("step_ms", spec.step_ms.as_ref())?.unwrap_or_else(|| default_step_ms(simple)),
            })
        }
    })
}

/// How a `vector<float, dims>` generator makes its values, from its `vector:` spec.
fn vector_body(spec: Option<&VectorSpec>, dims: usize, generator: &str) -> Result<VectorBody, GenError> {
    let cx = Ctx { generator, field_prefix: "vector." };
    let spec = spec.cloned().unwrap_or_default();
    let normalize = spec.normalize.as_ref().map(|b| b.as_bool().map_err(|m| cx.err("normalize", m))).transpose()?.unwrap_or(false);
    let kind =
        spec.kind.as_deref().map(|k| k.trim().to_ascii_lowercase()).unwrap_or_else(|| if spec.file.is_some() { "file".into() } else { "gaussian".into() });
    let only = |field: &str, present: bool, applies: &str| if present { Err(cx.err(field, format!("applies to kind {applies}, not {kind}"))) } else { Ok(()) };
    if kind != "clustered" {
        only("centroids", spec.centroids.is_some(), "clustered")?;
        only("spread", spec.spread.is_some(), "clustered")?;
    }
    if kind != "file" {
        only("file", spec.file.is_some(), "file")?;
        only("rows", spec.rows.is_some(), "file")?;
    }
    let kind = match kind.as_str() {
        "gaussian" => VectorKind::Gaussian,
        "clustered" => {
            let centroids = cx.int("centroids", spec.centroids.as_ref())?.unwrap_or(100);
            if !(1..=1_000_000).contains(&centroids) {
                return Err(cx.err("centroids", format!("must be between 1 and 1000000, got {centroids}")));
            }
            let spread = cx.float("spread", spec.spread.as_ref())?.unwrap_or(0.2);
            if spread.is_nan() || spread < 0.0 {
                return Err(cx.err("spread", format!("must be 0 or more (the standard deviation around a centre), got {spread}")));
            }
            VectorKind::Clustered { centroids: centroids as usize, spread: spread as f32 }
        }
        "file" => {
            let path = spec.file.as_deref().ok_or_else(|| cx.err("file", "kind file needs `file:`, a .fvecs, .npy or .csv file of vectors"))?;
            let read = super::vector_file::read_vectors(std::path::Path::new(path)).map_err(|m| cx.err("file", m))?;
            if read.dims != dims {
                return Err(cx.err("file", format!("{path} holds vectors of {} dimensions, the type {dims}", read.dims)));
            }
            let (first, end) = match spec.rows.as_deref() {
                None => (0, read.rows()),
                Some(r) => rows_range(r, read.rows()).map_err(|m| cx.err("rows", m))?,
            };
            VectorKind::File { rows: read.values[first * dims..end * dims].into() }
        }
        other => return Err(cx.err("kind", format!("unknown kind \"{other}\"{}", hint(other, VECTOR_KINDS.iter())))),
    };
    Ok(VectorBody::new(dims, kind, normalize))
}

/// `FIRST..END` of a file of `rows` rows.
fn rows_range(text: &str, rows: usize) -> Result<(usize, usize), String> {
    let (a, b) = text.split_once("..").ok_or_else(|| format!("write FIRST..END, e.g. 0..{rows}, not \"{text}\""))?;
    let parse = |s: &str| s.trim().parse::<usize>().map_err(|_| format!("\"{}\" is not a row number", s.trim()));
    let (first, end) = (parse(a)?, parse(b)?);
    if first >= end || end > rows {
        return Err(format!("{first}..{end} is not a range of rows within the file's {rows}"));
    }
    Ok((first, end))
}

/// The distribution of `n`; `None` for `latest`, which is built once the sequence it follows is.
fn dist_of(spec: &GeneratorSpec, ty: &CqlType, cx: &Ctx) -> Result<Option<Dist>, GenError> {
    let params = Params::of_generator(spec);
    if params.name(cx)? == "latest" {
        params.check_applicable("latest", cx)?;
        params.theta(cx)?;
        if spec.follows.as_deref().is_none_or(|f| f.trim().is_empty()) {
            return Err(cx.err("follows", "dist latest needs `follows: <name of a sequence generator>`"));
        }
        if spec.max.is_some() {
            return Err(cx.err("max", "dist latest reads up to the last value of the sequence it follows; remove `max`"));
        }
        return Ok(None);
    }
    if spec.follows.is_some() {
        return Err(cx.err("follows", "applies to dist latest only"));
    }
    let domain = Domain::of_type(if ty.is_composite() { &CqlType::BigInt } else { ty });
    Ok(Some(Dist::build(&params, &domain, cx)?))
}

/// A size from `size:`: a count checked against `max`, or a distribution over [0, max].
/// `cx.field_prefix` names the field (`size`, `element.size`).
fn size(spec: Option<&SizeSpec>, max: i64, cx: &Ctx) -> Result<Option<Size>, GenError> {
    let field = cx.field_prefix;
    let top = Ctx { generator: cx.generator, field_prefix: "" };
    match spec {
        None => Ok(None),
        Some(SizeSpec::Fixed(s)) => {
            let n = s.as_i64().map_err(|m| top.err(field, m))?;
            if !(0..=max).contains(&n) {
                return Err(top.err(field, format!("must be between 0 and {max}, got {n}")));
            }
            Ok(Some(Size::Fixed(n as usize)))
        }
        Some(SizeSpec::Dist(d)) => {
            let prefix = format!("{field}.");
            let sub = Ctx { generator: cx.generator, field_prefix: &prefix };
            let dist = Dist::build(&Params::of_size(d), &Domain::size(max), &sub)?;
            Ok(Some(Size::Drawn(Box::new(dist))))
        }
    }
}

/// A count written like a size (`field` names it in errors): a number (`Ok`) or a distribution
/// over `0..=max` (`Err`), for settings that count things (rows, partitions) rather than make
/// values.
pub(super) fn count_dist(spec: &SizeSpec, field: &str, max: i64) -> Result<Result<usize, Dist>, GenError> {
    let cx = Ctx { generator: "", field_prefix: field };
    Ok(match size(Some(spec), max, &cx)? {
        Some(Size::Drawn(d)) => Err(*d),
        Some(Size::Fixed(n)) => Ok(n),
        None => Ok(0),
    })
}

fn collection_size(spec: Option<&SizeSpec>, cx: &Ctx) -> Result<Size, GenError> {
    size(spec, MAX_ELEMENTS, &Ctx { generator: cx.generator, field_prefix: "size" })?
        .ok_or_else(|| cx.err("size", "collections need `size`: a number of elements or e.g. { dist: uniform, min: 1, max: 10 }"))
}

/// How elements (or map keys or values) of type `ty` look; `field` is `element.`, `key.`, `value.`.
fn element_body(ty: &CqlType, spec: Option<&ElementSpec>, field: &str, generator: &str) -> Result<Simple, GenError> {
    let cx = Ctx { generator, field_prefix: field };
    let spec = spec.cloned().unwrap_or_default();
    if spec.prefix.is_some() && *ty != CqlType::Text {
        return Err(cx.err("prefix", format!("applies to text elements, not to {ty}")));
    }
    if spec.size.is_some() && !matches!(ty, CqlType::Text | CqlType::Blob) {
        return Err(cx.err("size", format!("applies to text and blob elements, not to {ty}")));
    }
    let size_field = format!("{field}size");
    Ok(Simple {
        ty: ty.clone(),
        prefix: spec.prefix.unwrap_or_default(),
        size: size(spec.size.as_ref(), MAX_SIZE, &Ctx { generator, field_prefix: &size_field })?,
        start_ms: default_start_ms(ty),
        step_ms: default_step_ms(ty),
    })
}

/// The fields of a user-defined type, each a simple type with the look of a collection element.
fn udt_fields(fields: &BTreeMap<String, FieldSpec>, generator: &str) -> Result<Vec<(String, Simple)>, GenError> {
    if fields.is_empty() {
        return Err(GenError { generator: generator.to_string(), field: Some("fields".into()), message: "name at least one field of the type".into() });
    }
    let mut out = Vec::with_capacity(fields.len());
    for (f, spec) in fields {
        let prefix = format!("fields.{f}.");
        let cx = Ctx { generator, field_prefix: &prefix };
        let ty = CqlType::parse(&spec.cql_type).map_err(|m| cx.err("type", m))?;
        if ty.is_composite() || ty == CqlType::Counter {
            return Err(cx.err("type", format!("a field here is a simple type, not {ty}")));
        }
        let look = ElementSpec { size: spec.size.clone(), prefix: spec.prefix.clone() };
        out.push((f.to_ascii_lowercase(), element_body(&ty, Some(&look), &prefix, generator)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::GeneratorSet;
    use super::*;

    fn error(yaml: &str) -> GenError {
        let specs: BTreeMap<String, GeneratorSpec> = crate::yaml::from_str(yaml).unwrap();
        GeneratorSet::build(&specs).expect_err("the spec should be rejected")
    }

    #[test]
    fn every_mistake_names_generator_field_and_fix() {
        let cases: &[(&str, &str, &str)] = &[
            // (specs, field, part of the message); the faulty generator is always "g".
            ("g: { type: text, dist: zipfain }", "dist", "unknown distribution \"zipfain\"; did you mean \"zipfian\"?"),
            ("g: { type: text, dist: poisson }", "dist", "(known: sequence, uniform, zipfian, latest, hotspot, gaussian, exponential, weibull)"),
            ("g: { type: bigitn }", "type", "did you mean \"bigint\"?"),
            ("g: { type: floot }", "type", "did you mean \"float\"?"),
            ("g: { type: address }", "type", "a user-defined type needs `fields:`"),
            ("g: { type: address, fields: { zip: { type: \"list<int>\" } } }", "fields.zip.type", "a simple type"),
            ("g: { type: int, fields: { zip: { type: int } } }", "fields", "applies to user-defined types"),
            ("g: { type: smallint, max: 40000 }", "max", "too large: at most 32768"),
            ("g: { type: uuid, values_of: kee }\nkey: { type: uuid }", "values_of", "no generator named \"kee\"; did you mean \"key\"?"),
            ("g: { type: uuid, values_of: k }\nk: { type: text }", "values_of", "\"k\" makes text, this generator uuid"),
            ("g: { type: \"list<list<int>>\", size: 1 }", "type", "nested collections"),
            ("g: { type: bigint, min: 10, max: 10 }", "max", "min (10) must be below max (10)"),
            ("g: { type: bigint, dist: zipfian, min: 5, max: 1 }", "max", "must be below max"),
            ("g: { type: double, dist: gaussian, stddev: 1, min: 5, max: 1 }", "max", "must be below max"),
            ("g: { type: bigint, dist: zipfian, theta: 1 }", "theta", "must be in (0, 1)"),
            ("g: { type: bigint, dist: zipfian, theta: 0 }", "theta", "must be in (0, 1)"),
            ("g: { type: bigint, dist: zipfian, theta: \"1.5\" }", "theta", "must be in (0, 1)"),
            ("g: { type: bigint, dist: zipfian, theta: high }", "theta", "expected a number, got \"high\""),
            ("g: { type: bigint, theta: 0.9 }", "theta", "applies to dist zipfian or latest, not uniform (the default)"),
            ("g: { type: bigint, dist: hotspot, scrambled: false }", "scrambled", "applies to dist zipfian"),
            ("g: { type: bigint, dist: zipfian, scrambled: maybe }", "scrambled", "expected true or false"),
            ("g: { type: bigint, dist: latest }", "follows", "needs `follows:"),
            ("g: { type: bigint, dist: latest, follows: s, max: 3 }\ns: { type: bigint, dist: sequence }", "max", "remove `max`"),
            ("g: { type: bigint, dist: latest, follows: s, min: 3 }\ns: { type: bigint, dist: sequence }", "min", "above the start of \"s\" (0)"),
            ("g: { type: bigint, dist: latest, follows: s, min: 3 }\ns: { type: bigint, dist: sequence, min: 5, max: 9 }", "min", "wraps at its max"),
            ("g: { type: int, dist: latest, follows: s }\ns: { type: bigint, dist: sequence }", "follows", "counts beyond what int holds"),
            (
                "new_key: { type: bigint, dist: sequence }\ng: { type: bigint, dist: latest, follows: new_kye }",
                "follows",
                "no generator named \"new_kye\"; did you mean \"new_key\"?",
            ),
            (
                "u: { type: bigint }\ng: { type: bigint, dist: latest, follows: u }",
                "follows",
                "\"u\" has dist uniform; latest must follow a generator with dist sequence",
            ),
            ("g: { type: bigint, dist: latest, follows: h }\nh: { type: bigint, dist: latest, follows: g }", "follows", "has dist latest"),
            ("g: { type: bigint, dist: latest, follows: s, theta: 1 }\ns: { type: bigint, dist: sequence }", "theta", "must be in (0, 1)"),
            ("g: { type: bigint, follows: s }\ns: { type: bigint, dist: sequence }", "follows", "applies to dist latest only"),
            ("g: { type: bigint, dist: hotspot, hot_fraction: 1.0 }", "hot_fraction", "must be in (0, 1)"),
            ("g: { type: bigint, dist: hotspot, hot_ops: 0 }", "hot_ops", "must be in (0, 1)"),
            ("g: { type: bigint, dist: uniform, hot_ops: 0.5 }", "hot_ops", "applies to dist hotspot"),
            ("g: { type: double, dist: gaussian, mean: 3 }", "stddev", "needs `stddev`"),
            ("g: { type: double, dist: gaussian, stddev: 0 }", "stddev", "must be > 0"),
            ("g: { type: int, max: 2147483649 }", "max", "too large: at most 2147483648"),
            ("g: { type: int, min: -2147483649, max: 0 }", "min", "below the lowest allowed value"),
            ("g: { type: int, dist: sequence, min: abc }", "min", "expected an integer, got \"abc\""),
            ("g: { type: bigint, max: 1.5 }", "max", "expected an integer"),
            ("g: { type: text, size: -1 }", "size", "must be between 0 and"),
            ("g: { type: blob, size: 1000000000 }", "size", "must be between 0 and"),
            ("g: { type: blob, size: { dist: uniform, min: -1, max: 10 } }", "size.min", "below the lowest allowed value (0)"),
            ("g: { type: blob, size: { dist: uniform, min: 1 } }", "size.max", "needs `max`"),
            ("g: { type: blob, size: { dist: sequence, max: 9 } }", "size.dist", "cannot be used here"),
            ("g: { type: blob, size: { dist: gaussian, mean: 9 } }", "size.stddev", "needs `stddev`"),
            ("g: { type: \"list<int>\" }", "size", "collections need `size`"),
            ("g: { type: \"list<int>\", size: 200000 }", "size", "between 0 and 100000"),
            ("g: { type: int, prefix: k }", "prefix", "applies to text"),
            ("g: { type: int, size: 3 }", "size", "applies to text, blob and collections"),
            ("g: { type: text, start: 0 }", "start", "applies to timestamp, timeuuid, date"),
            ("g: { type: uuid, step_ms: 10 }", "step_ms", "applies to timestamp, timeuuid, date"),
            ("g: { type: timestamp, start: \"2026-02-30T00:00:00Z\" }", "start", "like \"2026-01-01T00:00:00Z\""),
            ("g: { type: timestamp, step_ms: fast }", "step_ms", "expected an integer"),
            ("g: { type: text, element: { size: 1 } }", "element", "applies to lists and sets"),
            ("g: { type: \"map<int, int>\", size: 1, element: { size: 1 } }", "element", "maps take `key:` and `value:`"),
            ("g: { type: \"list<int>\", size: 1, key: { size: 1 } }", "key", "applies to maps"),
            ("g: { type: \"set<int>\", size: 1, value: { size: 1 } }", "value", "applies to maps"),
            ("g: { type: \"list<int>\", size: 1, element: { prefix: x } }", "element.prefix", "applies to text elements"),
            ("g: { type: \"map<text, int>\", size: 1, value: { size: 4 } }", "value.size", "applies to text and blob"),
            ("g: { type: \"map<text, int>\", size: 1, key: { size: -4 } }", "key.size", "between 0 and"),
            ("g: { type: \"set<text>\", size: 1, element: { size: { max: 5, dist: zipfain } } }", "element.size.dist", "did you mean \"zipfian\"?"),
            ("g: { type: \"vector<float, 4>\", vector: { kind: clusterd } }", "vector.kind", "did you mean \"clustered\"?"),
            ("g: { type: \"vector<float, 4>\", vector: { centroids: 5 } }", "vector.centroids", "applies to kind clustered, not gaussian"),
            ("g: { type: \"vector<float, 4>\", vector: { kind: clustered, centroids: 0 } }", "vector.centroids", "between 1 and"),
            ("g: { type: \"vector<float, 4>\", vector: { kind: clustered, spread: -1 } }", "vector.spread", "must be 0 or more"),
            ("g: { type: \"vector<float, 4>\", vector: { kind: file } }", "vector.file", "needs `file:`"),
            ("g: { type: \"vector<float, 4>\", vector: { file: /nonexistent.npy } }", "vector.file", "cannot read /nonexistent.npy"),
            ("g: { type: \"vector<float, 4>\", vector: { normalize: maybe } }", "vector.normalize", "expected true or false"),
            ("g: { type: int, vector: { kind: gaussian } }", "vector", "applies to vector<float, N>"),
            ("g: { type: \"vector<float, 4>\", values_of: h, vector: {} }\nh: { type: \"vector<float, 4>\" }", "vector", "remove `vector:`"),
            ("g: { type: \"vector<float, 4>\", size: 4 }", "size", "applies to text, blob and collections"),
            ("g: { type: \"vector<double, 4>\" }", "type", "vectors of float"),
        ];
        for (yaml, field, message) in cases {
            let e = error(yaml);
            assert_eq!(e.generator, "g", "{yaml}: {e}");
            assert_eq!(e.field.as_deref(), Some(*field), "{yaml}: {e}");
            assert!(e.message.contains(message), "{yaml}: got \"{}\", expected it to contain \"{message}\"", e.message);
        }
    }

    #[test]
    fn valid_edge_cases_build() {
        for yaml in [
            "g: { type: int, min: -2147483648, max: 2147483648 }",
            "g: { type: int, dist: gaussian, mean: 0, stddev: 1e12 }",
            "g: { type: bigint, min: -9223372036854775808, max: 9223372036854775807 }",
            "g: { type: bigint, dist: zipfian, max: 4611686018427387904 }",
            "g: { type: text, size: 0 }",
            "g: { type: blob, size: { dist: gaussian, mean: 100, stddev: 10 } }",
            "g: { type: \"map<text, blob>\", size: 3, key: { prefix: k }, value: { size: 4 } }",
            "g: { type: timestamp, start: 1767225600000, step_ms: \"-1\" }",
            "g: { type: timeuuid, dist: sequence, start: \"2026-01-01\" }",
            "g: { type: bigint, dist: \" Zipfian \", scrambled: \"false\" }",
            // As in ycsb-d.yaml: reads reach below the sequence's start, into the loaded keys.
            "n: { type: text, prefix: user, dist: sequence, min: \"1000\" }\ng: { type: text, prefix: user, dist: latest, follows: n, min: 0, theta: \"0.99\" }",
            "n: { type: int, dist: sequence, min: 5, max: 9 }\ng: { type: int, dist: latest, follows: n, min: 5 }",
            "n: { type: int, dist: sequence }\ng: { type: \"list<int>\", size: 2, dist: latest, follows: n }",
        ] {
            let specs: BTreeMap<String, GeneratorSpec> = crate::yaml::from_str(yaml).unwrap();
            if let Err(e) = GeneratorSet::build(&specs) {
                panic!("{yaml}: {e}");
            }
        }
    }
}
