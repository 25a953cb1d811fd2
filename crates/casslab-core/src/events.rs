//! Events during a run: the model of a timeline of disturbances (`60s kill node2`,
//! `30s compact`, `45s exec ssh db3 sudo systemctl stop cassandra`, `30s partition dc1|dc2`),
//! parsing and validating their specs, and the record of what happened when one ran. Times of a spec are relative
//! to the start of the run phase (warm-up included), or `setup` (`setup setstreamthroughput 8`:
//! carried out before the run's load and run phases, unmeasured); times of a record are on the axis of
//! the run's intervals (milliseconds since the engine started, like
//! `IntervalSample::start_ms`). Executing events is the binary's job; measuring their
//! impact is `analysis::impact`'s.

use crate::network::Rtt;
use crate::units::{parse_duration_s, DurationError};
use serde::{Deserialize, Serialize};

/// What an event does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "arg")]
pub enum EventAction {
    /// Graceful stop of a local node or data center (`node2`, `127.0.0.2`, `dc2`).
    Stop(String),
    /// SIGKILL of a local node or data center.
    Kill(String),
    /// Restart of a stopped local node or data center, with its data.
    Start(String),
    /// `nodetool flush [keyspace [table]]` on every running local node.
    Flush(Option<String>),
    /// `nodetool compact [keyspace [table]]` (a major compaction) on every running local node.
    Compact(Option<String>),
    /// `nodetool repair --full [keyspace [table]]` on the first running local node.
    Repair(Option<String>),
    /// `nodetool setcompactionthroughput N` (MiB/s, 0 = unthrottled) on every running local node.
    SetCompactionThroughput(u32),
    /// `nodetool settraceprobability P` on every running local node.
    SetTraceProbability(f64),
    /// `sh -c CMD`, for any cluster (e.g. an ssh that stops a remote service).
    Exec(String),
    // Changes of the offered rate (a run under a rate or a schedule), for any cluster.
    /// `rate N`: the run's rate becomes N operations per second at once.
    Rate(f64),
    /// `ramp N over D`: a straight line from the rate of the moment to N over D seconds.
    RampRate { to_per_s: f64, over_s: f64 },
    // Topology of casslab's local cluster, under load.
    /// `add node [DC]`: a new node bootstraps into the data center (the first when none).
    AddNode(Option<String>),
    /// `decommission NODE`: the node streams its data away and leaves the ring.
    Decommission(String),
    /// `replace NODE`: a fresh node takes a dead node's place (`replace_address_first_boot`).
    Replace(String),
    /// `nodetool cleanup [keyspace [table]]` on every running node.
    Cleanup(Option<String>),
    /// `nodetool setstreamthroughput` N MiB/s (0 = unthrottled) on every running node.
    SetStreamThroughput(u32),
    /// `nodetool snapshot [keyspace]` on every running node, with the size it took.
    Snapshot(Option<String>),
    /// `create index …`: a `CREATE [CUSTOM] INDEX` statement on a table of the workload, sent
    /// through CQL, the event lasting until the index is built (any cluster).
    CreateIndex(String),
    /// A change of the network between the nodes and the client (saved as the action itself:
    /// `{"kind": "partition", ...}`).
    #[serde(untagged)]
    Network(NetworkAction),
}

/// The network events, on a local cluster whose network casslab relays. One type of their own,
/// so that whatever carries them out matches them all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "arg")]
pub enum NetworkAction {
    /// Cuts the links between the sides, each a list of nodes or data centers (`dc1|dc2`,
    /// `node1,node2|node3`), on a local cluster whose network casslab relays.
    Partition(Vec<Vec<String>>),
    /// Ends every network fault.
    Heal,
    /// Cuts a node or data center off from every other node and from the client.
    Isolate(String),
    /// Adds round-trip time to every link of a node or data center (`slow node2 50ms`).
    Slow(String, Rtt),
    /// Loses a share of what crosses the links of a node or data center (`lossy dc2 5%`).
    Lossy(String, f64),
    /// Cuts the client off from a node or data center.
    ClientLoses(String),
}

