//! The small units users write in workload files, experiment files, events and flags:
//! durations (`30s`, `1m30s`, `500ms`, or plain seconds) and points in time (Unix
//! milliseconds or RFC 3339 date-times), counts as cassandra-stress writes them (`10k`, `1M`),
//! and the clock and counts as people read them (now in Unix milliseconds, `1,234,567`). Each parser returns a typed error that says what to
//! write instead; callers add where (file:line, or the flag) it was written.

/// A duration that could not be read, or one longer than casslab reads
/// ([`crate::limits::MAX_DURATION_S`]).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    #[error("bad duration \"{text}\": write e.g. 30s, 500ms, 5m or 1h")]
    Bad { text: String },
    #[error("duration \"{text}\" is longer than a year (8784h), the longest casslab reads: give a shorter one")]
    TooLong { text: String },
}

/// A point in time that could not be read.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("expected Unix milliseconds or a date-time like \"2026-01-01T00:00:00Z\", got \"{text}\"")]
pub struct DateTimeError {
    pub text: String,
}

/// A count as cassandra-stress writes it (`n=`, `-pop seq=`): `12`, `10k`, `1M`, `2B`
/// (thousands, millions, billions); `None` when it is not a whole number.
pub fn parse_count(s: &str) -> Option<i64> {
    let t = s.trim().to_ascii_lowercase();
    let (digits, mult) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 1_000),
        'm' => (&t[..t.len() - 1], 1_000_000),
        'b' => (&t[..t.len() - 1], 1_000_000_000),
        _ => (t.as_str(), 1),
    };
    digits.trim().parse::<i64>().ok()?.checked_mul(mult)
}

/// A figure as written, `OP.METRIC`, split into the operation and the metric: the metric is
/// what follows the last dot, except `p99.9` (the name the tables print), which is one metric
/// (`read.p99.9` is `read` and `p99.9`). `None` without a dot.
pub fn split_figure(text: &str) -> Option<(&str, &str)> {
    let t = text.trim();
    match t.strip_suffix(".p99.9") {
        Some(op) => Some((op, "p99.9")),
        None => t.rsplit_once('.'),
    }
}

/// Parses `60s`, `1m`, `500ms`, `1h 30m` or a plain number of seconds, at most a year.
pub fn parse_duration_s(v: &str) -> Result<f64, DurationError> {
    let t = v.trim();
    let s = match t.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.is_finite() => x,
        _ => humantime::parse_duration(t).map(|d| d.as_secs_f64()).map_err(|_| DurationError::Bad { text: v.to_string() })?,
    };
    if s > crate::limits::MAX_DURATION_S {
        return Err(DurationError::TooLong { text: v.trim().to_string() });
    }
    Ok(s)
}

/// A `start:` value: Unix milliseconds, or an RFC 3339 date-time (`2026-01-01T00:00:00Z`,
/// optional fraction, `Z` or `±HH:MM`) or a bare date (`2026-01-01`, midnight UTC).
pub fn parse_start_ms(text: &str) -> Result<i64, DateTimeError> {
    let t = text.trim();
    if let Ok(ms) = t.parse::<i64>() {
        return Ok(ms);
    }
    parse_rfc3339_ms(t).ok_or_else(|| DateTimeError { text: text.to_string() })
}

/// RFC 3339 through jiff: a time with `Z` or an offset, or a bare date (midnight UTC).
fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Some(ts.as_millisecond());
    }
    // a bare date only: jiff's civil dates also accept a date-time without an offset
    if s.len() != 10 {
        return None;
    }
    let date = s.parse::<jiff::civil::Date>().ok()?;
    Some(jiff::tz::Offset::UTC.to_timestamp(date.to_datetime(jiff::civil::Time::midnight())).ok()?.as_millisecond())
}

