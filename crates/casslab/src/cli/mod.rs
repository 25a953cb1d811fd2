//! The command line: the commands (`Cli`, `Command`, and `command()`, the definition clap
//! builds with its help texts), their flags (`args.rs`: definitions only, no I/O), and the
//! conversion of flags into the library's plain config structs (`to_config.rs`). Nothing
//! outside this folder and `commands/` knows about clap. A flag value that does not parse is a
//! usage error (exit code 2).

mod args;
mod to_config;

pub use args::*;
pub use to_config::*;

use crate::help;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Requests in flight when nothing says otherwise.
pub const DEFAULT_CONCURRENCY: usize = 128;

#[derive(Parser, Debug)]
#[command(name = "casslab", version, about = "A performance lab for Apache Cassandra: declarative workloads, open-loop latency, saved results", long_about = None)]
pub struct Cli {
    /// Print only results, warnings and errors.
    ///
    /// No progress, notes or "wrote FILE" lines on stderr.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// The command line's definition as clap builds it, with each command's examples and
/// environment (`help.rs`) and the help texts that differ between commands sharing a group of
/// flags or that list what the library accepts. `main` and the shell completions use it; the
/// man page, [`manual_command`].
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut c = Cli::command().max_term_width(100).mut_subcommand("lint", |c| {
        c.mut_arg("hosts", |a| {
            a.help("Judge the live schema of this cluster instead: host[:port],...").long_help(
                "Contact points of a cluster whose live schema (tables, indexes, replication) is judged instead of the workload's own \
                 (comma separated, host or host:port). Without it no cluster is used.",
            )
        })
    });
    for page in &help::pages() {
        c = match page.command {
            "" => with_page(c, page),
            name => c.mut_subcommand(name, |s| with_page(s, page)),
        };
    }
    with_listed_help(negatives_are_values(c))
}

/// Where a command's help puts its parts: usage, then the examples (`before_help`), then the
/// options, then the environment (`after_help`).
const HELP_TEMPLATE: &str = "{about-with-newline}\n{usage-heading} {usage}\n\n{before-help}{all-args}{after-help}";

fn with_page(c: clap::Command, page: &help::Page) -> clap::Command {
    let c = c.help_template(HELP_TEMPLATE).before_help(page.examples(false)).before_long_help(page.examples(true));
    match page.environment {
        "" => c,
        environment => c.after_help(environment),
    }
}

/// The definition the man page is made from: a man page shows no `before_help`, so each
/// command's examples go after its options there, before its environment.
pub fn manual_command() -> clap::Command {
    fn examples_last(c: clap::Command) -> clap::Command {
        let examples = c.get_before_long_help().map(|e| e.to_string());
        let c = match examples {
            Some(examples) => {
                let after = c.get_after_help().map(|a| format!("\n\n{a}")).unwrap_or_default();
                c.after_long_help(format!("{examples}{after}"))
            }
            None => c,
        };
        c.mut_subcommands(examples_last)
    }
    examples_last(command())
}

/// The full help of `--event` lists every kind of event, from the one table of them
/// (`casslab_core::events::ACTIONS`), and that of `--find-max` every figure an SLA bounds
/// (`casslab_core::analysis::sla_metrics`), so that what is accepted is what is listed.
fn with_listed_help(c: clap::Command) -> clap::Command {
    c.mut_args(|a| match a.get_id().as_str() {
        "events" => a.long_help(event_help()),
        "find_max" => a.long_help(find_max_help()),
        _ => a,
    })
    .mut_subcommands(with_listed_help)
}

/// The long help of `--find-max`.
fn find_max_help() -> String {
    format!(
        "Find the highest fixed rate that meets an SLA, e.g. 'p99 < 10ms'.\n\n\
         The SLA is [OP.]METRIC < VALUE (or <=), e.g. 'p99 < 10ms', 'read.p99 < 5ms' or 'errors < 1': OP an operation \
         (all of them together without one), METRIC one of {} (latencies with a unit: ns, us, ms, s; latency from the \
         intended start). Throughput (ops_s) is what the search finds, not a bound. A probe at maximum throughput, then a \
         binary search of rates, each step a saved run of --duration (with --warmup).",
        casslab_core::analysis::sla_metrics().collect::<Vec<_>>().join(", ")
    )
}