/// The actions by name, for help and error messages.
pub const ACTIONS: &[&str] = &[
    "stop NODE|DC",
    "kill NODE|DC",
    "start NODE|DC",
    "flush [KS[.TABLE]]",
    "compact [KS[.TABLE]]",
    "repair [KS[.TABLE]]",
    "setcompactionthroughput MIB_S",
    "settraceprobability P",
    "exec CMD",
    "partition SIDE|SIDE",
    "heal",
    "isolate NODE|DC",
    "slow NODE|DC RTT",
    "lossy NODE|DC PCT",
    "client-loses NODE|DC",
    "rate N",
    "ramp N over D",
    "add node [DC]",
    "decommission NODE",
    "replace NODE",
    "cleanup [KS[.TABLE]]",
    "setstreamthroughput MIB_S",
    "snapshot [KS]",
    "create index … ON TABLE (COLUMN) [USING 'sai']",
];

impl EventAction {
    /// The action's word: `kill`, `compact`, `exec`, ...
    pub fn name(&self) -> &'static str {
        match self {
            EventAction::Stop(_) => "stop",
            EventAction::Kill(_) => "kill",
            EventAction::Start(_) => "start",
            EventAction::Flush(_) => "flush",
            EventAction::Compact(_) => "compact",
            EventAction::Repair(_) => "repair",
            EventAction::SetCompactionThroughput(_) => "setcompactionthroughput",
            EventAction::SetTraceProbability(_) => "settraceprobability",
            EventAction::Exec(_) => "exec",
            EventAction::Network(n) => n.name(),
            EventAction::Rate(_) => "rate",
            EventAction::RampRate { .. } => "ramp",
            EventAction::AddNode(_) => "add node",
            EventAction::Decommission(_) => "decommission",
            EventAction::Replace(_) => "replace",
            EventAction::Cleanup(_) => "cleanup",
            EventAction::SetStreamThroughput(_) => "setstreamthroughput",
            EventAction::Snapshot(_) => "snapshot",
            EventAction::CreateIndex(_) => "create index",
        }
    }

    /// What it acts on, as written (a node, a data center, a table, a value, a command).
    pub fn target(&self) -> Option<String> {
        match self {
            EventAction::Stop(t) | EventAction::Kill(t) | EventAction::Start(t) | EventAction::Exec(t) => Some(t.clone()),
            EventAction::Flush(t) | EventAction::Compact(t) | EventAction::Repair(t) => t.clone(),
            EventAction::SetCompactionThroughput(n) => Some(n.to_string()),
            EventAction::SetTraceProbability(p) => Some(p.to_string()),
            EventAction::Network(n) => n.target(),
            EventAction::Decommission(t) | EventAction::Replace(t) => Some(t.clone()),
            EventAction::AddNode(t) | EventAction::Cleanup(t) | EventAction::Snapshot(t) => t.clone(),
            EventAction::SetStreamThroughput(n) => Some(n.to_string()),
            EventAction::CreateIndex(cql) => match crate::cql::parse_schema(cql) {
                Some(crate::cql::SchemaStmt::Index(i)) => Some(format!("{}.{}", i.table, i.column)),
                _ => None,
            },
            EventAction::Rate(r) => Some(format!("{r}")),
            EventAction::RampRate { to_per_s, over_s } => Some(format!("{to_per_s} over {}", crate::load_shape::dur(*over_s))),
        }
    }

    /// Everything but `exec` and the changes of rate acts on casslab's local cluster.
    pub fn needs_local_cluster(&self) -> bool {
        !matches!(self, EventAction::Exec(_) | EventAction::CreateIndex(_)) && !self.changes_rate()
    }

    /// The node or data center a stop, kill, start, decommission or replace names (an added
    /// node's data center).
    pub fn node_selector(&self) -> Option<&str> {
        match self {
            EventAction::Stop(t) | EventAction::Kill(t) | EventAction::Start(t) | EventAction::Decommission(t) | EventAction::Replace(t) => Some(t),
            EventAction::AddNode(dc) => dc.as_deref(),
            _ => None,
        }
    }

    /// Whether it changes the network between the nodes and the client.
    pub fn is_network(&self) -> bool {
        self.network().is_some()
    }

    /// The network change it is, if it is one.
    pub fn network(&self) -> Option<&NetworkAction> {
        match self {
            EventAction::Network(n) => Some(n),
            _ => None,
        }
    }

    /// A change of the run's rate (`rate`, `ramp`).
    pub fn changes_rate(&self) -> bool {
        matches!(self, EventAction::Rate(_) | EventAction::RampRate { .. })
    }

    /// Changes which nodes the cluster has (`add node`, `decommission`, `replace`).
    pub fn changes_topology(&self) -> bool {
        matches!(self, EventAction::AddNode(_) | EventAction::Decommission(_) | EventAction::Replace(_))
    }

    /// Node actions wait for each other: stops, kills, starts, topology changes, the cleanup
    /// that follows one and the streaming limit set for one (on every node: a node killed while
    /// it is set would refuse it) run one at a time on a cluster.
    pub fn one_at_a_time(&self) -> bool {
        matches!(self, EventAction::Stop(_) | EventAction::Kill(_) | EventAction::Start(_) | EventAction::Cleanup(_) | EventAction::SetStreamThroughput(_))
            || self.changes_topology()
    }
}