/// `YYYY-MM-DD HH:MM:SS` in UTC from unix milliseconds (the milliseconds themselves beyond the
/// years ±9999).
pub fn utc(unix_ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(unix_ms) {
        Ok(t) => t.strftime("%Y-%m-%d %H:%M:%S").to_string(),
        Err(_) => format!("{unix_ms} ms"),
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn unix_now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// `1234567` as `1,234,567`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `100MB`, `1GB`, `512KB`, `1048576` (bytes) in bytes; units are powers of 1024 (`MiB` is
/// read as `MB`). `None` when it is not a positive size.
pub fn parse_size_bytes(v: &str) -> Option<u64> {
    let t = v.trim().to_ascii_uppercase().replace("IB", "B");
    let (num, mult) = [("GB", 1u64 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)]
        .iter()
        .find_map(|(u, m)| t.strip_suffix(u).map(|n| (n.trim().to_string(), *m)))
        .unwrap_or((t.clone(), 1));
    match num.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Some((x * mult as f64) as u64),
        _ => None,
    }
}

/// `5%`, `5` or `2.5 %` as a fraction (0.05); `None` unless it is a number above 0 and
/// below 1000 %.
pub fn parse_percent(v: &str) -> Option<f64> {
    match v.trim().trim_end_matches('%').trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1000.0 => Some(p / 100.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_in_powers_of_1024() {
        assert_eq!(parse_size_bytes("100MB"), Some(100 << 20));
        assert_eq!(parse_size_bytes("1 GiB"), Some(1 << 30));
        assert_eq!(parse_size_bytes("512kb"), Some(512 << 10));
        assert_eq!(parse_size_bytes("1048576"), Some(1 << 20));
        assert_eq!(parse_size_bytes("lots"), None);
        assert_eq!(parse_size_bytes("0MB"), None);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_s("30s").unwrap(), 30.0);
        assert_eq!(parse_duration_s("500ms").unwrap(), 0.5);
        assert_eq!(parse_duration_s("2m").unwrap(), 120.0);
        assert_eq!(parse_duration_s("1m30s").unwrap(), 90.0);
        assert_eq!(parse_duration_s("12").unwrap(), 12.0);
        assert!(parse_duration_s("-3").is_err());
        assert!(parse_duration_s("1e300").unwrap_err().to_string().contains("longer than a year"));
        assert!(parse_duration_s("1000000h").unwrap_err().to_string().contains("8784h"));
        assert_eq!(parse_duration_s("8784h").unwrap(), crate::limits::MAX_DURATION_S);
        let e = parse_duration_s("ten seconds").unwrap_err();
        assert_eq!(e.to_string(), "bad duration \"ten seconds\": write e.g. 30s, 500ms, 5m or 1h");
    }

    #[test]
    fn parses_start_dates() {
        const START_2020: i64 = 1_577_836_800_000;
        assert_eq!(parse_start_ms("2020-01-01T00:00:00Z"), Ok(START_2020));
        assert_eq!(parse_start_ms("2026-01-01T00:00:00Z"), Ok(1_767_225_600_000));
        assert_eq!(parse_start_ms("2026-01-01"), Ok(1_767_225_600_000));
        assert_eq!(parse_start_ms("2000-02-29T12:34:56.789Z"), Ok(951_827_696_789));
        assert_eq!(parse_start_ms("2000-02-29t12:34:56.7z"), Ok(951_827_696_700));
        assert_eq!(parse_start_ms("1969-12-31T23:59:59Z"), Ok(-1000));
        assert_eq!(parse_start_ms("2026-03-01T02:00:00+02:00"), Ok(1_772_323_200_000));
        assert_eq!(parse_start_ms(" 1767225600000 "), Ok(1_767_225_600_000));
        for bad in
            ["2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:00", "yesterday", "2026-01-01T00:00:00.Z", "é026-01-01"]
        {
            assert!(parse_start_ms(bad).unwrap_err().to_string().contains("2026-01-01T00:00:00Z"), "{bad} was accepted");
        }
    }
}
