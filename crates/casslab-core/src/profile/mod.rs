//! Where the servers (and the client) spend their time: profiles of stacks with weights, on the
//! run's clock. A [`Profile`] is one node's stacks of one [`ProfileKind`] (CPU samples,
//! allocated bytes, time blocked on locks and parks), each stack with its weight per second of
//! the run, so that a window of the run (the measured phase, a suspect interval, an event) has
//! its own profile. It owns the model and what is computed from it (folded stacks of a window,
//! several nodes merged, the top frames, the difference between two profiles per operation);
//! reading profiles is `jfr` (Java Flight Recorder files) and `folded` (the one-line-per-stack
//! text format other tools write and read), recording them on local nodes is `record`. It
//! neither draws (the report's `flame` does) nor saves (the store does).

pub mod client;
pub mod diff;
pub mod folded;
pub mod jfr;
pub mod record;
pub mod share;
pub mod top;
pub mod untrusted;

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

pub use crate::config::ProfileConfig;

/// Samples are kept per second of the run: the finest slice a report cuts.
pub const BUCKET_MS: i64 = 1000;

/// What a profile weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileKind {
    /// Where threads were running: one per execution sample.
    Cpu,
    /// Where memory was allocated: sampled bytes.
    Alloc,
    /// Where threads were blocked entering a monitor or parked (locks, queues, waits): ns.
    Lock,
}

impl ProfileKind {
    pub const ALL: [ProfileKind; 3] = [ProfileKind::Cpu, ProfileKind::Alloc, ProfileKind::Lock];

    pub fn as_str(self) -> &'static str {
        match self {
            ProfileKind::Cpu => "cpu",
            ProfileKind::Alloc => "alloc",
            ProfileKind::Lock => "lock",
        }
    }

    pub fn parse(s: &str) -> Option<ProfileKind> {
        ProfileKind::ALL.into_iter().find(|k| k.as_str() == s.trim().to_ascii_lowercase())
    }

    /// How a report titles it.
    pub fn title(self) -> &'static str {
        match self {
            ProfileKind::Cpu => "CPU",
            ProfileKind::Alloc => "allocation",
            ProfileKind::Lock => "locks and parks",
        }
    }

    /// The unit of its weights.
    pub fn unit(self) -> &'static str {
        match self {
            ProfileKind::Cpu => "samples",
            ProfileKind::Alloc => "bytes",
            ProfileKind::Lock => "ns",
        }
    }
}

/// A window of the run, in ms since the run's clock started: `[from_ms, to_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub from_ms: i64,
    pub to_ms: i64,
}

impl Window {
    /// Whether the second starting at `at_ms` overlaps the window.
    fn covers_bucket(self, at_ms: i64) -> bool {
        at_ms + BUCKET_MS > self.from_ms && at_ms < self.to_ms
    }
}

/// A stack's weight over one second of the run (`at_ms`, the second's start), or over the whole
/// profile when it has no time (`None`: folded stacks from elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileSample {
    #[serde(rename = "t")]
    pub at_ms: Option<i64>,
    #[serde(rename = "s")]
    pub stack: u32,
    #[serde(rename = "w")]
    pub weight: u64,
    /// The events (samples taken) behind the weight, for a profile whose weight is not a count
    /// (bytes, ns); 0 where unknown (profiles saved before it was kept).
    #[serde(rename = "n", default, skip_serializing_if = "is_zero")]
    pub events: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One node's profile of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// The node's address (as the server view names nodes), or `client` for casslab itself.
    pub node: String,
    pub kind: ProfileKind,
    /// Where it came from, for people: "Java Flight Recorder, recorded by casslab", a file name.
    pub source: String,
    /// Frame names; stacks refer to them by index.
    pub frames: Vec<String>,
    /// Stacks of frame indexes, the root first.
    pub stacks: Vec<Vec<u32>>,
    pub samples: Vec<ProfileSample>,
}

impl Profile {
    /// Whether its samples carry their time (only such a profile can be sliced).
    pub fn timed(&self) -> bool {
        self.samples.iter().any(|s| s.at_ms.is_some())
    }

    /// The sum of its weights in `window` (all of them without one, or when it has no time).
    pub fn total(&self, window: Option<Window>) -> u64 {
        self.in_window(window).fold(0u64, |sum, s| sum.saturating_add(s.weight))
    }

    /// The samples behind its weight in `window`: for CPU the weight itself (one per sample),
    /// for the others the events they counted.
    pub fn sample_count(&self, window: Option<Window>) -> u64 {
        match self.kind {
            ProfileKind::Cpu => self.total(window),
            ProfileKind::Alloc | ProfileKind::Lock => self.in_window(window).map(|s| s.events).sum(),
        }
    }