impl NetworkAction {
    /// The action's word: `partition`, `heal`, ...
    pub fn name(&self) -> &'static str {
        match self {
            NetworkAction::Partition(_) => "partition",
            NetworkAction::Heal => "heal",
            NetworkAction::Isolate(_) => "isolate",
            NetworkAction::Slow(..) => "slow",
            NetworkAction::Lossy(..) => "lossy",
            NetworkAction::ClientLoses(_) => "client-loses",
        }
    }

    /// What it acts on, as written.
    pub fn target(&self) -> Option<String> {
        match self {
            NetworkAction::Partition(sides) => Some(sides.iter().map(|side| side.join(",")).collect::<Vec<_>>().join("|")),
            NetworkAction::Heal => None,
            NetworkAction::Isolate(t) | NetworkAction::ClientLoses(t) => Some(t.clone()),
            NetworkAction::Slow(t, rtt) => Some(format!("{t} {rtt}")),
            NetworkAction::Lossy(t, pct) => Some(format!("{t} {pct}%")),
        }
    }

    /// The nodes or data centers it names, each as written.
    pub fn selectors(&self) -> Vec<&str> {
        match self {
            NetworkAction::Partition(sides) => sides.iter().flatten().map(String::as_str).collect(),
            NetworkAction::Isolate(t) | NetworkAction::Slow(t, _) | NetworkAction::Lossy(t, _) | NetworkAction::ClientLoses(t) => vec![t.as_str()],
            NetworkAction::Heal => Vec::new(),
        }
    }
}

/// One planned event: when (since the start of the run phase, warm-up included) and what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventSpec {
    pub at_ms: u64,
    /// Written `setup ACTION`: carried out before the load and run phases (which wait for it),
    /// to set the cluster up rather than disturb it; `at_ms` is 0.
    #[serde(default)]
    pub setup: bool,
    pub action: EventAction,
    /// The spec as written, e.g. `60s kill node2`.
    pub text: String,
}

impl EventSpec {
    /// `kill node2`: the spec without its time.
    pub fn label(&self) -> String {
        match self.action.target() {
            Some(t) => format!("{} {t}", self.action.name()),
            None => self.action.name().to_string(),
        }
    }
}

/// An event spec that cannot be read: the spec as written and what is wrong with it.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[error("event \"{spec}\": {problem}")]
pub struct EventError {
    pub spec: String,
    pub problem: EventProblem,
}

