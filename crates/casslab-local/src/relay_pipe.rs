//! One connection through the relay, both ways, on one thread: each chunk read from one side
//! is written to the other when it is due — read time plus the link's delay (give or take its
//! jitter; a lost chunk later still) — so the delay is pipelined (bytes keep flowing behind a
//! chunk in flight: a delay, not a bandwidth cap) and bytes stay in order. A cut link neither
//! reads nor writes: connections stay open, the senders' buffers fill as TCP's would, and what
//! waited crosses after the heal (a side that gives up during the cut closes both). The link is
//! looked up again whenever the rules change ([`SharedRules`]), so a fault acts on connections
//! already open. Non-blocking sockets, `ppoll` with a nanosecond timeout (the relay sets a
//! 1 µs timer slack), no allocation beyond each chunk's bytes.

use crate::relay_rules::{link, Endpoint, Faults, Link, Topology, LOSS_PENALTY_US};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// The most a chunk read at once holds.
const READ_CHUNK: usize = 64 * 1024;
/// Bytes queued one way before the relay stops reading that side (TCP backpressure).
const QUEUE_CAP_BYTES: usize = 8 << 20;
/// How often a cut connection looks whether the cut ended.
const BLOCKED_RECHECK: Duration = Duration::from_millis(10);

/// The relay's distances and faults, shared by every connection; each change bumps a
/// generation that connections compare against to look their link up again.
#[derive(Debug, Default)]
pub struct SharedRules {
    state: RwLock<(Topology, Faults)>,
    generation: AtomicU64,
}

