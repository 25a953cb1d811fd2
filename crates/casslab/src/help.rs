//! The EXAMPLES (and ENVIRONMENT) sections under each command's `--help`, kept apart from the
//! flag definitions in `cli.rs` so both stay readable. Plain text; clap prints it as is.

pub const TOP: &str = "\
EXAMPLES:
  casslab run ycsb-a -P rows=50000 --duration 30s     load and run YCSB-A on a local node
  casslab runs                                        list saved runs
  casslab report latest -o report.html                a page with charts of the last run
  casslab compare 12 15 --max-regression 10%          judge run 15 against run 12

ENVIRONMENT:
  CASSLAB_STORE           the results database (as --store)
  CASSLAB_HOME            directory of the local nodes and redis-server (as --home)
  CASSLAB_PASSWORD        the password of --user (never a flag, never stored)
  CASSLAB_REDIS_PASSWORD  the password of a --target Redis server
  CASSLAB_REDIS_SERVER    the redis-server binary a local Redis is started with

`casslab help COMMAND` documents each command; `casslab man` prints the manual.";

pub const RUN: &str = "\
EXAMPLES:
  casslab run ycsb-a -P rows=100000 --duration 60s
  casslab run kv --rate 5000 --duration 5m --tag variant=baseline
  casslab run kv --rate 5000 --count 1M
  casslab run my-workload.yaml --hosts 10.0.0.5,10.0.0.6 --dc dc1 --user bench
  casslab run kv --find-max 'p99 < 10ms'
  casslab run kv --rate 500 --event '60s kill node2' --event '120s start node2'
  casslab run kv --metrics-listen 127.0.0.1:9464 --stream intervals.jsonl
  casslab run kv --json run.json --hdr-log run.hlog

ENVIRONMENT:
  CASSLAB_PASSWORD (the password of --user), CASSLAB_STORE (as --store), CASSLAB_HOME (as --home),
  CASSLAB_REDIS_PASSWORD (a --target Redis server's password)";

pub const EXPERIMENT: &str = "\
EXAMPLES:
  casslab experiment experiments/compaction-strategies.yaml -o exp.html
  casslab experiment experiments/gc.yaml --plan
  casslab experiment experiments/gc.yaml --judge read.p99 --precision 10% --budget 30m
  casslab experiment experiments/partition-set.yaml --repetitions 3 --order shuffled";

pub const LOCAL: &str = "\
EXAMPLES:
  casslab local up                      one node on 127.0.0.1 (or the cluster saved under --home)
  casslab local up --nodes 3 --heap 768M
  casslab local up --dcs dc1:3,dc2:2
  casslab local status
  casslab local kill node2 && casslab local start node2
  casslab local nodetool node1 tablestats casslab_kv
  casslab local down --wipe

ENVIRONMENT:
  CASSLAB_HOME  where the nodes live (as --home)";

pub const WORKLOADS: &str = "\
EXAMPLES:
  casslab workloads
  casslab workloads show ycsb-a > my-workload.yaml";

pub const RUNS: &str = "\
EXAMPLES:
  casslab runs --limit 5
  casslab runs --workload kv --tag variant=baseline --format csv
  casslab runs tag 12 variant=cache nightly
  casslab runs tag 12 --remove nightly
  casslab runs delete 3 4 5

ENVIRONMENT:
  CASSLAB_STORE  results database (as --store)";

pub const SHOW: &str = "\
EXAMPLES:
  casslab show                          the latest run
  casslab show 12 --json run-12.json --hdr-log run-12.hlog
  casslab show 12 --format json | jq '.suspects'
  casslab show 12 --format csv > intervals.csv

ENVIRONMENT:
  CASSLAB_STORE  results database (as --store)";

pub const REPORT: &str = "\
EXAMPLES:
  casslab report latest -o report.html
  casslab report 12 15 --format md > pr-comment.md
  casslab report 12 -o - --format json | jq '.runs[0].suspects'

ENVIRONMENT:
  CASSLAB_STORE  results database (as --store)";

pub const COMPARE: &str = "\
EXAMPLES:
  casslab compare 12 15
  casslab compare 15 16 17 --baseline 12 --fail-if 'read.p99 > 45ms' --max-regression 10%
  casslab compare 12 15 --format csv > comparison.csv
  casslab compare --experiment cache -o cache.html

ENVIRONMENT:
  CASSLAB_STORE  results database (as --store)";

pub const MERGE: &str = "\
EXAMPLES:
  casslab merge s0.json s1.json s2.json
  casslab merge exports/ --json merged.json
  casslab merge run-id:big1";

pub const VERIFY: &str = "\
EXAMPLES:
  casslab verify kv -P rows=200000                    every key of kv's data set on the local node
  casslab verify ycsb-a --hosts 10.0.0.5 --consistency ALL
  casslab verify ycsb-a-redis --format json

ENVIRONMENT:
  CASSLAB_STORE (records of verified runs, as --store), CASSLAB_PASSWORD (the password of --user)";

pub const LINT: &str = "\
EXAMPLES:
  casslab lint tombstones-range-deletes
  casslab lint experiments/partition-set.yaml --json
  casslab lint my-workload.yaml --hosts 10.0.0.5 --user bench

ENVIRONMENT:
  CASSLAB_PASSWORD  the password of --user";

pub const COMPLETIONS: &str = "\
EXAMPLES:
  casslab completions bash > ~/.local/share/bash-completion/completions/casslab
  casslab completions zsh > ~/.zfunc/_casslab
  casslab completions fish > ~/.config/fish/completions/casslab.fish";

pub const MAN: &str = "\
EXAMPLES:
  casslab man | man -l -
  casslab man --dir ~/.local/share/man/man1";

pub const IMPORT: &str = "\
EXAMPLES:
  casslab import cassandra-stress stress.yaml -o stress.casslab.yaml
  casslab import cassandra-stress stress.yaml -o w.yaml --print-command --command 'user profile=stress.yaml ops(insert=1,simple1=3) duration=5m -rate threads=64'
  casslab import cluster --hosts 10.0.0.5 --keyspace shop --sample-rows 5000 -o shop.yaml
  casslab import capture traffic.jsonl -o replay.yaml && casslab run replay.yaml

ENVIRONMENT:
  CASSLAB_PASSWORD  the password of --user (import cluster)";
