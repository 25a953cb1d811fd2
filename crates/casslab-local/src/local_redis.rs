//! A real local `redis-server`, from the OS package, that casslab starts and stops itself, as
//! it does Cassandra nodes: it lives under `home/redis` (its config, pid file, log, and a data
//! directory it never writes to: persistence is off, so no snapshot's fork lands in a
//! measurement), listens on one loopback address and port, and is recognised by its pid file
//! together with the process title Redis sets (`redis-server ADDRESS:PORT`), so `down` stops
//! only the server casslab started — never a redis-server of the system's own service.
//! `home/redis/redis.json` keeps the address and port of the last `up` for later commands.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::local_error::{IoContext, LocalError};
use crate::node_process::{self, Stopped};

/// The port a local redis-server gets unless told otherwise: Redis's own.
pub const DEFAULT_REDIS_PORT: u16 = 6379;

/// How long `up` waits for the server to answer PING.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how a local redis-server runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedisOptions {
    /// casslab's home; the server lives in `home/redis`.
    #[serde(skip)]
    pub home: PathBuf,
    /// A loopback address.
    pub address: Ipv4Addr,
    pub port: u16,
}

/// A local redis-server that casslab starts and stops.
#[derive(Debug, Clone)]
pub struct LocalRedis {
    opts: RedisOptions,
}

/// What `status` sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisStatus {
    pub address: Ipv4Addr,
    pub port: u16,
    /// The pid of the server casslab started, while it runs.
    pub pid: Option<u32>,
    /// It answers PING.
    pub answers: bool,
    pub dir: PathBuf,
    pub log_file: PathBuf,
}

impl RedisStatus {
    /// Running and answering PING.
    pub fn healthy(&self) -> bool {
        self.pid.is_some() && self.answers
    }

    /// `casslab local redis status` as text: one table line for the server.
    pub fn table(&self) -> String {
        let mut t = casslab_core::report::table::TextTable::new(["server", "address", "pid", "process", "answers", "log"]).right([2]);
        t.row([
            "redis-server".to_string(),
            format!("{}:{}", self.address, self.port),
            self.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
            (if self.pid.is_some() { "running" } else { "stopped" }).to_string(),
            (if self.answers { "yes" } else { "no" }).to_string(),
            self.log_file.display().to_string(),
        ]);
        t.to_string()
    }
}

impl LocalRedis {
    pub fn new(mut opts: RedisOptions) -> LocalRedis {
        opts.home = crate::normalize_home(&opts.home);
        LocalRedis { opts }
    }