    fn in_window(&self, window: Option<Window>) -> impl Iterator<Item = &ProfileSample> {
        self.samples.iter().filter(move |s| match (window, s.at_ms) {
            (Some(w), Some(t)) => w.covers_bucket(t),
            _ => true,
        })
    }

    /// A stack's frames joined with `;`, the root first.
    pub fn stack_text(&self, stack: u32) -> String {
        let ids = self.stacks.get(stack as usize).map(Vec::as_slice).unwrap_or_default();
        ids.iter().map(|f| self.frames.get(*f as usize).map_or("?", String::as_str)).collect::<Vec<_>>().join(";")
    }

    /// Folded stacks of `window`: each stack's text and its summed weight.
    pub fn folded(&self, window: Option<Window>) -> BTreeMap<String, u64> {
        let mut per_stack: HashMap<u32, u64> = HashMap::new();
        for s in self.in_window(window) {
            let w = per_stack.entry(s.stack).or_default();
            *w = w.saturating_add(s.weight);
        }
        per_stack.into_iter().filter(|(_, w)| *w > 0).map(|(s, w)| (self.stack_text(s), w)).collect()
    }

    /// Several profiles of one kind as one (the nodes of a cluster): their stacks summed, second
    /// by second.
    pub fn merged(node: &str, profiles: &[&Profile]) -> Option<Profile> {
        let first = profiles.first()?;
        let sources: Vec<&str> = profiles.iter().map(|p| p.source.as_str()).collect();
        let mut b = ProfileBuilder::new(node, first.kind, if sources.iter().all(|s| *s == sources[0]) { sources[0] } else { "several sources" });
        for p in profiles {
            for s in &p.samples {
                let frames: Vec<&str> = p.stacks[s.stack as usize].iter().map(|f| p.frames[*f as usize].as_str()).collect();
                b.add_counted(&frames, s.at_ms, s.weight, s.events);
            }
        }
        Some(b.finish())
    }
}

/// Builds a [`Profile`] sample by sample: frames and stacks interned, weights summed per stack
/// and second.
pub struct ProfileBuilder {
    node: String,
    kind: ProfileKind,
    source: String,
    frame_ids: HashMap<String, u32>,
    frames: Vec<String>,
    stack_ids: HashMap<Vec<u32>, u32>,
    stacks: Vec<Vec<u32>>,
    /// (weight, events) per second and stack.
    weights: HashMap<(Option<i64>, u32), (u64, u64)>,
}

impl ProfileBuilder {
    pub fn new(node: &str, kind: ProfileKind, source: &str) -> ProfileBuilder {
        ProfileBuilder {
            node: node.to_string(),
            kind,
            source: source.to_string(),
            frame_ids: HashMap::new(),
            frames: Vec::new(),
            stack_ids: HashMap::new(),
            stacks: Vec::new(),
            weights: HashMap::new(),
        }
    }

    /// Adds `weight` to the stack `frames` (the root first) in the second of `at_ms`.
    pub fn add<S: AsRef<str>>(&mut self, frames: &[S], at_ms: Option<i64>, weight: u64) {
        self.add_counted(frames, at_ms, weight, 1)
    }

    /// Adds `weight` that `events` samples carried.
    pub fn add_counted<S: AsRef<str>>(&mut self, frames: &[S], at_ms: Option<i64>, weight: u64, events: u64) {
        if weight == 0 || frames.is_empty() {
            return;
        }
        let ids: Vec<u32> = frames.iter().map(|f| self.frame(f.as_ref())).collect();
        let next = self.stacks.len() as u32;
        let stack = *self.stack_ids.entry(ids.clone()).or_insert(next);
        if stack == next {
            self.stacks.push(ids);
        }
        let bucket = at_ms.map(|t| t.div_euclid(BUCKET_MS) * BUCKET_MS);
        // weights come from files made elsewhere: they saturate rather than overflow
        let e = self.weights.entry((bucket, stack)).or_default();
        e.0 = e.0.saturating_add(weight);
        e.1 = e.1.saturating_add(events);
    }

