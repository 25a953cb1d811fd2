//! The one trait of casslab's output formats, [`Format`]: a format's name, aliases, file
//! extensions and how it renders its input; [`Formats`], a table of them by what they render;
//! and [`ComparisonReport`], the input of a comparison's formats. The tables themselves are in
//! `format.rs`, apart, so a format's file imports the trait without importing every format.

use crate::analysis::recall::RecallComparison;
use crate::analysis::study::Study;
use crate::analysis::verified::VerifiedComparison;
use crate::judge::ServerSide;
use std::path::Path;

/// An output format of `In`: what `--format` calls it, the file extensions that ask for it,
/// and the document it makes.
pub trait Format<In: ?Sized>: Sync {
    /// Its name for `--format`.
    fn name(&self) -> &'static str;
    /// Other names `--format` takes for it (`markdown` for `md`).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// File extensions (lower case, without the dot) that ask for it.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }
    /// What a file of its renderings starts with when they are written one after the other
    /// (a stream's CSV header); nothing for a format whose rendering is a whole document.
    fn preamble(&self) -> String {
        String::new()
    }
    /// `input` as a document of this format.
    fn render(&self, input: &In) -> String;
}

/// The formats of one kind of input, the default first.
pub struct Formats<'f, In: ?Sized> {
    all: &'f [&'f dyn Format<In>],
}

impl<'f, In: ?Sized> Formats<'f, In> {
    pub const fn new(all: &'f [&'f dyn Format<In>]) -> Formats<'f, In> {
        Formats { all }
    }

    /// Every format, the default first.
    pub fn all(&self) -> &'f [&'f dyn Format<In>] {
        self.all
    }

    /// The one used when nothing asks for another.
    pub fn default_format(&self) -> &'f dyn Format<In> {
        self.all[0]
    }

    /// The format called `name` (or by one of its aliases), in any case.
    pub fn named(&self, name: &str) -> Option<&'f dyn Format<In>> {
        let is = |n: &str| n.eq_ignore_ascii_case(name.trim());
        self.all.iter().copied().find(|f| is(f.name()) || f.aliases().iter().any(|a| is(a)))
    }

    /// The format a file's extension asks for; `None` without a known one.
    pub fn for_path(&self, path: &Path) -> Option<&'f dyn Format<In>> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        self.all.iter().copied().find(|f| f.extensions().contains(&ext.as_str()))
    }

    /// The names `--format` takes, in order (`md`, not its aliases).
    pub fn names(&self) -> Vec<&'static str> {
        self.all.iter().map(|f| f.name()).collect()
    }
}

/// What a comparison of saved runs shows (`casslab compare`): the study, and beside it the
/// verified reads, the recall of vector searches and the servers' side, when the runs have them.
pub struct ComparisonReport<'a> {
    pub study: &'a Study,
    pub verified: Option<&'a VerifiedComparison>,
    pub recall: Option<&'a RecallComparison>,
    pub server: Option<&'a ServerSide>,
}