    /// The server under `home` as the last `up` left it, or a default one on 127.0.0.1:6379.
    pub fn open(home: &Path) -> Result<LocalRedis, LocalError> {
        let home = crate::normalize_home(home);
        let path = home.join("redis").join("redis.json");
        let opts = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let mut o: RedisOptions = serde_json::from_str(&text).map_err(|e| LocalError::NoSavedCluster { path: path.clone(), reason: e.to_string() })?;
                o.home = home;
                o
            }
            Err(_) => RedisOptions { home, address: Ipv4Addr::LOCALHOST, port: DEFAULT_REDIS_PORT },
        };
        Ok(LocalRedis::new(opts))
    }

    pub fn options(&self) -> &RedisOptions {
        &self.opts
    }

    /// `redis://ADDRESS:PORT`.
    pub fn url(&self) -> String {
        format!("redis://{}:{}", self.opts.address, self.opts.port)
    }

    /// `home/redis`.
    pub fn dir(&self) -> PathBuf {
        self.opts.home.join("redis")
    }

    fn pid_file(&self) -> PathBuf {
        self.dir().join("redis-server.pid")
    }

    pub fn log_file(&self) -> PathBuf {
        self.dir().join("redis.log")
    }

    /// The pid of the server casslab started, if it is still that server.
    pub fn pid(&self) -> Option<u32> {
        node_process::read_pid_file(&self.pid_file()).filter(|&pid| node_process::is_alive(pid) && self.is_ours(pid))
    }

    /// Redis sets its process title to `redis-server ADDRESS:PORT …`.
    fn is_ours(&self, pid: u32) -> bool {
        let listen = format!("{}:{}", self.opts.address, self.opts.port);
        node_process::cmdline(pid).is_some_and(|args| {
            let line = args.join(" ");
            line.contains("redis-server") && line.contains(&listen)
        })
    }

    /// Whether something answers PING on the server's address.
    pub fn answers(&self) -> bool {
        ping(SocketAddr::from((self.opts.address, self.opts.port)))
    }

    /// casslab's server runs and answers.
    pub fn is_running(&self) -> bool {
        self.pid().is_some() && self.answers()
    }

    pub fn status(&self) -> RedisStatus {
        RedisStatus { address: self.opts.address, port: self.opts.port, pid: self.pid(), answers: self.answers(), dir: self.dir(), log_file: self.log_file() }
    }

    /// Starts the server unless casslab's is already running, and waits until it answers PING.
    /// Returns its pid.
    pub fn up(&self, progress: &mut dyn FnMut(&str)) -> Result<u32, LocalError> {
        if let Some(pid) = self.pid() {
            return Ok(pid);
        }
        if !self.opts.address.is_loopback() {
            return Err(LocalError::InvalidOptions { reason: format!("{} is not a loopback address (127.x.y.z)", self.opts.address) });
        }
        let program = find_redis_server()?;
        if let Err(e) = std::net::TcpListener::bind((self.opts.address, self.opts.port)) {
            return Err(match e.kind() {
                std::io::ErrorKind::AddrInUse => LocalError::RedisPortBusy { address: self.opts.address, port: self.opts.port },
                _ => LocalError::io(format!("checking that {}:{} is free", self.opts.address, self.opts.port), e),
            });
        }
        let dir = self.dir();
        std::fs::create_dir_all(dir.join("data")).context(|| format!("creating {}", dir.display()))?;
        let conf = dir.join("redis.conf");
        std::fs::write(&conf, self.config_text()).context(|| format!("writing {}", conf.display()))?;
        let saved = serde_json::to_string_pretty(&self.opts).expect("plain data");
        std::fs::write(dir.join("redis.json"), saved).context(|| format!("writing {}", dir.join("redis.json").display()))?;
        progress(&format!("starting redis-server on {}:{} (home {})", self.opts.address, self.opts.port, dir.display()));
        let banner = format!("=== casslab: starting redis-server at {}:{} ===", self.opts.address, self.opts.port);
        let mut child = node_process::spawn_in_session(&program, &[OsString::from(&conf)], &dir, &self.log_file(), &banner)?;
        node_process::write_pid_file(&self.pid_file(), child.id())?;
        let started = Instant::now();
        while started.elapsed() < START_TIMEOUT {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(LocalError::NodeDied { node: format!("redis-server ({status})"), log_tail: node_process::tail_file(&self.log_file(), 20) });
            }
            if self.answers() {
                progress(&format!("redis-server answers on {}:{} (pid {})", self.opts.address, self.opts.port, child.id()));
                return Ok(child.id());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = node_process::stop_process(child.id(), Duration::from_secs(5), "redis-server");
        Err(LocalError::StartTimeout { node: "redis-server".into(), secs: START_TIMEOUT.as_secs(), log_tail: node_process::tail_file(&self.log_file(), 20) })
    }

    /// Stops the server casslab started (SIGTERM: Redis exits at once, persistence being off);
    /// anything else listening there is left alone.
    pub fn down(&self, progress: &mut dyn FnMut(&str)) -> Result<(), LocalError> {
        match self.pid() {
            Some(pid) => {
                let how = node_process::stop_process(pid, Duration::from_secs(10), "redis-server")?;
                let _ = node_process::remove_if_present(&self.pid_file());
                progress(&format!("redis-server (pid {pid}) {}", if how == Stopped::Gracefully { "stopped" } else { "killed" }));
            }
            None if self.answers() => {
                progress(&format!("{}:{} is served by a redis-server casslab did not start; left running", self.opts.address, self.opts.port))
            }
            None => progress("no redis-server of casslab's is running"),
        }
        Ok(())
    }

    /// The server's config: this address and port, logs and data here, no persistence.
    fn config_text(&self) -> String {
        let dir = self.dir();
        format!(
            "# written by casslab; `casslab local redis down` stops this server\n\
             bind {addr}\nport {port}\ndaemonize no\nlogfile {log}\ndir {data}\n\
             # no snapshots or append-only file: a benchmark server keeps everything in memory\n\
             save \"\"\nappendonly no\n",
            addr = self.opts.address,
            port = self.opts.port,
            log = self.log_file().display(),
            data = dir.join("data").display(),
        )
    }
}

/// `$CASSLAB_REDIS_SERVER` (another build, or a compatible server such as Valkey), else
/// `redis-server` on PATH or where the OS package puts it.
fn find_redis_server() -> Result<PathBuf, LocalError> {
    let missing = || {
        LocalError::MissingTool {
        tool: "redis-server".into(),
        hint: "install Redis from the OS packages (`apt-get install redis-server`; casslab starts a server of its own, the package's service need not run), or point casslab at a running server with --target redis://HOST:PORT".into(),
    }
    };
    if let Some(p) = std::env::var_os("CASSLAB_REDIS_SERVER").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(missing()) };
    }
    let on_path = std::env::var_os("PATH").into_iter().flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).map(|d| d.join("redis-server"));
    on_path.chain([PathBuf::from("/usr/bin/redis-server"), PathBuf::from("/usr/local/bin/redis-server")]).find(|p| p.is_file()).ok_or_else(missing)
}

/// Sends PING; true when a Redis answers (`+PONG`, or an error such as NOAUTH: it is there).
fn ping(addr: SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(300)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 64];
    matches!(s.read(&mut buf), Ok(n) if n > 0 && (buf[0] == b'+' || buf[0] == b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_keeps_the_server_in_its_home_without_persistence() {
        let r = LocalRedis::new(RedisOptions { home: PathBuf::from("/h"), address: Ipv4Addr::new(127, 0, 0, 66), port: 6390 });
        let conf = r.config_text();
        assert!(conf.contains("bind 127.0.0.66\nport 6390\n"), "{conf}");
        assert!(conf.contains("logfile /h/redis/redis.log") && conf.contains("dir /h/redis/data"), "{conf}");
        assert!(conf.contains("save \"\"\nappendonly no"), "{conf}");
        assert_eq!(r.url(), "redis://127.0.0.66:6390");
        assert!(!r.is_ours(std::process::id()), "the test process is no redis-server");
    }

    #[test]
    fn an_unsaved_home_means_the_default_server() {
        let dir = tempfile::tempdir().unwrap();
        let r = LocalRedis::open(dir.path()).unwrap();
        assert_eq!((r.options().address, r.options().port), (Ipv4Addr::LOCALHOST, DEFAULT_REDIS_PORT));
        assert_eq!(r.pid(), None);
    }
}
