//! Which column each `?` of a statement stands for: the columns of an `INSERT`'s list by
//! position, and elsewhere the column the marker is compared with or assigned to
//! (`k = ?`, `ck >= ?`, `s = s + ?`, `v IN ?`, `IF v = ?`), or the clause it fills (`LIMIT ?`,
//! `USING TTL ?`, `USING TIMESTAMP ?`). The importers bind a generator to each.

/// What one `?` stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Marker {
    Column(String),
    /// `col IN ?`: a list of the column's values.
    InList(String),
    /// `token(k…) > ?`
    Token,
    Limit,
    Ttl,
    Timestamp,
    Unknown,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    Sym(char),
    Mark,
    Other,
}

fn tokens(cql: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let cs: Vec<char> = cql.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' {
            i += 1;
            while i < cs.len() && !(cs[i] == '\'' && cs.get(i + 1) != Some(&'\'')) {
                i += if cs[i] == '\'' { 2 } else { 1 };
            }
            i += 1;
            out.push(Tok::Other);
        } else if c == '"' {
            let start = i + 1;
            i += 1;
            while i < cs.len() && cs[i] != '"' {
                i += 1;
            }
            out.push(Tok::Quoted(cs[start..i.min(cs.len())].iter().collect()));
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_' || cs[i] == '.') {
                i += 1;
            }
            out.push(Tok::Word(cs[start..i].iter().collect()));
        } else if c == '?' {
            out.push(Tok::Mark);
            i += 1;
        } else {
            out.push(Tok::Sym(c));
            i += 1;
        }
    }
    out
}

fn name(t: &Tok) -> Option<String> {
    match t {
        Tok::Word(w) => Some(w.rsplit('.').next().unwrap_or(w).to_ascii_lowercase()),
        Tok::Quoted(q) => Some(q.clone()),
        _ => None,
    }
}

/// The meaning of each `?` of `cql`, in order.
pub(crate) fn markers(cql: &str) -> Vec<Marker> {
    let toks = tokens(cql);
    let upper = |t: &Tok| match t {
        Tok::Word(w) => w.to_ascii_uppercase(),
        _ => String::new(),
    };
    // INSERT INTO t (a, b) VALUES (?, ?)
    let mut insert_cols: Vec<String> = Vec::new();
    let mut values_at = None;
    if toks.first().map(upper).as_deref() == Some("INSERT") {
        if let Some(open) = toks.iter().position(|t| *t == Tok::Sym('(')) {
            insert_cols = toks[open + 1..].iter().take_while(|t| **t != Tok::Sym(')')).filter_map(name).collect();
        }
        values_at = toks.iter().position(|t| upper(t) == "VALUES");
    }
    let mut out = Vec::new();
    let mut value_pos = 0;
    for (i, t) in toks.iter().enumerate() {
        if *t != Tok::Mark {
            if values_at.is_some_and(|v| i > v) && matches!(t, Tok::Sym(',')) && depth_in_values(&toks, values_at.unwrap(), i) == 1 {
                value_pos += 1;
            }
            continue;
        }
        if let Some(v) = values_at {
            if i > v && depth_in_values(&toks, v, i) == 1 && !after_values_list(&toks, v, i) {
                out.push(insert_cols.get(value_pos).cloned().map_or(Marker::Unknown, Marker::Column));
                continue;
            }
        }
        out.push(look_back(&toks[..i], &upper));
    }
    out
}

/// How deep in parentheses token `i` is, counting from the `VALUES` keyword at `v`.
fn depth_in_values(toks: &[Tok], v: usize, i: usize) -> i32 {
    toks[v..i].iter().fold(0, |d, t| match t {
        Tok::Sym('(') => d + 1,
        Tok::Sym(')') => d - 1,
        _ => d,
    })
}

/// Whether token `i` comes after the `VALUES (…)` list closed.
fn after_values_list(toks: &[Tok], v: usize, i: usize) -> bool {
    let mut d = 0;
    for t in &toks[v..i] {
        match t {
            Tok::Sym('(') => d += 1,
            Tok::Sym(')') => {
                d -= 1;
                if d == 0 {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

fn look_back(before: &[Tok], upper: &dyn Fn(&Tok) -> String) -> Marker {
    let mut in_list = false;
    let mut saw_paren = false;
    for t in before.iter().rev() {
        match t {
            Tok::Sym('=' | '<' | '>' | '!' | '+' | '-' | '[' | ']') => {}
            Tok::Sym(')') => saw_paren = true,
            Tok::Sym(_) | Tok::Mark | Tok::Other => return Marker::Unknown,
            Tok::Word(_) | Tok::Quoted(_) => {
                let u = upper(t);
                match u.as_str() {
                    "IN" => in_list = true,
                    "CONTAINS" | "KEY" => {}
                    "LIMIT" => return Marker::Limit,
                    "TTL" => return Marker::Ttl,
                    "TIMESTAMP" => return Marker::Timestamp,
                    _ if saw_paren => return Marker::Token,
                    _ => {
                        let n = name(t).unwrap_or_default();
                        return if in_list { Marker::InList(n) } else { Marker::Column(n) };
                    }
                }
            }
        }
    }
    Marker::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;
    use Marker::*;

    fn col(s: &str) -> Marker {
        Column(s.into())
    }

    #[test]
    fn markers_name_their_columns() {
        assert_eq!(markers("INSERT INTO ks.t (a, \"B\", c) VALUES (?, 'x', ?) USING TTL ?"), [col("a"), col("c"), Ttl]);
        assert_eq!(markers("select * from t where k = ? and ck >= ? and ck < ? LIMIT ?"), [col("k"), col("ck"), col("ck"), Limit]);
        assert_eq!(
            markers("UPDATE t USING TIMESTAMP ? SET s = s + ?, n = n - ?, m[?] = ? WHERE k = ? IF v = ?"),
            [Timestamp, col("s"), col("n"), col("m"), Unknown, col("k"), col("v")]
        );
        assert_eq!(markers("SELECT v FROM t WHERE k IN ? AND tags CONTAINS ?"), [InList("k".into()), col("tags")]);
        assert_eq!(markers("SELECT v FROM t WHERE token(k) > ? AND name = 'it''s' AND x = ?"), [Token, col("x")]);
    }
}
