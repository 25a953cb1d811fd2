//! `casslab run … --find-max 'p99 < 10ms'`: prints the library's search
//! (`casslab_core::session::findmax`) — every step and the answer.

use casslab_core::report::text::ms;
use casslab_core::session::findmax::Search;

pub fn print(search: &Search) {
    let sla = &search.sla;
    println!("\nfind-max: {}", sla.text.trim_start_matches("total."));
    println!("  {:>4} {:>12} {:>12} {:>12} {:>10} {:>6} {:>5}", "step", "target/s", "achieved/s", sla.metric.noun(), "p99 ms", "met", "run");
    for (i, s) in search.steps.iter().enumerate() {
        println!(
            "  {:>4} {:>12} {:>12.0} {:>12} {:>10} {:>6} {:>5}",
            i,
            s.target_per_s.map(|r| format!("{r:.0}")).unwrap_or_else(|| "max".into()),
            s.achieved_per_s,
            if sla.metric.is_latency() { ms(s.value) } else { format!("{:.0}", s.value) },
            ms(s.p99_ns),
            if s.met { "yes" } else { "no" },
            s.run
        );
    }
    match search.best() {
        Some(best) if best.target_per_s.is_none() => println!("the SLA holds even at maximum throughput: {:.0} ops/s (run {})", best.achieved_per_s, best.run),
        Some(best) => println!("highest rate meeting the SLA: {:.0} ops/s (run {})", best.target_per_s.unwrap_or(best.achieved_per_s), best.run),
        None => println!("no rate tried met the SLA"),
    }
}