/// The long help of `--event`.
pub fn event_help() -> String {
    format!(
        "Do something during the run: 'TIME ACTION', TIME counted from the start of the run phase (warm-up included), or 'setup ACTION' before the load. \
         ACTION is one of: {}. \
         Node, nodetool, topology and network actions act on casslab's local cluster (a node's name or address, or a data center); \
         'exec CMD' (sh -c CMD), 'rate' and 'ramp' on any run. \
         E.g. '60s kill node2', '120s start node2', '30s compact ks.table', '20s partition dc1|dc2', '40s heal', '10s ramp 5000 over 30s'. \
         Each is saved with the run, with its impact. Repeatable; adds to the workload's `events:`.",
        casslab_core::events::ACTIONS.join("; ")
    )
}

/// Every option that takes one value takes one that starts with a hyphen (`--rate -100`,
/// `--equivalence -5%`), so that the option's own check says what is wrong with it, rather than
/// clap calling it an unknown argument; other arguments that take values take negative numbers.
/// In every subcommand.
fn negatives_are_values(c: clap::Command) -> clap::Command {
    c.mut_args(|a| match (a.get_action().takes_values(), a.is_positional(), a.get_num_args()) {
        (true, false, None) => a.allow_hyphen_values(true),
        (true, ..) => a.allow_negative_numbers(true),
        _ => a,
    })
    .mut_subcommands(negatives_are_values)
}

