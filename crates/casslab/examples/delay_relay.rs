//! A delaying relay for benchmarks: every byte a Cassandra node sends its clients reaches them
//! a set delay later (the test suite's measuring proxy, `tests/common/proxy.rs`, as a
//! program). The delay is read from a control file (microseconds) every 20 ms, so that an
//! experiment's variants can set their own with an `exec` event at the start of each run; how
//! late each chunk was written after it was due is summed, and written with the chunk count to
//! a stats file every second. `bench/power.sh` uses it to give two variants a known
//! difference of server latency.
//!
//! ```text
//! cargo run --release -p casslab --example delay_relay -- LISTEN UPSTREAM CONTROL_FILE STATS_FILE
//! ```

#[path = "../tests/common/proxy.rs"]
#[allow(dead_code)]
mod proxy;

use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [listen, upstream, control, stats] = &args[..] else {
        eprintln!("usage: delay_relay LISTEN UPSTREAM CONTROL_FILE STATS_FILE");
        std::process::exit(2);
    };
    let relay = proxy::DelayProxy::start(listen.parse().expect("LISTEN: HOST:PORT"), upstream.parse().expect("UPSTREAM: HOST:PORT")).expect("cannot listen");
    eprintln!("relaying {} -> {upstream}; delay from {control}", relay.addr());
    let mut delay_us = 0u64;
    let mut tick = 0u64;
    loop {
        if let Some(us) = std::fs::read_to_string(control).ok().and_then(|t| t.trim().parse::<u64>().ok()) {
            if us != delay_us {
                delay_us = us;
                relay.set_delay(Duration::from_micros(us));
            }
        }
        tick += 1;
        if tick.is_multiple_of(50) {
            let (chunks, late) = relay.lateness();
            let _ = std::fs::write(stats, format!("delay_us {delay_us}\nchunks {chunks}\nlate_ns_total {}\n", late.as_nanos()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
