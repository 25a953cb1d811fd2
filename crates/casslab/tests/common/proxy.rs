//! A loopback TCP proxy for the end-to-end tests that delays what the server sends by a known
//! amount, so a test can check casslab's latency figures against an injected delay with a real
//! Cassandra node behind it. Client→server bytes pass straight through; each chunk read from
//! the server at time t is written to the client at t + delay, in order, by a writer that
//! sleeps until each chunk is due (so the delay adds latency without throttling throughput).
//! The delay can be changed while connections are open, and `stall` holds every server→client
//! chunk back for a while (a one-off server stall). It is a measuring instrument, not a mock:
//! it never parses, drops or reorders bytes. Dropping it closes the listener and every
//! connection and joins its threads.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Longest single sleep of a waiting thread, so it notices a stop or a new stall promptly.
const NAP: Duration = Duration::from_millis(20);
/// How long before a chunk is due the writer stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(150);

pub struct DelayProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

struct Shared {
    upstream: SocketAddr,
    epoch: Instant,
    delay_ns: AtomicU64,
    /// End of the current stall, in nanoseconds since `epoch` (0: none yet).
    stall_until_ns: AtomicU64,
    stop: AtomicBool,
    connections: AtomicU64,
    bytes_to_server: AtomicU64,
    bytes_to_client: AtomicU64,
    chunks_to_client: AtomicU64,
    /// Sum over server→client chunks of how long after its due time each was written.
    lateness_ns: AtomicU64,
    /// Clones of every socket, shut down on drop so blocked reads return.
    sockets: Mutex<Vec<TcpStream>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl DelayProxy {
    /// Listens on `listen` (port 0 picks one) and forwards each connection to `upstream`.
    pub fn start(listen: SocketAddr, upstream: SocketAddr) -> io::Result<DelayProxy> {
        let listener = TcpListener::bind(listen)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            upstream,
            epoch: Instant::now(),
            delay_ns: AtomicU64::new(0),
            stall_until_ns: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            connections: AtomicU64::new(0),
            bytes_to_server: AtomicU64::new(0),
            bytes_to_client: AtomicU64::new(0),
            chunks_to_client: AtomicU64::new(0),
            lateness_ns: AtomicU64::new(0),
            sockets: Mutex::new(Vec::new()),
            threads: Mutex::new(Vec::new()),
        });
        let sh = shared.clone();
        let acceptor = thread::Builder::new().name("proxy-accept".into()).spawn(move || accept_loop(listener, sh))?;
        Ok(DelayProxy { addr, shared, acceptor: Some(acceptor) })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Delay of server→client bytes from now on (chunks already queued keep theirs).
    pub fn set_delay(&self, delay: Duration) {
        self.shared.delay_ns.store(delay.as_nanos() as u64, Ordering::SeqCst);
    }

    /// Holds every server→client chunk from now until `duration` has passed.
    pub fn stall(&self, duration: Duration) {
        let until = (Instant::now() + duration - self.shared.epoch).as_nanos() as u64;
        self.shared.stall_until_ns.fetch_max(until, Ordering::SeqCst);
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }

    pub fn bytes_to_server(&self) -> u64 {
        self.shared.bytes_to_server.load(Ordering::SeqCst)
    }

    /// Bytes written to clients (after their delay).
    pub fn bytes_to_client(&self) -> u64 {
        self.shared.bytes_to_client.load(Ordering::SeqCst)
    }

    /// Server→client chunks written so far, and the sum of how late after their due time
    /// they were written (the proxy's own error, e.g. from a busy CPU; stalls excluded).
    pub fn lateness(&self) -> (u64, Duration) {
        let sh = &self.shared;
        (sh.chunks_to_client.load(Ordering::SeqCst), Duration::from_nanos(sh.lateness_ns.load(Ordering::SeqCst)))
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        for s in self.shared.sockets.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        let threads: Vec<_> = self.shared.threads.lock().unwrap().drain(..).collect();
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Shared {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn stall_end(&self) -> Instant {
        self.epoch + Duration::from_nanos(self.stall_until_ns.load(Ordering::SeqCst))
    }

    /// Sleeps until `due` and past any stall; returns how late it woke, or None when the
    /// proxy stops first.
    fn wait_until(&self, due: Instant) -> Option<Duration> {
        loop {
            if self.stopped() {
                return None;
            }
            let now = Instant::now();
            let until = due.max(self.stall_end());
            if now >= until {
                return Some(now - until);
            }
            // the last stretch spun, not slept: a sleeping thread wakes tens of microseconds
            // late, more than the smallest delays measured through this proxy
            if until - now <= SPIN {
                std::hint::spin_loop();
                continue;
            }
            thread::sleep((until - now - SPIN).min(NAP));
        }
    }

    fn spawn(self: &Arc<Self>, name: &str, f: impl FnOnce(Arc<Shared>) + Send + 'static) {
        let sh = self.clone();
        if let Ok(h) = thread::Builder::new().name(name.into()).spawn(move || f(sh)) {
            self.threads.lock().unwrap().push(h);
        }
    }
}

fn accept_loop(listener: TcpListener, sh: Arc<Shared>) {
    while !sh.stopped() {
        match listener.accept() {
            Ok((client, _)) => {
                if let Err(e) = open(&sh, client) {
                    eprintln!("proxy: cannot reach {}: {e}", sh.upstream);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => thread::sleep(Duration::from_millis(5)),
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Connects one accepted client to the upstream and starts its three threads.
fn open(sh: &Arc<Shared>, client: TcpStream) -> io::Result<()> {
    client.set_nonblocking(false)?;
    let server = TcpStream::connect_timeout(&sh.upstream, Duration::from_secs(5))?;
    for s in [&client, &server] {
        s.set_nodelay(true)?;
        sh.sockets.lock().unwrap().push(s.try_clone()?);
    }
    sh.connections.fetch_add(1, Ordering::SeqCst);
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let (client_r, server_w) = (client.try_clone()?, server.try_clone()?);
    sh.spawn("proxy-up", move |sh| {
        pump_up(&sh, client_r, server_w);
    });
    sh.spawn("proxy-down-read", move |sh| {
        read_down(&sh, server, tx);
    });
    sh.spawn("proxy-down-write", move |sh| {
        write_down(&sh, client, rx);
    });
    Ok(())
}

/// Client → server, undelayed.
fn pump_up(sh: &Shared, mut from: TcpStream, mut to: TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                sh.bytes_to_server.fetch_add(n as u64, Ordering::SeqCst);
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Server → queue: stamps each chunk with the time it is due at the client.
fn read_down(sh: &Shared, mut from: TcpStream, queue: mpsc::Sender<(Instant, Vec<u8>)>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let due = Instant::now() + Duration::from_nanos(sh.delay_ns.load(Ordering::SeqCst));
                if queue.send((due, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        }
    }
}

/// Queue → client, each chunk when it is due; closes the client's side when the server's ends.
fn write_down(sh: &Shared, mut to: TcpStream, queue: mpsc::Receiver<(Instant, Vec<u8>)>) {
    while let Ok((due, chunk)) = queue.recv() {
        let Some(late) = sh.wait_until(due) else { break };
        // counted first, so a client that has read these bytes also sees them counted
        sh.lateness_ns.fetch_add(late.as_nanos() as u64, Ordering::SeqCst);
        sh.chunks_to_client.fetch_add(1, Ordering::SeqCst);
        sh.bytes_to_client.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        if to.write_all(&chunk).is_err() {
            let _ = to.shutdown(Shutdown::Both);
            return;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