/// What is wrong with an event spec, and what to write instead.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum EventProblem {
    #[error("write TIME ACTION, e.g. '60s kill node2'; actions: {}", ACTIONS.join(", "))]
    Usage,
    #[error(transparent)]
    Time(#[from] DurationError),
    #[error("unknown action \"{action}\"{} (actions: {})", crate::suggest::hint(.action, action_words()), ACTIONS.join(", "))]
    UnknownAction { action: String },
    #[error("`{action}` takes one {what}")]
    OneArgument { action: String, what: &'static str },
    #[error("`{action}` takes at most one keyspace or keyspace.table")]
    AtMostOneTable { action: String },
    #[error("\"{0}\" is not a keyspace or keyspace.table")]
    NotATable(String),
    #[error("\"{0}\" is not a whole number of MiB/s (0 = unthrottled)")]
    NotMibPerS(String),
    #[error("\"{0}\" is not a probability between 0 and 1")]
    NotAProbability(String),
    #[error("`exec` needs a command, e.g. '60s exec ssh db3 sudo systemctl stop cassandra'")]
    NoCommand,
    #[error("`partition` needs two sides or more, e.g. '30s partition dc1|dc2' or '30s partition node1,node2|node3'")]
    Sides,
    #[error("`heal` takes nothing: it ends every network fault")]
    HealAlone,
    #[error("`{action}` takes a node or data center and {what}, e.g. '{example}'")]
    NodeAnd { action: String, what: &'static str, example: &'static str },
    #[error(transparent)]
    Rtt(#[from] crate::network::NetworkError),
    #[error("\"{0}\" is not a share between 0% and 100%, e.g. 5%")]
    NotAShare(String),
    #[error("\"{0}\" is not a rate (operations per second, above 0), e.g. '60s rate 800' or '60s ramp 800 over 10s'")]
    NotARate(String),
    #[error("write '60s ramp 800 over 10s': a rate and how long the ramp takes")]
    RampUsage,
    #[error("write '60s add node' or '60s add node dc2' (the data center it joins)")]
    AddUsage,
    #[error(
        "write '60s create index IF NOT EXISTS NAME ON TABLE (COLUMN) USING 'sai'': a CREATE INDEX statement on a table of the workload (without a keyspace)"
    )]
    IndexUsage,
    #[error("`{action}` cannot be a setup event (before the run: it sets the cluster up); give it a time, e.g. '60s {action} …'")]
    NotAtSetup { action: String },
}

/// The action words alone (`kill`, `compact`, ...), for suggestions.
fn action_words() -> Vec<&'static str> {
    ACTIONS.iter().map(|a| a.split(' ').next().unwrap_or(a)).collect()
}

/// A keyspace or `keyspace.table` argument: CQL identifiers only.
fn table_arg(word: &str) -> Result<String, EventProblem> {
    let ok = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let parts: Vec<&str> = word.split('.').collect();
    if parts.len() <= 2 && parts.iter().all(|p| ok(p)) {
        Ok(word.to_string())
    } else {
        Err(EventProblem::NotATable(word.to_string()))
    }
}

/// The sides of a partition: `dc1|dc2`, `node1,node2|node3` (spaces allowed around the
/// separators); two or more, none empty.
fn sides(arg: &str) -> Result<Vec<Vec<String>>, EventProblem> {
    let sides: Vec<Vec<String>> = arg.split('|').map(|side| side.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect()).collect();
    if sides.len() < 2 || sides.iter().any(|s| s.is_empty() || s.iter().any(|sel| sel.contains(char::is_whitespace))) {
        return Err(EventProblem::Sides);
    }
    Ok(sides)
}

/// `node2 50ms`: exactly two words.
fn two_args(arg: &str) -> Option<(String, String)> {
    let words: Vec<&str> = arg.split_whitespace().collect();
    match words.as_slice() {
        [a, b] => Some((a.to_string(), b.to_string())),
        _ => None,
    }
}

/// A rate of a `rate` or `ramp` event: `800`, `800/s`, above 0.
fn rate_arg(word: &str) -> Result<f64, EventProblem> {
    match word.trim_end_matches("/s").parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
        _ => Err(EventProblem::NotARate(word.to_string())),
    }
}

/// Parses `60s kill node2`, `1m30s compact ks.t`, `45s exec ssh db3 'sudo systemctl stop cassandra'`.
pub fn parse_event(text: &str) -> Result<EventSpec, EventError> {
    let t = text.trim();
    parse_action(t).map_err(|problem| EventError { spec: t.to_string(), problem })
}