impl SharedRules {
    pub fn new(topology: Topology) -> SharedRules {
        SharedRules { state: RwLock::new((topology, Faults::default())), generation: AtomicU64::new(0) }
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn link(&self, a: Endpoint, b: Endpoint) -> Link {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        link(&state.0, &state.1, a, b)
    }

    /// Changes the distances or the faults; every connection sees the change at its next turn.
    pub fn change<T>(&self, f: impl FnOnce(&mut Topology, &mut Faults) -> T) -> T {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let (topology, faults) = &mut *state;
        let out = f(topology, faults);
        self.generation.fetch_add(1, Ordering::AcqRel);
        out
    }

    pub fn snapshot(&self) -> (Topology, Faults) {
        self.state.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A small xorshift generator for jitter and loss (no cryptographic claim).
struct Rng(u64);

impl Rng {
    fn seeded(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Chunk {
    due: Instant,
    data: Vec<u8>,
    sent: usize,
}

/// One way of a connection.
#[derive(Default)]
struct Way {
    queue: VecDeque<Chunk>,
    queued_bytes: usize,
    last_due: Option<Instant>,
    /// The reading side ended (what is queued still goes, then the other side is shut).
    read_done: bool,
    /// The writing side was shut after the last byte.
    shut: bool,
    /// The last write would have blocked: wait until the socket takes more.
    stalled: bool,
}

impl Way {
    fn push(&mut self, data: &[u8], now: Instant, l: &Link, rng: &mut Rng) {
        let mut delay_us = l.delay_us as f64;
        if l.jitter_us > 0 {
            delay_us += (rng.unit() * 2.0 - 1.0) * l.jitter_us as f64;
        }
        if l.loss > 0.0 && rng.unit() < l.loss {
            delay_us += (LOSS_PENALTY_US + 2 * l.delay_us) as f64;
        }
        let due = now + Duration::from_micros(delay_us.max(0.0) as u64);
        let due = self.last_due.map_or(due, |last| due.max(last));
        self.last_due = Some(due);
        self.queued_bytes += data.len();
        self.queue.push_back(Chunk { due, data: data.to_vec(), sent: 0 });
    }

    /// Writes what is due by `now`; an error ends the connection.
    fn flush(&mut self, to: &TcpStream, now: Instant) -> std::io::Result<()> {
        while let Some(c) = self.queue.front_mut() {
            if c.due > now {
                break;
            }
            match (&*to).write(&c.data[c.sent..]) {
                Ok(n) => {
                    c.sent += n;
                    self.queued_bytes -= n;
                    if c.sent == c.data.len() {
                        self.queue.pop_front();
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.stalled = true;
                    break;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Waits on `fds` for at most `timeout` (forever when `None`).
fn wait(fds: &mut [libc::pollfd], timeout: Option<Duration>) {
    let ts = timeout.map(|d| libc::timespec { tv_sec: d.as_secs() as libc::time_t, tv_nsec: d.subsec_nanos() as libc::c_long });
    let ts_ptr = ts.as_ref().map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` is a valid slice of pollfd for the call's duration; the timespec outlives it.
    unsafe {
        libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ts_ptr, std::ptr::null());
    }
}

/// Moves bytes between `a` (the dialer, `ends.0`) and `b` (the node dialled, `ends.1`) until
/// both ways are done or either side fails; `first` was already read from `a` (the greeting).
pub fn pipe(a: TcpStream, b: TcpStream, ends: (Endpoint, Endpoint), rules: &SharedRules, first: Vec<u8>) {
    let streams = [a, b];
    for s in &streams {
        if s.set_nonblocking(true).is_err() {
            return;
        }
        let _ = s.set_nodelay(true);
    }
    let clock = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let mut rng = Rng::seeded(clock ^ ((streams[0].as_raw_fd() as u64) << 32) ^ u64::from(std::process::id()));
    let mut ways = [Way::default(), Way::default()];
    let mut generation = rules.generation();
    let mut l = rules.link(ends.0, ends.1);
    if !first.is_empty() {
        ways[0].push(&first, Instant::now(), &l, &mut rng);
    }
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let g = rules.generation();
        if g != generation {
            generation = g;
            l = rules.link(ends.0, ends.1);
        }
        let now = Instant::now();
        // way 0 goes from a to b, way 1 from b to a
        for (w, to) in [(0, 1), (1, 0)] {
            if !l.blocked && !ways[w].stalled && ways[w].flush(&streams[to], now).is_err() {
                return;
            }
            if ways[w].read_done && ways[w].queue.is_empty() && !ways[w].shut {
                let _ = streams[to].shutdown(Shutdown::Write);
                ways[w].shut = true;
            }
        }
        if ways.iter().all(|w| w.shut) {
            return;
        }
        let mut fds = streams.each_ref().map(|s| libc::pollfd { fd: s.as_raw_fd(), events: 0, revents: 0 });
        let mut timeout: Option<Duration> = None;
        for (w, to) in [(0, 1), (1, 0)] {
            let way = &ways[w];
            if !way.read_done {
                // a side that hangs up is noticed even while the link is cut
                fds[w].events |= libc::POLLRDHUP;
                if !l.blocked && way.queued_bytes < QUEUE_CAP_BYTES {
                    fds[w].events |= libc::POLLIN;
                }
            }
            if l.blocked {
                timeout = Some(BLOCKED_RECHECK);
            } else if way.stalled {
                fds[to].events |= libc::POLLOUT;
            } else if let Some(front) = way.queue.front() {
                let until = front.due.saturating_duration_since(now);
                timeout = Some(timeout.map_or(until, |t| t.min(until)));
            }
        }
        wait(&mut fds, timeout);
        // the rules may have changed while it waited: what it reads now crosses the new link
        let g = rules.generation();
        if g != generation {
            generation = g;
            l = rules.link(ends.0, ends.1);
        }
        for (w, to) in [(0, 1), (1, 0)] {
            let revents = fds[w].revents;
            if fds[to].revents & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) != 0 {
                ways[w].stalled = false;
            }
            if l.blocked {
                if revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0 {
                    return;
                }
                continue;
            }
            if ways[w].read_done || revents & (libc::POLLIN | libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) == 0 {
                continue;
            }
            match (&streams[w]).read(&mut buf) {
                Ok(0) => ways[w].read_done = true,
                Ok(n) => ways[w].push(&buf[..n], Instant::now(), &l, &mut rng),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
                Err(_) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use casslab_core::network::{DcPair, NetworkChange, Rtt};
    use std::net::TcpListener;
    use std::sync::Arc;

    /// An echo server on an ephemeral loopback port, living as long as the test.
    fn echo() -> std::net::SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for c in l.incoming() {
                let Ok(mut c) = c else { continue };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = c.read(&mut buf) {
                        if n == 0 || c.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        addr
    }

    /// A relay in front of an echo server: node 0 (dc1) dials node 1 (dc2) through it.
    fn relayed(rules: Arc<SharedRules>) -> TcpStream {
        let target = echo();
        let front = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = front.local_addr().unwrap();
        std::thread::spawn(move || {
            let (a, _) = front.accept().unwrap();
            let b = TcpStream::connect(target).unwrap();
            pipe(a, b, (Endpoint::Node(0), Endpoint::Node(1)), &rules, Vec::new());
        });
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    fn two_dcs(rtt_ms: u64) -> Topology {
        Topology { dcs: vec!["dc1".into(), "dc2".into()], rtt: [(DcPair::new("dc1", "dc2").unwrap(), Rtt::from_ms(rtt_ms))].into(), ..Topology::default() }
    }

    fn ping(s: &mut TcpStream, bytes: &[u8]) -> Duration {
        let started = Instant::now();
        s.write_all(bytes).unwrap();
        let mut back = vec![0u8; bytes.len()];
        s.read_exact(&mut back).unwrap();
        assert_eq!(back, bytes);
        started.elapsed()
    }

    #[test]
    fn bytes_cross_both_ways_no_sooner_than_the_round_trip() {
        let rules = Arc::new(SharedRules::new(two_dcs(40)));
        let mut s = relayed(rules);
        // the echo's answer crosses the relay twice: 20 ms each way
        assert!(ping(&mut s, b"hello") >= Duration::from_millis(40));
        // a megabyte in pieces arrives whole and in order (a delay, not a cap)
        let big: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let mut reader = s.try_clone().unwrap();
        let expect = big.clone();
        let got = std::thread::spawn(move || {
            let mut back = vec![0u8; expect.len()];
            reader.read_exact(&mut back).unwrap();
            back == expect
        });
        for piece in big.chunks(10_000) {
            s.write_all(piece).unwrap();
        }
        assert!(got.join().unwrap(), "the bytes came back in order");
    }

    #[test]
    fn a_cut_link_holds_the_bytes_until_the_heal() {
        let rules = Arc::new(SharedRules::new(two_dcs(0)));
        let mut s = relayed(rules.clone());
        ping(&mut s, b"before");
        rules.change(|t, f| f.apply(&NetworkChange::Partition { sides: vec![vec![0], vec![1]] }, t, 0));
        s.write_all(b"during").unwrap();
        s.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
        let mut back = [0u8; 6];
        let e = s.read(&mut back).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut), "{e}");
        rules.change(|t, f| f.apply(&NetworkChange::Heal, t, 0));
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"during", "what waited crossed after the heal");
        // a link that turns slow slows the connection already open
        rules.change(|t, f| f.apply(&NetworkChange::Slow { nodes: vec![1], rtt: Rtt::from_ms(60) }, t, 0));
        assert!(ping(&mut s, b"slow") >= Duration::from_millis(60));
    }

    #[test]
    fn a_closed_side_closes_the_other_after_what_is_queued() {
        let rules = Arc::new(SharedRules::new(two_dcs(20)));
        let mut s = relayed(rules);
        s.write_all(b"last words").unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut all = Vec::new();
        s.read_to_end(&mut all).unwrap();
        assert_eq!(all, b"last words", "the echo answered, then the relay passed its close on");
    }
}