// parsed once per process: the size of its largest variant costs nothing
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a workload: schema, load, warm-up and measured run.
    ///
    /// A built-in workload or a YAML file. Without --hosts it uses the local node, starting one if
    /// none is running.
    Run(RunArgs),
    /// Run an experiment: variants of a workload, compared.
    ///
    /// Blocks of every variant of a base workload (counterbalanced) until each judged change is
    /// found or known within the precision, or the budget is spent; then each variant against the
    /// first, block by block (repeated confidence intervals and verdicts).
    Experiment(ExperimentArgs),
    /// Start, inspect and stop real local Cassandra nodes.
    ///
    /// On loopback (and, with `local redis`, a local redis-server).
    #[command(subcommand)]
    Local(LocalCommand),
    /// List the built-in workloads and experiments.
    ///
    /// `casslab workloads show NAME` prints one.
    Workloads {
        #[command(subcommand)]
        command: Option<WorkloadsCommand>,
    },
    /// List saved runs, newest first.
    ///
    /// Filtered by workload and tags; `runs delete` and `runs tag` look after them.
    #[command(args_conflicts_with_subcommands = true)]
    Runs(RunsArgs),
    /// Print a saved run's summary, or export it.
    ///
    /// As JSON, CSV or an HdrHistogram log.
    Show {
        /// Run id, or `latest`.
        #[arg(default_value = "latest")]
        run: String,
        /// What to print: text, json or csv.
        ///
        /// The summary (text), the whole run as JSON (the export of --json), or its intervals per
        /// operation as CSV.
        #[arg(long, value_enum, default_value = "text", hide_possible_values = true)]
        format: OutputFormat,
        #[command(flatten)]
        export: ExportArgs,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Write a report of saved runs: HTML, Markdown or JSON.
    ///
    /// A self-contained HTML page with charts (default), Markdown to paste into a pull request, or
    /// JSON for machines.
    Report(ReportArgs),
    /// Compare saved runs with confidence intervals.
    ///
    /// A windowed bootstrap for single runs; the repetitions or blocks as the unit for an
    /// experiment's runs: each figure per operation, the change against the baseline, verdicts in
    /// words; gates exit 1 (undecided: 4).
    Compare(CompareArgs),
    /// Merge the shards of a run spread over several loaders.
    ///
    /// Of `run --shard I/N`: checks they belong together, adds up their intervals' histograms
    /// (every percentile of the merged run is exact) and saves it as an ordinary run with a
    /// per-loader breakdown.
    Merge(MergeArgs),
    /// Check a workload's data set against what was written.
    ///
    /// Reads back every key the data set should hold and checks each row against what was written
    /// (its load, or the record of the run that wrote to it last): rows expected, found, missing
    /// and mismatched, and a checksum of the data set. Exits 1 when a row is not as written or a
    /// read failed, 2 when what the data should hold cannot be known.
    Verify(VerifyArgs),
    /// Check a workload's data model without a cluster.
    ///
    /// Of a workload, or of every variant of an experiment: findings by severity with file:line,
    /// why each hurts and what to do instead. With --hosts it judges the keyspace's live schema
    /// from that cluster instead (no local node is started). Exits 1 when a finding is an error, 2
    /// when the workload cannot be read.
    Lint(LintArgs),
    /// Make a workload from what you have.
    ///
    /// A cassandra-stress profile (and command line), a live cluster's schema and data, or captured
    /// traffic to replay at its own times.
    Import(ImportArgs),
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print casslab's man page, or write one per command.
    ///
    /// The page (roff) goes to stdout; with --dir, one page per command is written into DIR.
    Man {
        /// Write casslab.1, casslab-run.1, … into DIR instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use casslab_core::flag_values::{parse_rate, shard_index};

    #[test]
    fn the_event_help_lists_every_kind_of_event() {
        let mut run = command().find_subcommand_mut("run").expect("run").clone();
        let help = run.render_long_help().to_string();
        assert!(help.contains("decommission") && help.contains("setstreamthroughput"), "run --help lists the events");
        let text = event_help();
        for kind in casslab_core::events::ACTIONS {
            assert!(text.contains(kind), "--event's help lacks {kind}");
        }
    }

    #[test]
    fn consistency_levels_are_read_and_a_serial_one_has_its_own_flag() {
        let opts = |args: &[&str]| {
            let cli = Cli::try_parse_from([&["casslab", "run", "kv"], args].concat()).unwrap();
            match cli.command {
                Command::Run(r) => r.opts.to_config("kv"),
                _ => unreachable!("a run"),
            }
        };
        let cfg = opts(&["--consistency", "quorum", "--serial-consistency", "LOCAL_SERIAL"]).unwrap();
        assert_eq!(
            (cfg.consistency, cfg.serial_consistency),
            (Some(casslab_core::cql::Consistency::Quorum), Some(casslab_core::cql::Consistency::LocalSerial))
        );
        assert_eq!(opts(&[]).unwrap().consistency, None, "the workload's levels unless told");
        assert!(opts(&["--consistency", "SERIAL"]).unwrap_err().to_string().contains("--serial-consistency's"));
        assert!(opts(&["--consistency", "MOST"]).unwrap_err().to_string().contains("LOCAL_QUORUM"));
        assert!(opts(&["--serial-consistency", "ONE"]).unwrap_err().to_string().contains("SERIAL or LOCAL_SERIAL"));
    }

    #[test]
    fn rates_heaps_and_params() {
        assert_eq!(parse_rate("5000/s").unwrap(), 5000.0);
        assert_eq!(parse_rate("250").unwrap(), 250.0);
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("fast").is_err());
        assert_eq!((parse_count("2000").unwrap(), parse_count("1M").unwrap()), (2_000, 1_000_000));
        assert!(parse_count("0").unwrap_err().to_string().contains("no operations"));
        assert_eq!(parse_heap_mb("1G").unwrap(), 1024);
        assert_eq!(parse_heap_mb("768m").unwrap(), 768);
        assert!(parse_heap_mb("lots").is_err());
        let p = parse_params(&["rows=10".into(), "keyspace = ks".into()]).unwrap();
        assert_eq!(p["rows"], "10");
        assert_eq!(p["keyspace"], "ks");
        assert!(parse_params(&["rows".into()]).is_err());
    }

    #[test]
    fn bad_flag_values_are_usage_errors() {
        use crate::exit::{classify, Exit};
        for e in [
            parse_rate("fast").unwrap_err(),
            parse_heap_mb("lots").unwrap_err(),
            parse_duration_s("duration", "soon").unwrap_err(),
            parse_params(&["rows".into()]).unwrap_err(),
            parse_count("0").unwrap_err(),
            parse_count("many").unwrap_err(),
        ] {
            let e = anyhow::Error::from(e);
            assert_eq!(classify(&e), Exit::Usage, "{e}");
        }
    }

    #[test]
    fn shards_from_the_flag_or_the_job_index() {
        assert_eq!(shard_index(Some("2/4"), None, None).unwrap(), Some((2, 4)));
        assert_eq!(shard_index(None, Some(3), Some("1".into())).unwrap(), Some((1, 3)));
        assert_eq!(shard_index(None, None, Some("1".into())).unwrap(), None);
        for (flag, n, job, says) in [
            (Some("4/4"), None, None, "0 <= INDEX < COUNT"),
            (Some("two"), None, None, "INDEX/COUNT"),
            (None, Some(3), None, "set JOB_COMPLETION_INDEX"),
            (None, Some(3), Some("5".to_string()), "not an index below 3"),
        ] {
            let e = anyhow::Error::from(shard_index(flag, n, job).unwrap_err());
            assert!(e.to_string().contains(says), "{e}");
            assert_eq!(crate::exit::classify(&e), crate::exit::Exit::Usage);
        }
    }

    #[test]
    fn redis_targets_keep_no_password() {
        let opts = |target: &str| {
            let cli = Cli::try_parse_from(["casslab", "run", "ycsb-a-redis", "--target", target, "--connections", "2"]).unwrap();
            let Command::Run(a) = cli.command else { unreachable!() };
            a.opts.to_config("ycsb-a-redis")
        };
        let cfg = opts("redis://bench@127.0.0.66:6390/1").unwrap();
        let r = cfg.redis.unwrap();
        assert_eq!((r.url.as_str(), r.connections, r.local), ("redis://bench@127.0.0.66:6390/1", 2, false));
        assert!(opts("redis://:pw@127.0.0.66:6390").unwrap_err().to_string().contains("CASSLAB_REDIS_PASSWORD"));
        assert!(opts("127.0.0.66:6390").unwrap_err().to_string().contains("redis://HOST:PORT"));
    }

    #[test]
    fn settings_read_json_or_text() {
        let s = parse_settings(&["concurrent_reads=64".into(), "commitlog_sync=batch".into(), r#"sstable={"selected_format":"bti"}"#.into()]).unwrap();
        assert_eq!(s["concurrent_reads"], serde_json::json!(64));
        assert_eq!(s["commitlog_sync"], serde_json::json!("batch"));
        assert_eq!(s["sstable"]["selected_format"], "bti");
        assert!(parse_settings(&["nokey".into()]).is_err());
    }

    #[test]
    fn cli_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn every_command_has_examples_and_the_environment_is_listed() {
        let mut cmd = command();
        let top = cmd.render_help().to_string();
        for var in ["CASSLAB_STORE", "CASSLAB_HOME", "CASSLAB_PASSWORD"] {
            assert!(top.contains(var), "{var} in --help:\n{top}");
        }
        for sub in cmd.get_subcommands_mut().filter(|s| s.get_name() != "help") {
            let name = sub.get_name().to_string();
            let help = sub.render_help().to_string();
            assert!(help.contains("EXAMPLES:\n  casslab "), "casslab {name} --help has no examples:\n{help}");
        }
        let store = command().find_subcommand("runs").unwrap().get_arguments().find(|a| a.get_id() == "store").unwrap().get_env().map(|e| e.to_os_string());
        assert_eq!(store, Some("CASSLAB_STORE".into()));
        let hosts = command().find_subcommand("lint").unwrap().get_arguments().find(|a| a.get_id() == "hosts").unwrap().get_help().unwrap().to_string();
        assert!(hosts.contains("live schema") && !hosts.contains("local node"), "{hosts}");
        for (sub, arg) in [("runs", "limit"), ("run", "port")] {
            let a = command().find_subcommand(sub).unwrap().get_arguments().find(|a| a.get_id() == arg).unwrap().get_help().map(|h| h.to_string());
            assert!(a.is_some_and(|h| !h.is_empty()), "{sub} --{arg} is described");
        }
    }

    #[test]
    fn output_flags_are_the_same_everywhere() {
        for args in [
            &["casslab", "runs", "--format", "csv"][..],
            &["casslab", "show", "3", "--format", "json"],
            &["casslab", "compare", "1", "2", "--format", "csv"],
            &["casslab", "-q", "runs"],
            &["casslab", "runs", "delete", "3", "4"],
            &["casslab", "runs", "tag", "3", "k=v", "--remove", "old"],
        ] {
            assert!(Cli::try_parse_from(args).is_ok(), "{args:?}");
        }
        let cli = Cli::try_parse_from(["casslab", "runs", "--workload", "kv", "--tag", "a=b", "--tag", "c", "--quiet"]).unwrap();
        assert!(cli.quiet);
        let Command::Runs(r) = cli.command else { unreachable!() };
        assert_eq!((r.list.workload.as_deref(), r.list.tags.len(), r.command.is_none()), (Some("kv"), 2, true));
        assert!(Cli::try_parse_from(["casslab", "show", "--format", "xml"]).is_err());
    }
}