fn parse_action(t: &str) -> Result<EventSpec, EventProblem> {
    let (time, rest) = t.split_once(char::is_whitespace).ok_or(EventProblem::Usage)?;
    let setup = time.eq_ignore_ascii_case("setup");
    let at_s = if setup { 0.0 } else { parse_duration_s(time)? };
    let rest = rest.trim();
    let (word, arg) = match rest.split_once(char::is_whitespace) {
        Some((w, a)) => (w, a.trim()),
        None => (rest, ""),
    };
    let one_arg = |what: &'static str| -> Result<String, EventProblem> {
        if arg.is_empty() || arg.contains(char::is_whitespace) {
            Err(EventProblem::OneArgument { action: word.to_string(), what })
        } else {
            Ok(arg.to_string())
        }
    };
    let optional_table = || -> Result<Option<String>, EventProblem> {
        match arg {
            "" => Ok(None),
            a if a.contains(char::is_whitespace) => Err(EventProblem::AtMostOneTable { action: word.to_string() }),
            a => table_arg(a).map(Some),
        }
    };
    const NODE_OR_DC: &str = "node (node2, 127.0.0.2) or data center (dc2)";
    let action = match word.to_ascii_lowercase().as_str() {
        "stop" => EventAction::Stop(one_arg(NODE_OR_DC)?),
        "kill" => EventAction::Kill(one_arg(NODE_OR_DC)?),
        "start" => EventAction::Start(one_arg(NODE_OR_DC)?),
        "flush" => EventAction::Flush(optional_table()?),
        "compact" => EventAction::Compact(optional_table()?),
        "repair" => EventAction::Repair(optional_table()?),
        "setcompactionthroughput" => {
            let v = one_arg("number of MiB/s")?;
            EventAction::SetCompactionThroughput(v.parse().map_err(|_| EventProblem::NotMibPerS(v.clone()))?)
        }
        "settraceprobability" => {
            let v = one_arg("probability between 0 and 1")?;
            match v.parse::<f64>() {
                Ok(p) if (0.0..=1.0).contains(&p) => EventAction::SetTraceProbability(p),
                _ => return Err(EventProblem::NotAProbability(v)),
            }
        }
        "exec" if !arg.is_empty() => EventAction::Exec(arg.to_string()),
        "exec" => return Err(EventProblem::NoCommand),
        "partition" => EventAction::Network(NetworkAction::Partition(sides(arg)?)),
        "heal" if arg.is_empty() => EventAction::Network(NetworkAction::Heal),
        "heal" => return Err(EventProblem::HealAlone),
        "isolate" => EventAction::Network(NetworkAction::Isolate(one_arg(NODE_OR_DC)?)),
        "client-loses" => EventAction::Network(NetworkAction::ClientLoses(one_arg(NODE_OR_DC)?)),
        "slow" => {
            let bad = || EventProblem::NodeAnd { action: "slow".into(), what: "a round-trip time", example: "60s slow node2 50ms" };
            let (target, rtt) = two_args(arg).ok_or_else(bad)?;
            EventAction::Network(NetworkAction::Slow(target, Rtt::parse(&rtt)?))
        }
        "lossy" => {
            let bad = || EventProblem::NodeAnd { action: "lossy".into(), what: "a share", example: "60s lossy dc2 5%" };
            let (target, share) = two_args(arg).ok_or_else(bad)?;
            match share.trim_end_matches('%').trim().parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 100.0 => EventAction::Network(NetworkAction::Lossy(target, p)),
                _ => return Err(EventProblem::NotAShare(share)),
            }
        }
        "rate" => EventAction::Rate(rate_arg(&one_arg("rate in operations per second")?)?),
        "ramp" => match arg.split_whitespace().collect::<Vec<_>>().as_slice() {
            [to, over, d] if over.eq_ignore_ascii_case("over") => EventAction::RampRate { to_per_s: rate_arg(to)?, over_s: parse_duration_s(d)? },
            _ => return Err(EventProblem::RampUsage),
        },
        "add" => match arg.split_whitespace().collect::<Vec<_>>().as_slice() {
            [node] if node.eq_ignore_ascii_case("node") => EventAction::AddNode(None),
            [node, dc] if node.eq_ignore_ascii_case("node") => EventAction::AddNode(Some(dc.to_string())),
            _ => return Err(EventProblem::AddUsage),
        },
        "decommission" => EventAction::Decommission(one_arg("node (node2, 127.0.0.2)")?),
        "replace" => EventAction::Replace(one_arg("node (node2, 127.0.0.2), stopped or killed before")?),
        "cleanup" => EventAction::Cleanup(optional_table()?),
        "snapshot" => EventAction::Snapshot(optional_table()?),
        "create" => {
            let cql = format!("CREATE {arg}");
            match crate::cql::parse_schema(&cql) {
                Some(crate::cql::SchemaStmt::Index(_)) if !cql.contains(';') => EventAction::CreateIndex(cql),
                _ => return Err(EventProblem::IndexUsage),
            }
        }
        "setstreamthroughput" => {
            let v = one_arg("number of MiB/s")?;
            EventAction::SetStreamThroughput(v.parse().map_err(|_| EventProblem::NotMibPerS(v.clone()))?)
        }
        other => return Err(EventProblem::UnknownAction { action: other.to_string() }),
    };
    // a change of rate needs the run; a network fault would outlast the run's healing of them
    if setup && (action.changes_rate() || action.is_network()) {
        return Err(EventProblem::NotAtSetup { action: word.to_string() });
    }
    Ok(EventSpec { at_ms: (at_s * 1000.0).round() as u64, setup, action, text: t.to_string() })
}