    fn frame(&mut self, name: &str) -> u32 {
        if let Some(id) = self.frame_ids.get(name) {
            return *id;
        }
        let id = self.frames.len() as u32;
        self.frames.push(name.to_string());
        self.frame_ids.insert(name.to_string(), id);
        id
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    pub fn finish(self) -> Profile {
        let mut samples: Vec<ProfileSample> =
            self.weights.into_iter().map(|((at_ms, stack), (weight, events))| ProfileSample { at_ms, stack, weight, events }).collect();
        samples.sort_by_key(|s| (s.at_ms, s.stack));
        Profile { node: self.node, kind: self.kind, source: self.source, frames: self.frames, stacks: self.stacks, samples }
    }
}

/// Why a profile could not be recorded or read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("cannot read {path}: {error}")]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{path}: not a Java Flight Recorder file nor folded stacks ({detail})")]
    Unreadable { path: PathBuf, detail: String },
    #[error("{path}:{line}: {what}; folded stacks are one line per stack, `frame;frame;frame COUNT`")]
    Folded { path: PathBuf, line: usize, what: String },
    #[error("{0}")]
    Record(String),
    /// A Java Flight Recorder file that cannot be what it says (`untrusted::check_chunks`), or
    /// on which the reader failed in its own process.
    #[error("{path}: a damaged Java Flight Recorder file: {detail}")]
    Damaged { path: PathBuf, detail: String },
    /// What the reader's process said, as it said it.
    #[error("{0}")]
    Reader(String),
}

/// Reads a profile file made elsewhere: a Java Flight Recorder recording (`.jfr`, its samples
/// placed on the run's clock by `t0_unix_ms`), or folded stacks (one profile of `kind`, no time).
pub fn read_file(path: &std::path::Path, node: &str, t0_unix_ms: i64) -> Result<Vec<Profile>, ProfileError> {
    let head = {
        use std::io::Read;
        let mut f = std::fs::File::open(path).map_err(|source| ProfileError::Io { path: path.into(), error: source })?;
        let mut magic = [0u8; 4];
        let n = f.read(&mut magic).map_err(|source| ProfileError::Io { path: path.into(), error: source })?;
        magic[..n].to_vec()
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if head == b"FLR\0" {
        return jfr::read(path, node, t0_unix_ms, &format!("Java Flight Recorder file {name}"));
    }
    let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Io { path: path.into(), error: source })?;
    let kind = folded::kind_of_name(&name);
    Ok(vec![folded::parse(&text, path, node, kind, &format!("folded stacks {name}"))?])
}

/// What [`read_file`] would refuse that can be known before a run: a file that cannot be
/// opened, a Java Flight Recorder file whose chunks do not fit it; a run checks its
/// `--profile-file`s with this before it starts, and reads them after it is saved.
pub fn check_file(path: &std::path::Path) -> Result<(), ProfileError> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|source| ProfileError::Io { path: path.into(), error: source })?;
    let mut magic = [0u8; 4];
    let n = f.read(&mut magic).map_err(|source| ProfileError::Io { path: path.into(), error: source })?;
    if magic[..n] == *b"FLR\0" {
        untrusted::check_chunks(path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        let mut b = ProfileBuilder::new("n1", ProfileKind::Cpu, "test");
        b.add(&["main", "read", "decode"], Some(100), 2);
        b.add(&["main", "read", "decode"], Some(900), 1);
        b.add(&["main", "write"], Some(1500), 4);
        b.add(&["main", "read"], Some(3200), 1);
        b.finish()
    }

    #[test]
    fn samples_are_summed_per_stack_and_second_and_windows_cut_them() {
        let p = profile();
        assert_eq!(p.frames, ["main", "read", "decode", "write"]);
        assert_eq!(p.samples.len(), 3, "two samples of one stack in one second are one");
        assert_eq!(p.total(None), 8);
        let all = p.folded(None);
        assert_eq!(all["main;read;decode"], 3);
        assert_eq!(all["main;write"], 4);
        // the second [1000, 2000) overlaps [1900, 2100); [3000, 4000) does not
        let w = p.folded(Some(Window { from_ms: 1900, to_ms: 2100 }));
        assert_eq!(w.into_iter().collect::<Vec<_>>(), [("main;write".to_string(), 4)]);
        assert_eq!(p.total(Some(Window { from_ms: 2000, to_ms: 3000 })), 0);
        assert!(p.timed());
    }

    #[test]
    fn nodes_merge_into_one_profile() {
        let a = profile();
        let mut b = ProfileBuilder::new("n2", ProfileKind::Cpu, "test");
        b.add(&["main", "write"], Some(1200), 6);
        b.add(&["gc"], None, 1);
        let b = b.finish();
        let m = Profile::merged("all nodes", &[&a, &b]).unwrap();
        assert_eq!((m.node.as_str(), m.total(None)), ("all nodes", 15));
        assert_eq!(m.folded(None)["main;write"], 10);
        assert_eq!(m.folded(Some(Window { from_ms: 1000, to_ms: 2000 }))["main;write"], 10);
        assert_eq!(ProfileKind::parse("Alloc"), Some(ProfileKind::Alloc));
        assert!(Profile::merged("x", &[]).is_none());
    }
}
