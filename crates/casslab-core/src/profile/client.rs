//! A CPU profile of casslab itself while it generates load (`--profile-client`), so a slow
//! client can be told from a slow server: every thread sampled 99 times a second by `pprof`
//! (SIGPROF, stacks unwound in the process), each sample's stack named by its thread and
//! placed on the run's clock, as one [`Profile`] of node [`CLIENT_NODE`].

use super::{Profile, ProfileBuilder, ProfileError, ProfileKind};

/// The node name the client's profile carries.
pub const CLIENT_NODE: &str = "casslab (client)";
/// Samples per second and thread.
const FREQUENCY_HZ: i32 = 99;

/// A profile of this process under way.
pub struct ClientProfiler {
    guard: pprof::ProfilerGuard<'static>,
}

impl ClientProfiler {
    /// Starts sampling this process (one profiler per process: a second start is an error).
    pub fn start() -> Result<ClientProfiler, ProfileError> {
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(FREQUENCY_HZ)
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()
            .map_err(|e| ProfileError::Record(format!("the client could not be profiled: {e}")))?;
        Ok(ClientProfiler { guard })
    }

    /// Stops sampling; the profile on the run's clock (`t0_unix_ms`), `None` without a sample.
    pub fn finish(self, t0_unix_ms: i64) -> Result<Option<Profile>, ProfileError> {
        let report = self.guard.report().build().map_err(|e| ProfileError::Record(format!("the client's profile could not be read: {e}")))?;
        let mut b = ProfileBuilder::new(CLIENT_NODE, ProfileKind::Cpu, "casslab's own samples (pprof, 99 Hz)");
        for (frames, count) in &report.data {
            let mut stack: Vec<String> = vec![thread_group(&frames.thread_name_or_id())];
            for frame in frames.frames.iter().rev() {
                for symbol in frame.iter().rev() {
                    stack.push(symbol.name());
                }
            }
            let at_ms = frames.sample_timestamp.duration_since(std::time::UNIX_EPOCH).ok().map(|d| d.as_millis() as i64 - t0_unix_ms);
            b.add(&stack, at_ms, (*count).max(0) as u64);
        }
        Ok((!b.is_empty()).then(|| b.finish()))
    }
}

/// A thread's name without its number (`tokio-runtime-worker`, `casslab-engine-3` → `casslab-engine`),
/// so threads of one pool share their stacks.
fn thread_group(name: &str) -> String {
    name.trim_end_matches(|c: char| c.is_ascii_digit()).trim_end_matches(['-', '_', ' ']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's CPU time, ms.
    fn thread_cpu_ms() -> u64 {
        let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: a valid timespec to write into
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        t.tv_sec as u64 * 1000 + t.tv_nsec as u64 / 1_000_000
    }

    /// Spins until this thread has had `ms` of CPU (however busy the machine), or 20 s pass.
    #[inline(never)]
    fn spin_for_client_profile(ms: u64) -> u64 {
        let (start, deadline) = (thread_cpu_ms(), std::time::Instant::now() + std::time::Duration::from_secs(20));
        let mut x = 0u64;
        while thread_cpu_ms() - start < ms && std::time::Instant::now() < deadline {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        }
        x
    }

    #[test]
    fn the_client_profile_names_what_this_process_ran() {
        let t0 = crate::engine::unix_now_ms();
        let p = ClientProfiler::start().unwrap();
        spin_for_client_profile(800);
        let profile = p.finish(t0).unwrap().expect("samples of 800 ms of spinning");
        assert_eq!((profile.node.as_str(), profile.kind), (CLIENT_NODE, ProfileKind::Cpu));
        let folded = profile.folded(None);
        let spinning: u64 = folded.iter().filter(|(s, _)| s.contains("spin_for_client_profile")).map(|(_, w)| *w).sum();
        // 800 ms of this thread's CPU at 99 Hz is ~80 samples of the process; other test threads
        // running at the same time take their share of them
        assert!(spinning >= 5, "the spinning frame, sampled: {spinning}");
        assert!(profile.samples.iter().all(|s| s.at_ms.is_some_and(|t| (-100..25_000).contains(&t))), "on the run's clock");
        assert_eq!(thread_group("casslab-engine-3"), "casslab-engine");
    }
}