/// Events in the order they fire: setup events first, then by time (stable for equal times).
pub fn sorted(mut events: Vec<EventSpec>) -> Vec<EventSpec> {
    events.sort_by_key(|e| (!e.setup, e.at_ms));
    events
}

/// How an event ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventStatus {
    /// Ran and succeeded (exit status 0).
    Ok,
    /// Ran and failed (non-zero exit status, or the action could not be carried out).
    Failed,
    /// Never ran: the run ended before its time.
    Skipped,
}

impl EventStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EventStatus::Ok => "ok",
            EventStatus::Failed => "failed",
            EventStatus::Skipped => "skipped",
        }
    }
    pub fn parse(s: &str) -> Option<EventStatus> {
        [EventStatus::Ok, EventStatus::Failed, EventStatus::Skipped].into_iter().find(|x| x.as_str() == s)
    }
}

/// What happened when an event ran, saved with the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Position in the run's timeline (0-based, in firing order).
    pub seq: u32,
    /// The spec as written, e.g. `60s kill node2`.
    pub spec: String,
    /// The action's word (`kill`) and its target (`node2`), if any.
    pub action: String,
    pub target: Option<String>,
    /// When it started and ended, in milliseconds on the intervals' time axis (since the
    /// engine started). A skipped event has its planned time in both.
    pub start_ms: u64,
    pub end_ms: u64,
    pub status: EventStatus,
    /// The exit status of the command (or the last nodetool) when there was one.
    pub exit_code: Option<i32>,
    /// The last lines of what it printed (stdout and stderr).
    pub output_tail: String,
}

