//! The EXAMPLES and ENVIRONMENT sections of each command's help, kept as text in `help.txt`
//! apart from the flag definitions in `cli/`, so both stay readable. `-h` shows a command's
//! first few examples between its usage and its options (each option with one line), `--help`
//! every example there and each option's full text; the environment comes after the options
//! in both. Plain text; clap prints it as is, and `cli::command` attaches it.

/// One command's help beyond its flags.
pub struct Page {
    /// The command it belongs to (`""`: casslab itself).
    pub command: &'static str,
    /// Examples, one a line, the most useful first (a line ending in `\` goes on in the next).
    pub examples: Vec<&'static str>,
    /// How many of the examples `-h` shows.
    pub short: usize,
    /// The ENVIRONMENT section (and any closing words), or nothing.
    pub environment: &'static str,
}

impl Page {
    /// The EXAMPLES section: every example under `--help`, the first few under `-h`.
    pub fn examples(&self, all: bool) -> String {
        let shown = if all { &self.examples[..] } else { &self.examples[..self.short.min(self.examples.len())] };
        format!("EXAMPLES:\n  {}", shown.join("\n  "))
    }
}

/// The pages, as `help.txt` gives them (its first lines say how it is written).
const TEXT: &str = include_str!("../help.txt");

/// Every command's page, read from `help.txt`. A command without one has no examples (a test
/// says which have).
pub fn pages() -> Vec<Page> {
    let mut pages = Vec::new();
    for block in TEXT.split("\n== ").skip(1) {
        let (head, body) = block.split_once('\n').unwrap_or((block, ""));
        let (command, short) = head.rsplit_once(' ').expect("help.txt: a page starts with `== COMMAND N`");
        let (examples, environment) = body.split_once("\n--\n").unwrap_or((body, ""));
        pages.push(Page {
            command: if command == "casslab" { "" } else { command },
            examples: examples.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).collect(),
            short: short.parse().expect("help.txt: N of `== COMMAND N` is a count"),
            environment: environment.trim_end(),
        });
    }
    pages
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_page_of_help_txt_reads() {
        let pages = super::pages();
        assert_eq!(pages[0].command, "", "casslab's own page comes first");
        assert!(pages.len() >= 15, "{} pages", pages.len());
        for p in &pages {
            assert!(!p.examples.is_empty() && p.short <= p.examples.len(), "{}: {} examples, -h shows {}", p.command, p.examples.len(), p.short);
            assert!(p.examples.iter().all(|e| e.starts_with("casslab ") || e.starts_with("  ")), "{}: {:?}", p.command, p.examples);
            assert!(p.environment.is_empty() || p.environment.starts_with("ENVIRONMENT:"), "{}: {}", p.command, p.environment);
        }
        let mut names: Vec<&str> = pages.iter().map(|p| p.command).collect();
        names.dedup();
        assert_eq!(names.len(), pages.len(), "one page per command");
    }
}
