//! The EXAMPLES and ENVIRONMENT sections of each command's help, kept apart from the flag
//! definitions in `cli/` so both stay readable. `-h` shows a command's first few examples
//! between its usage and its options (each option with one line), `--help` every example there
//! and each option's full text; the environment comes after the options in both. Plain text;
//! clap prints it as is, and `cli::command` attaches it.

/// One command's help beyond its flags.
pub struct Page {
    /// The command it belongs to (`""`: casslab itself).
    pub command: &'static str,
    /// Examples, one a line, the most useful first (a line ending in `\` goes on in the next).
    pub examples: &'static [&'static str],
    /// How many of the examples `-h` shows.
    pub short: usize,
    /// The ENVIRONMENT section (and any closing words), or nothing.
    pub environment: &'static str,
}

impl Page {
    /// The EXAMPLES section: every example under `--help`, the first few under `-h`.
    pub fn examples(&self, all: bool) -> String {
        let shown = if all { self.examples } else { &self.examples[..self.short.min(self.examples.len())] };
        format!("EXAMPLES:\n  {}", shown.join("\n  "))
    }
}

/// Every command's page. A command without one has no examples (a test says which have).
pub const PAGES: &[Page] = &[
    Page {
        command: "",
        examples: &[
            "casslab run ycsb-a -P rows=50000 --duration 30s     load and run YCSB-A on a local node",
            "casslab runs                                        list saved runs",
            "casslab report latest -o report.html                a page with charts of the last run",
            "casslab compare 12 15 --max-regression 10%          judge run 15 against run 12",
        ],
        short: 4,
        environment: "\
ENVIRONMENT:
  CASSLAB_STORE           the results database (as --store)
  CASSLAB_HOME            directory of the local nodes and redis-server (as --home)
  CASSLAB_PASSWORD        the password of --user (never a flag, never stored)
  CASSLAB_REDIS_PASSWORD  the password of a --target Redis server
  CASSLAB_REDIS_SERVER    the redis-server binary a local Redis is started with

`casslab help COMMAND` documents each command; `casslab man` prints the manual.",
    },
    Page {
        command: "run",
        examples: &[
            "casslab run ycsb-a -P rows=100000 --duration 60s",
            "casslab run kv --rate 5000 --duration 5m --tag variant=baseline",
            "casslab run kv --rate 5000 --count 1M",
            "casslab run my-workload.yaml --hosts 10.0.0.5,10.0.0.6 --dc dc1 --user bench",
            "casslab run kv --find-max 'p99 < 10ms'",
            "casslab run kv --rate 500 --event '60s kill node2' --event '120s start node2'",
            "casslab run kv --metrics-listen 127.0.0.1:9464 --stream intervals.jsonl",
            "casslab run kv --json run.json --hdr-log run.hlog",
        ],
        short: 4,
        environment: "\
ENVIRONMENT:
  CASSLAB_PASSWORD (the password of --user), CASSLAB_STORE (as --store), CASSLAB_HOME (as --home),
  CASSLAB_REDIS_PASSWORD (a --target Redis server's password)",
    },
    Page {
        command: "experiment",
        examples: &[
            "casslab experiment experiments/compaction-strategies.yaml -o exp.html",
            "casslab experiment experiments/gc.yaml --plan",
            "casslab experiment experiments/gc.yaml --judge read.p99 --precision 10% --budget 30m",
            "casslab experiment experiments/partition-set.yaml --repetitions 3 --order shuffled",
        ],
        short: 3,
        environment: "",
    },
    Page {
        command: "local",
        examples: &[
            "casslab local up                      one node on 127.0.0.1 (or the cluster saved under --home)",
            "casslab local up --nodes 3 --heap 768M",
            "casslab local status",
            "casslab local down --wipe",
            "casslab local up --dcs dc1:3,dc2:2",
            "casslab local kill node2 && casslab local start node2",
            "casslab local nodetool node1 tablestats casslab_kv",
        ],
        short: 4,
        environment: "\
ENVIRONMENT:
  CASSLAB_HOME  where the nodes live (as --home)",
    },
    Page { command: "workloads", examples: &["casslab workloads", "casslab workloads show ycsb-a > my-workload.yaml"], short: 2, environment: "" },
    Page {
        command: "runs",
        examples: &[
            "casslab runs --limit 5",
            "casslab runs --workload kv --tag variant=baseline --format csv",
            "casslab runs tag 12 variant=cache nightly",
            "casslab runs tag 12 --remove nightly",
            "casslab runs delete 3 4 5",
        ],
        short: 5,
        environment: "\
ENVIRONMENT:
  CASSLAB_STORE  results database (as --store)",
    },
    Page {
        command: "show",
        examples: &[
            "casslab show                          the latest run",
            "casslab show 12 --json run-12.json --hdr-log run-12.hlog",
            "casslab show 12 --format json | jq '.suspects'",
            "casslab show 12 --format csv > intervals.csv",
        ],
        short: 4,
        environment: "\
ENVIRONMENT:
  CASSLAB_STORE  results database (as --store)",
    },
    Page {
        command: "report",
        examples: &[
            "casslab report latest -o report.html",
            "casslab report 12 15 --format md > pr-comment.md",
            "casslab report 12 -o - --format json | jq '.runs[0].suspects'",
        ],
        short: 3,
        environment: "\
ENVIRONMENT:
  CASSLAB_STORE  results database (as --store)",
    },
    Page {
        command: "compare",
        examples: &[
            "casslab compare 12 15",
            "casslab compare 15 16 17 --baseline 12 --fail-if 'read.p99 > 45ms' --max-regression 10%",
            "casslab compare 12 15 --format csv > comparison.csv",
            "casslab compare --experiment cache -o cache.html",
        ],
        short: 4,
        environment: "\
ENVIRONMENT:
  CASSLAB_STORE  results database (as --store)",
    },
    Page {
        command: "merge",
        examples: &["casslab merge s0.json s1.json s2.json", "casslab merge exports/ --json merged.json", "casslab merge run-id:big1"],
        short: 3,
        environment: "",
    },
    Page {
        command: "verify",
        examples: &[
            "casslab verify kv -P rows=200000                    every key of kv's data set on the local node",
            "casslab verify ycsb-a --hosts 10.0.0.5 --consistency ALL",
            "casslab verify ycsb-a-redis --format json",
        ],
        short: 3,
        environment: "\
ENVIRONMENT:
  CASSLAB_STORE (records of verified runs, as --store), CASSLAB_PASSWORD (the password of --user)",
    },
    Page {
        command: "lint",
        examples: &[
            "casslab lint tombstones-range-deletes",
            "casslab lint experiments/partition-set.yaml --json",
            "casslab lint my-workload.yaml --hosts 10.0.0.5 --user bench",
        ],
        short: 3,
        environment: "\
ENVIRONMENT:
  CASSLAB_PASSWORD  the password of --user",
    },
    Page {
        command: "import",
        examples: &[
            "casslab import cassandra-stress docs/examples/stress.yaml -o stress.casslab.yaml",
            "casslab import cluster --hosts 10.0.0.5 --keyspace shop --sample-rows 5000 -o shop.yaml",
            "casslab import capture traffic.jsonl -o replay.yaml && casslab run replay.yaml",
            "casslab import cassandra-stress docs/examples/stress.yaml -o w.yaml --print-command \\",
            "  --command 'user ops(insert=1,latest=3) duration=5m -rate threads=64'",
        ],
        short: 3,
        environment: "\
ENVIRONMENT:
  CASSLAB_PASSWORD  the password of --user (import cluster)",
    },
    Page {
        command: "completions",
        examples: &[
            "casslab completions bash > ~/.local/share/bash-completion/completions/casslab",
            "casslab completions zsh > ~/.zfunc/_casslab",
            "casslab completions fish > ~/.config/fish/completions/casslab.fish",
        ],
        short: 3,
        environment: "",
    },
    Page { command: "man", examples: &["casslab man | man -l -", "casslab man --dir ~/.local/share/man/man1"], short: 2, environment: "" },
];