impl EventRecord {
    /// `kill node2`.
    pub fn label(&self) -> String {
        match &self.target {
            Some(t) => format!("{} {t}", self.action),
            None => self.action.clone(),
        }
    }
    pub fn duration_ms(&self) -> u64 {
        self.end_ms.saturating_sub(self.start_ms)
    }
    /// Whether it was a setup event (`setup ACTION`, carried out before the load and run
    /// phases): it has no impact on the run to measure.
    pub fn is_setup(&self) -> bool {
        self.spec.split_whitespace().next().is_some_and(|w| w.eq_ignore_ascii_case("setup"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_events_come_first_and_cannot_change_the_rate() {
        let set = parse_event("setup setstreamthroughput 8").unwrap();
        assert_eq!((set.setup, set.at_ms, set.action.clone()), (true, 0, EventAction::SetStreamThroughput(8)));
        assert!(!parse_event("0s kill node2").unwrap().setup);
        let order = sorted(vec![parse_event("0s kill node2").unwrap(), parse_event("SETUP compact").unwrap()]);
        assert_eq!(order.iter().map(|e| e.setup).collect::<Vec<_>>(), [true, false]);
        assert_eq!(parse_event("setup rate 800").unwrap_err().problem, EventProblem::NotAtSetup { action: "rate".into() });
        assert!(parse_event("setup partition dc1|dc2").is_err());
        let record = |spec: &str| EventRecord {
            seq: 0,
            spec: spec.into(),
            action: "compact".into(),
            target: None,
            start_ms: 0,
            end_ms: 0,
            status: EventStatus::Ok,
            exit_code: None,
            output_tail: String::new(),
        };
        assert!(record("setup compact").is_setup() && !record("10s compact").is_setup());
    }

    #[test]
    fn specs_parse_into_actions_and_times() {
        let e = parse_event("60s kill node2").unwrap();
        assert_eq!((e.at_ms, e.action.clone(), e.label()), (60_000, EventAction::Kill("node2".into()), "kill node2".to_string()));
        assert_eq!(parse_event("1m30s stop dc2").unwrap().at_ms, 90_000);
        assert_eq!(parse_event("500ms compact").unwrap().action, EventAction::Compact(None));
        assert_eq!(parse_event("30s compact ks.t").unwrap().action, EventAction::Compact(Some("ks.t".into())));
        assert_eq!(parse_event("45 repair ks").unwrap().action, EventAction::Repair(Some("ks".into())));
        assert_eq!(parse_event("10s flush").unwrap().action, EventAction::Flush(None));
        assert_eq!(parse_event("1s setcompactionthroughput 0").unwrap().action, EventAction::SetCompactionThroughput(0));
        assert_eq!(parse_event("1s settraceprobability 0.01").unwrap().action, EventAction::SetTraceProbability(0.01));
        let x = parse_event("60s exec ssh db3 'sudo systemctl stop cassandra'").unwrap();
        assert_eq!(x.action, EventAction::Exec("ssh db3 'sudo systemctl stop cassandra'".into()));
        assert!(!x.action.needs_local_cluster() && e.action.needs_local_cluster());
        assert_eq!(e.action.node_selector(), Some("node2"));
    }

    #[test]
    fn rate_changes_and_topology_changes_parse() {
        let r = parse_event("60s rate 800").unwrap();
        assert_eq!((r.action.clone(), r.label()), (EventAction::Rate(800.0), "rate 800".to_string()));
        assert!(r.action.changes_rate() && !r.action.needs_local_cluster() && !r.action.one_at_a_time());
        let ramp = parse_event("1m ramp 2000/s over 30s").unwrap();
        assert_eq!((ramp.action.clone(), ramp.label()), (EventAction::RampRate { to_per_s: 2000.0, over_s: 30.0 }, "ramp 2000 over 30s".to_string()));
        let add = parse_event("10s add node dc2").unwrap();
        assert_eq!(
            (add.action.clone(), add.label(), add.action.node_selector()),
            (EventAction::AddNode(Some("dc2".into())), "add node dc2".to_string(), Some("dc2"))
        );
        assert!(add.action.one_at_a_time() && add.action.changes_topology() && add.action.needs_local_cluster());
        assert_eq!(parse_event("10s add node").unwrap().action, EventAction::AddNode(None));
        assert_eq!(parse_event("10s decommission node4").unwrap().action.node_selector(), Some("node4"));
        assert_eq!(parse_event("10s replace node3").unwrap().label(), "replace node3");
        assert_eq!(parse_event("10s cleanup ks").unwrap().action, EventAction::Cleanup(Some("ks".into())));
        assert_eq!(parse_event("10s snapshot").unwrap().action, EventAction::Snapshot(None));
        let idx = parse_event("30s create index IF NOT EXISTS by_num ON t (num) USING 'sai'").unwrap();
        assert_eq!(idx.action, EventAction::CreateIndex("CREATE index IF NOT EXISTS by_num ON t (num) USING 'sai'".into()));
        assert_eq!((idx.action.name(), idx.action.target().as_deref(), idx.action.needs_local_cluster()), ("create index", Some("t.num"), false));
        assert!(parse_event("30s create table x (a int PRIMARY KEY)").unwrap_err().to_string().contains("a CREATE INDEX statement"));
        assert_eq!(parse_event("10s setstreamthroughput 8").unwrap().action, EventAction::SetStreamThroughput(8));
        for (bad, says) in [
            ("10s rate fast", "not a rate"),
            ("10s rate 0", "not a rate"),
            ("10s ramp 800", "ramp 800 over 10s"),
            ("10s add nodes", "add node dc2"),
            ("10s replace", "takes one node"),
            ("10s setstreamthroughput lots", "whole number"),
        ] {
            let e = parse_event(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_specs_say_what_to_write() {
        for (bad, says) in [
            ("kill node2", "bad duration"),
            ("60s", "TIME ACTION"),
            ("60s kil node2", "did you mean \"kill\""),
            ("60s kill", "takes one node"),
            ("60s kill node2 node3", "takes one node"),
            ("60s compact a.b.c", "not a keyspace"),
            ("60s settraceprobability 2", "between 0 and 1"),
            ("60s setcompactionthroughput fast", "whole number"),
            ("60s exec", "needs a command"),
        ] {
            let e = parse_event(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("event \"{bad}\": ")) && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn network_events_parse_with_their_sides_times_and_shares() {
        let p = parse_event("30s partition dc1|dc2").unwrap();
        assert_eq!(p.action, EventAction::Network(NetworkAction::Partition(vec![vec!["dc1".into()], vec!["dc2".into()]])));
        assert_eq!((p.label(), p.action.is_network(), p.action.needs_local_cluster()), ("partition dc1|dc2".to_string(), true, true));
        let p = parse_event("30s partition node1, node2 | node3").unwrap();
        assert_eq!(p.action.target().as_deref(), Some("node1,node2|node3"));
        assert_eq!(p.action.network().unwrap().selectors(), ["node1", "node2", "node3"]);
        assert_eq!(parse_event("45s heal").unwrap().action, EventAction::Network(NetworkAction::Heal));
        assert_eq!(parse_event("45s heal").unwrap().label(), "heal");
        assert_eq!(parse_event("1s isolate node3").unwrap().action, EventAction::Network(NetworkAction::Isolate("node3".into())));
        assert_eq!(parse_event("1s client-loses dc1").unwrap().action, EventAction::Network(NetworkAction::ClientLoses("dc1".into())));
        let slow = parse_event("1s slow node2 50ms±5ms").unwrap();
        assert_eq!(slow.action, EventAction::Network(NetworkAction::Slow("node2".into(), Rtt { rtt_us: 50_000, jitter_us: 5_000 })));
        assert_eq!(slow.label(), "slow node2 50ms±5ms");
        let lossy = parse_event("1s lossy dc2 5%").unwrap();
        assert_eq!((lossy.action.clone(), lossy.label()), (EventAction::Network(NetworkAction::Lossy("dc2".into(), 5.0)), "lossy dc2 5%".to_string()));
        assert_eq!(lossy.action.network().unwrap().selectors(), ["dc2"]);
        assert!(!parse_event("1s kill node2").unwrap().action.is_network());
        // a network action is saved as itself, as before it had a type of its own, and read back
        for spec in ["1s partition dc1|dc2", "1s heal", "1s slow node2 50ms", "1s kill node2", "1s rate 300"] {
            let action = parse_event(spec).unwrap().action;
            let json = serde_json::to_string(&action).unwrap();
            assert!(json.starts_with(&format!("{{\"kind\":\"{}\"", action.name().replace(' ', "_"))), "{spec}: {json}");
            assert_eq!(serde_json::from_str::<EventAction>(&json).unwrap(), action, "{spec}: {json}");
        }
        let saved = r#"{"kind":"partition","arg":[["dc1"],["dc2"]]}"#;
        assert_eq!(serde_json::from_str::<EventAction>(saved).unwrap(), parse_event("1s partition dc1|dc2").unwrap().action);
        for (bad, says) in [
            ("1s partition dc1", "two sides"),
            ("1s partition dc1|", "two sides"),
            ("1s partition dc1 dc3|dc2", "two sides"),
            ("1s heal now", "takes nothing"),
            ("1s slow node2", "round-trip time"),
            ("1s slow node2 fast", "bad round-trip time"),
            ("1s lossy dc2", "a share"),
            ("1s lossy dc2 150%", "between 0% and 100%"),
            ("1s isolate", "takes one node"),
            ("1s partiton dc1|dc2", "did you mean \"partition\""),
        ] {
            let e = parse_event(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn events_fire_in_time_order_and_statuses_round_trip() {
        let evs = sorted(vec![parse_event("20s start node2").unwrap(), parse_event("10s kill node2").unwrap()]);
        assert_eq!(evs[0].label(), "kill node2");
        for s in [EventStatus::Ok, EventStatus::Failed, EventStatus::Skipped] {
            assert_eq!(EventStatus::parse(s.as_str()), Some(s));
        }
    }
}
