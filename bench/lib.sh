# Sourced by the bench scripts: the casslab build and the Cassandra node they measure.

# bench_casslab: CASSLAB is the casslab to measure: as given, else a release build of this tree.
bench_casslab() {
  if [ -z "${CASSLAB:-}" ]; then
    cargo build --release -q -p casslab
    CASSLAB="$PWD/target/release/casslab"
  fi
}

# bench_node: NODE (ADDRESS:PORT) as given, else the node `casslab local up $UP_ARGS` starts
# (or finds running); sets HOST and PORT from it.
bench_node() {
  if [ -z "${NODE:-}" ]; then
    local up_args
    read -r -a up_args <<<"${UP_ARGS:-}"
    NODE="$("$CASSLAB" local up "${up_args[@]}" | tail -1 | cut -d, -f1)"
  fi
  HOST="${NODE%:*}"
  PORT="${NODE##*:}"
}
