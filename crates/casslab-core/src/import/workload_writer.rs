//! Writing a workload file as text, line by line, so that each line can carry the comment
//! that says how its meaning differs from the source it was imported from. Only the few YAML
//! forms the importers need: scalars quoted when they must be, and one-line CQL.

/// A workload file being written.
#[derive(Default)]
pub(crate) struct Yaml {
    text: String,
}

impl Yaml {
    /// `indent` spaces, `body`, and `  # comment` when there is one.
    pub(crate) fn line(&mut self, indent: usize, body: &str, comment: Option<&str>) {
        self.text.push_str(&" ".repeat(indent));
        self.text.push_str(body);
        if let Some(c) = comment.filter(|c| !c.is_empty()) {
            self.text.push_str("   # ");
            self.text.push_str(&c.replace('\n', " "));
        }
        self.text.push('\n');
    }

    /// A comment on a line of its own.
    pub(crate) fn comment(&mut self, indent: usize, text: &str) {
        for l in text.lines() {
            self.line(indent, &format!("# {l}"), None);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Text written elsewhere, as is.
    pub(crate) fn raw(&mut self, text: &str) {
        self.text.push_str(text);
    }

    pub(crate) fn finish(self) -> String {
        self.text
    }
}

/// A string as a YAML double-quoted scalar.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// CQL on one line: whitespace runs collapsed, no trailing `;`.
pub(crate) fn one_line(cql: &str) -> String {
    let s = cql.split_whitespace().collect::<Vec<_>>().join(" ");
    s.trim_end_matches(';').trim().to_string()
}

/// A name usable as a generator or operation name: lower case letters, digits and `_`.
pub(crate) fn ident(s: &str) -> String {
    let t: String = s.trim_matches('"').chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    if t.is_empty() {
        "x".into()
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_and_lines() {
        assert_eq!(quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(one_line("SELECT *\n   FROM t ;"), "SELECT * FROM t");
        assert_eq!(ident("\"UserName\""), "username");
        let mut y = Yaml::default();
        y.line(2, "a: 1", Some("why"));
        y.comment(0, "two\nlines");
        assert_eq!(y.finish(), "  a: 1   # why\n# two\n# lines\n");
    }
}
