//! Command-line behaviour that needs no database: help for every command, the built-in
//! workload list, and the errors a user gets for bad workload files and arguments
//! (file:line and what to fix, exit code 2 for workload mistakes; tests/exit_codes.rs has one
//! test per exit code).

mod common;
use common::{casslab, run};
use std::io::Write;

fn workload_file(body: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    f.write_all(body.as_bytes()).unwrap();
    f
}

const GOOD: &str = "name: t
params:
  rows: 100
keyspace: casslab_t
schema:
  - CREATE TABLE IF NOT EXISTS t (k bigint PRIMARY KEY, v text)
generators:
  key: { type: bigint, dist: uniform, min: 0, max: \"${rows}\" }
  val: { type: text, size: 10 }
operations:
  insert:
    cql: INSERT INTO t (k, v) VALUES (?, ?)
    args: [key, val]
  read:
    cql: SELECT v FROM t WHERE k = ?
    args: [key]
load:
  op: insert
  count: ${rows}
run:
  mix: { read: 1, insert: 1 }
  duration: 10s
";

/// Runs `casslab run` on a variant of GOOD against an address nothing listens on, so a valid
/// file fails only at connecting.
fn check(body: &str) -> (i32, String) {
    let f = workload_file(body);
    let (code, _, err) = run(casslab().args(["run", f.path().to_str().unwrap(), "--hosts", "127.0.0.1:1"]));
    (code, err.replace(f.path().to_str().unwrap(), "FILE"))
}

#[test]
fn a_valid_file_gets_as_far_as_connecting() {
    let (code, err) = check(GOOD);
    assert_eq!(code, 3, "cannot connect is a cluster failure: {err}");
    assert!(err.contains("cannot connect to 127.0.0.1:1"), "{err}");
    assert!(err.contains("casslab local up"), "the error should say what to do: {err}");
}

#[test]
fn unknown_generator_names_the_line_and_a_suggestion() {
    let (code, err) = check(&GOOD.replace("args: [key]", "args: [kee]"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:16:"), "{err}");
    assert!(err.contains("unknown generator \"kee\"") && err.contains("did you mean \"key\""), "{err}");
}

#[test]
fn wrong_number_of_values_for_markers() {
    let (code, err) = check(&GOOD.replace("args: [key, val]", "args: [key]"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:12:"), "{err}");
    assert!(err.contains("2 bind marker(s)") && err.contains("1 value(s)"), "{err}");
}

#[test]
fn all_ratios_zero() {
    let (code, err) = check(&GOOD.replace("mix: { read: 1, insert: 1 }", "mix: { read: 0, insert: 0 }"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:21:") && err.contains("every ratio is 0"), "{err}");
}

#[test]
fn bad_duration() {
    let (code, err) = check(&GOOD.replace("duration: 10s", "duration: ten seconds"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:22:") && err.contains("bad duration \"ten seconds\""), "{err}");
}

#[test]
fn unknown_distribution_with_suggestion() {
    let (code, err) = check(&GOOD.replace("dist: uniform", "dist: zipfain"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:8:") && err.contains("zipfian"), "{err}");
}

#[test]
fn unknown_operation_in_mix_and_load() {
    let (code, err) = check(&GOOD.replace("mix: { read: 1, insert: 1 }", "mix: { reed: 1, insert: 1 }"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:21:") && err.contains("unknown operation \"reed\"") && err.contains("\"read\""), "{err}");
    let (code, err) = check(&GOOD.replace("op: insert", "op: inzert"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:18:") && err.contains("inzert"), "{err}");
}

#[test]
fn yaml_syntax_and_unknown_keys() {
    let (code, err) = check(&GOOD.replace("    cql: SELECT v", "    cqll: SELECT v"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:15:") && err.contains("cqll"), "{err}");
}

#[test]
fn unknown_parameter_in_text_and_on_the_command_line() {
    let (code, err) = check(&GOOD.replace("count: ${rows}", "count: ${rowz}"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("FILE:19:") && err.contains("did you mean \"rows\""), "{err}");
    let f = workload_file(GOOD);
    let (code, _, err) = run(casslab().args(["run", f.path().to_str().unwrap(), "-P", "rowz=5", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no parameter \"rowz\""), "{err}");
}

#[test]
fn unknown_workload_name_suggests_a_builtin() {
    let (code, _, err) = run(casslab().args(["run", "ycsb-z", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2);
    assert!(err.contains("no built-in workload or file named \"ycsb-z\""), "{err}");
    assert!(err.contains("did you mean"), "{err}");
}

#[test]
fn bad_arguments_say_what_to_write() {
    let (code, _, err) = run(casslab().args(["run", "kv", "--rate", "fast", "--hosts", "127.0.0.1:1"]));
    assert_ne!(code, 0);
    assert!(err.contains("--rate \"fast\"") && err.contains("not a level"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--duration", "soon", "--hosts", "127.0.0.1:1"]));
    assert_ne!(code, 0);
    assert!(err.contains("--duration") && err.contains("bad duration"), "{err}");
}

#[test]
fn a_count_is_refused_with_a_duration_at_zero_and_in_an_experiment() {
    let (code, _, err) = run(casslab().args(["run", "kv", "--count", "2000", "--duration", "10s", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--count <N>") && err.contains("--duration <DURATION>"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "-n", "1k", "--find-max", "p99 < 10ms", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--find-max"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--count", "0", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--count 0") && err.contains("e.g. --count 100000"), "{err}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--count", "lots", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--count lots: write a whole number"), "{err}");
    let (code, _, err) = run(casslab().args(["experiment", "gc", "--count", "1000", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--count 1000: an experiment's runs last a duration"), "{err}");
}

#[test]
fn every_builtin_workload_parses_and_is_listed() {
    let (code, out, err) = run(casslab().arg("workloads"));
    assert_eq!(code, 0, "{err}");
    for name in ["ycsb-a", "ycsb-b", "ycsb-c", "ycsb-d", "ycsb-e", "ycsb-f", "kv"] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name} missing from:\n{out}");
        let (code, text, _) = run(casslab().args(["workloads", "show", name]));
        assert_eq!(code, 0);
        assert!(text.contains(&format!("name: {name}")));
    }
}

#[test]
fn every_command_has_help() {
    for args in [
        vec!["--help"],
        vec!["run", "--help"],
        vec!["local", "--help"],
        vec!["local", "up", "--help"],
        vec!["local", "status", "--help"],
        vec!["local", "down", "--help"],
        vec!["workloads", "--help"],
        vec!["runs", "--help"],
        vec!["show", "--help"],
        vec!["report", "--help"],
        vec!["merge", "--help"],
    ] {
        let (code, out, _) = run(casslab().args(&args));
        assert_eq!(code, 0, "{args:?}");
        assert!(out.contains("Usage:"), "{args:?}: {out}");
    }
    let (_, out, _) = run(casslab().args(["run", "--help"]));
    for flag in ["--rate", "--concurrency", "--hosts", "--user", "--tls-ca", "--json", "--hdr-log", "--reload", "--skip-load", "--load-only"] {
        assert!(out.contains(flag), "run --help lacks {flag}");
    }
}

#[test]
fn show_on_an_empty_store_says_so() {
    let (_d, store) = common::temp_store();
    drop(casslab_core::store::Store::open(&store).unwrap());
    let (code, _, err) = run(casslab().args(["show", "latest", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no saved runs"), "{err}");
    let (code, _, err) = run(casslab().args(["runs", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0);
    assert!(err.contains("no saved runs"), "{err}");
}

/// `casslab experiment` checks --event specs for every variant and prints the lint findings of
/// every variant before it touches a cluster (here: none listens at 127.0.0.1:1).
#[test]
fn experiment_checks_events_and_lints_before_connecting() {
    let exp = format!("{}/../../experiments/partition-set.yaml", env!("CARGO_MANIFEST_DIR"));
    let (code, _, err) = run(casslab().args(["experiment", &exp, "--hosts", "127.0.0.1:1", "--event", "5s kil node2"]));
    assert_ne!(code, 0);
    assert!(err.contains("did you mean \"kill\""), "{err}");
    assert!(!err.contains("cannot connect"), "checked after connecting:\n{err}");
    let (code, _, err) = run(casslab().args(["experiment", &exp, "--hosts", "127.0.0.1:1", "--event", "5s kill node2"]));
    assert_ne!(code, 0);
    assert!(err.contains("variant sync") && err.contains("exec CMD"), "a node action against --hosts must be refused:\n{err}");
    // lint findings of the IN variants point at their lines in the experiment file
    assert!(err.contains("[partition-in-fanout]") && err.contains("partition-set.yaml:"), "{err}");
    let (_, _, err) = run(casslab().args(["experiment", &exp, "--hosts", "127.0.0.1:1", "--no-lint", "--event", "5s kill node2"]));
    assert!(!err.contains("[partition-in-fanout]"), "--no-lint must silence lint:\n{err}");
}

/// A shipped experiment runs by its name wherever casslab is installed (`casslab workloads`
/// lists it, `workloads show` prints it), and `--plan` with no execution in the store plans
/// from the design and assumed spreads: it starts no node and connects to nothing (its home
/// is a directory no node lives in, and nothing there is created).
#[test]
fn shipped_experiments_run_by_name_and_plan_without_running_anything() {
    let dir = tempfile::tempdir().unwrap();
    let (home, store) = (dir.path().join("home"), dir.path().join("results.db"));
    let (code, out, err) =
        run(casslab().current_dir(dir.path()).env("CASSLAB_HOME", &home).args(["experiment", "gc", "--plan", "--no-lint", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("nothing was run") && !err.contains("connected"), "{err}");
    assert!(out.contains("plan (nothing run") && out.contains("zgc: read p99") && out.contains("3× smaller or larger"), "{out}");
    assert!(!home.join("node1").exists() && !home.join("cluster.json").exists(), "no node was set up");
    let (code, list, _) = run(casslab().args(["workloads"]));
    assert_eq!(code, 0);
    assert!(list.contains("experiments (variants compared") && list.contains("bins-list-vs-columns"), "{list}");
    let (code, shown, _) = run(casslab().args(["workloads", "show", "gc"]));
    assert_eq!((code, shown.starts_with("# G1 against ZGC")), (0, true), "{shown}");
    // a file of the name in the working directory wins over the shipped one
    std::fs::write(dir.path().join("gc"), "workload: kv\nvariants:\n  a: {}\n").unwrap();
    let (code, _, err) =
        run(casslab().current_dir(dir.path()).env("CASSLAB_HOME", &home).args(["experiment", "gc", "--plan", "--store", store.to_str().unwrap()]));
    assert_eq!(code, 2, "the local file is read (and has one variant): {err}");
}

/// Every command's help, at the width clap uses without a terminal.
fn help(args: &[&str]) -> String {
    let (code, out, err) = run(casslab().env("COLUMNS", "100").args(args));
    assert_eq!(code, 0, "casslab {}: {err}", args.join(" "));
    out
}

const COMMANDS: [&str; 14] =
    ["run", "experiment", "local", "workloads", "runs", "show", "report", "compare", "merge", "verify", "lint", "import", "completions", "man"];

/// `-h` fits a screen: the usage, a few examples, then each option on one line; `--help` has
/// every example and each option's full text.
#[test]
fn short_help_shows_examples_first_and_one_line_per_option() {
    for command in COMMANDS {
        let short = help(&[command, "-h"]);
        let examples = short.find("EXAMPLES:\n  casslab ").unwrap_or_else(|| panic!("{command} -h has no examples:\n{short}"));
        let options = short.find("\nOptions:\n").or(short.find("\nCommands:\n")).unwrap_or_else(|| panic!("{command} -h: {short}"));
        assert!(short.find("Usage: ").is_some_and(|u| u < examples) && examples < options, "{command} -h: usage, examples, options:\n{short}");
        // an option's help that does not fit its line goes on under it, indented past the names
        let wrapped: Vec<&str> = short[options..].lines().filter(|l| l.starts_with("            ") && !l.trim_start().starts_with('-')).collect();
        assert!(wrapped.is_empty(), "{command} -h: one line per option, but {wrapped:?}:\n{short}");
        let full = help(&[command, "--help"]);
        assert!(full.len() > short.len() && full.contains("EXAMPLES:\n  casslab "), "{command} --help:\n{full}");
    }
    for command in ["run", "experiment"] {
        let lines = help(&[command, "-h"]).lines().count();
        assert!(lines < 90, "{command} -h has {lines} lines");
    }
    // the full text is under --help only
    let words = |s: String| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (short, full) = (words(help(&["run", "-h"])), words(help(&["run", "--help"])));
    for detail in ["Latency is measured from each operation's intended start", "casslab run kv --json run.json --hdr-log run.hlog", "--barrier-timeout"] {
        assert!(!short.contains(detail) && full.contains(detail), "{detail}");
    }
}

/// `help run` lists every figure `--find-max` takes, from the parser's own list, and says why
/// ops_s is not one; a figure it does not take is refused with the same list.
#[test]
fn find_max_help_lists_what_an_sla_bounds() {
    let text = help(&["help", "run"]).split_whitespace().collect::<Vec<_>>().join(" ");
    let find_max = &text[text.find("--find-max <SLA>").unwrap()..text.find("--max-steps").unwrap()];
    let metrics: Vec<&str> = casslab_core::analysis::sla_metrics().collect();
    assert!(metrics.contains(&"p99") && metrics.contains(&"errors") && !metrics.contains(&"ops_s"));
    assert!(find_max.contains(&metrics.join(", ")), "{find_max}");
    assert!(find_max.contains("Throughput (ops_s) is what the search finds, not a bound"), "{find_max}");
    let (code, _, err) = run(casslab().args(["run", "kv", "--find-max", "p98 < 10ms", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("unknown metric \"p98\"; an SLA bounds one of {}", metrics.join(", "))), "{err}");
}

/// The examples of `help import` run as shown against the shipped profile: the operations they
/// name are the profile's.
#[test]
fn import_help_examples_run_on_the_shipped_profile() {
    let profile = format!("{}/../../docs/examples/stress.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&profile).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for at in ["stress.yaml", "docs/examples/stress.yaml"] {
        std::fs::create_dir_all(dir.path().join(at).parent().unwrap()).unwrap();
        std::fs::write(dir.path().join(at), &text).unwrap();
    }
    let examples = help(&["help", "import"]).replace("\\\n", " ");
    let stress: Vec<&str> = examples.lines().map(str::trim).filter(|l| l.starts_with("casslab import cassandra-stress")).collect();
    assert!(stress.iter().any(|l| l.contains("ops(")), "{examples}");
    for example in stress {
        let words = shell_words(example);
        let (code, _, err) = run(casslab().current_dir(dir.path()).args(&words[1..]));
        assert_eq!(code, 0, "`{example}` fails: {err}");
    }
    // the --command of `help import cassandra-stress` names the profile's operations too
    let command = help(&["help", "import", "cassandra-stress"]).split_whitespace().collect::<Vec<_>>().join(" ");
    let ops = command.split("ops(").nth(1).and_then(|s| s.split(')').next()).unwrap_or_else(|| panic!("{command}"));
    for op in ops.split(',').map(|o| o.split('=').next().unwrap()) {
        assert!(op == "insert" || text.contains(&format!("\n  {op}:\n")), "{op} is not an operation of {profile}");
    }
}

/// Splits a shell command line at spaces outside single quotes.
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    words.extend((!cur.is_empty()).then_some(cur));
    words
}

/// Each error says what is wrong once, however many errors it is made of.
#[test]
fn errors_are_printed_once() {
    let once = |err: &str, says: &str| {
        assert_eq!(err.matches(says).count(), 1, "`{says}` should be printed once:\n{err}");
    };
    let (code, _, err) = run(casslab().args(["run", "kv", "--find-max", "p99 < 10", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--find-max \"p99 < 10\": a latency needs a unit") && !err.contains("total."), "{err}");
    once(&err, "a latency needs a unit");

    // an experiment's variant that cannot connect
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("results.db");
    let store = store.to_str().unwrap();
    let experiment = |name: &str| {
        run(casslab().current_dir(dir.path()).env("CASSLAB_HOME", dir.path().join("home")).args([
            "experiment",
            name,
            "--hosts",
            "127.0.0.1:1",
            "--budget",
            "1m",
            "--no-lint",
            "--store",
            store,
        ]))
    };
    let (code, _, err) = experiment("bins-list-vs-columns");
    assert_eq!(code, 3, "{err}");
    once(&err, "cannot connect to 127.0.0.1:1");
    once(&err, "the driver said");

    // a server definition (`cluster:`) with --hosts, in an experiment and in a workload
    let (code, _, err) = experiment("gc");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("variant g1: "), "{err}");
    once(&err, "defines its server (`cluster:`)");
    let (code, err) = check(&format!("{GOOD}cluster: {{ heap_mb: 1024 }}\n"));
    assert_eq!(code, 2, "{err}");
    once(&err, "defines its server (`cluster:`)");
}

/// A mistake on a line whose value came from `-P` names the parameter as it was given.
#[test]
fn a_mistake_in_a_given_parameter_names_it() {
    let (code, _, err) = run(casslab().args(["run", "kv", "-P", "rows=-1", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("error: -P rows=-1: builtin:kv:") && err.contains(": load.count: give a whole number"), "{err}");
    // a mistake of the file's own is the file's
    let (code, err) = check(&GOOD.replace("op: insert", "op: inzert"));
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("error: FILE:18:"), "{err}");
    let f = workload_file(&GOOD.replace("    args: [key, val]", "    args: [key, val]\n    page_size: ${rows}"));
    let (code, _, err) = run(casslab().args(["run", f.path().to_str().unwrap(), "-P", "rows=0", "--hosts", "127.0.0.1:1"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("-P rows=0: ") && err.contains(":14: operation \"insert\": page_size"), "{err}");
}
