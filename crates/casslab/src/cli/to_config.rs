//! The flags converted into the library's plain config structs (`RunConfig`, `ClusterConfig`,
//! `RedisConfig`, `ShardConfig`, a profile's settings). Single values are read by the library's
//! `flag_values` (durations, counts, rates and schedules, requests in flight, `-P`, `--set`,
//! heaps, shards, formats); a value that does not parse is an input error naming the flag and
//! what to write.

use super::args::{ClusterArgs, RunOptions};
use super::DEFAULT_CONCURRENCY;
use crate::exit::{bail_usage, usage};
use anyhow::Result;
use casslab_core::config::{ClusterConfig, LoadMode, RedisConfig, RunConfig, ShardConfig, CONFIG_VERSION};
pub use casslab_core::flag_values::{
    format_named, level, parse_concurrency, parse_count, parse_duration_s, parse_heap_mb, parse_params, parse_rate_shape, parse_settings, redis_url,
    shard_index,
};
use casslab_core::targets::in_process;
use std::path::PathBuf;

impl ClusterArgs {
    pub fn to_config(&self) -> Result<ClusterConfig> {
        let mut translate = Vec::new();
        for t in &self.translate {
            let (a, b) = t.split_once('=').ok_or_else(|| usage(format!("--translate {t}: write FROM=TO, e.g. 10.0.0.5:9042=127.0.0.1:19042")))?;
            translate.push((a.trim().to_string(), b.trim().to_string()));
        }
        let timeout_s = parse_duration_s("request-timeout", &self.request_timeout)?;
        for url in &self.jolokia {
            if !url.starts_with("http://") || url.len() <= "http://".len() {
                bail_usage!("--jolokia {url}: write the agent's URL, e.g. --jolokia http://10.0.0.5:8778/jolokia/ (plain http)");
            }
        }
        Ok(ClusterConfig {
            hosts: self.hosts.clone(),
            port: self.port,
            dc: self.dc.clone(),
            user: self.user.clone(),
            tls: self.tls || self.tls_ca.is_some(),
            tls_ca_file: self.tls_ca.clone(),
            translate,
            connections_per_host: self.connections.max(1),
            request_timeout_ms: (timeout_s * 1000.0) as u64,
            local: false,
            local_home: None,
            jolokia: self.jolokia.clone(),
        })
    }
}

impl RunOptions {
    /// The run's plain config (workload text and parameters are filled in by the caller).
    pub fn to_config(&self, workload: &str) -> Result<RunConfig> {
        let (concurrency, concurrency_shape) = match self.concurrency.as_deref().map(parse_concurrency).transpose()? {
            Some(shape) => match shape.as_fixed() {
                Some(n) => (n as usize, None),
                None => (shape.peak().round().max(1.0) as usize, Some(shape)),
            },
            None => (DEFAULT_CONCURRENCY, None),
        };
        if !(self.trace_probability > 0.0 && self.trace_probability <= 1.0) {
            bail_usage!("--trace-probability must be above 0 and at most 1, e.g. 0.01");
        }
        let interval_s = parse_duration_s("interval", &self.interval)?;
        if interval_s < 0.01 {
            bail_usage!("--interval must be at least 10ms");
        }
        let rate = self.rate.as_deref().map(parse_rate_shape).transpose()?;
        if concurrency_shape.is_some() && rate.is_some() {
            bail_usage!(
                "--concurrency {}: a schedule of requests in flight is for a run without --rate (under a rate, the rate decides the load)",
                self.concurrency.as_deref().unwrap_or("")
            );
        }
        let cfg = RunConfig {
            version: CONFIG_VERSION,
            workload: workload.to_string(),
            workload_source: String::new(),
            params: parse_params(&self.params)?,
            cluster: self.cluster.to_config()?,
            redis: self.target.as_deref().filter(|t| in_process(t).is_none()).map(|t| self.redis_config(t)).transpose()?,
            in_process: self.target.as_deref().and_then(in_process).map(|t| t.name.to_string()),
            concurrency,
            rate,
            concurrency_shape,
            duration_s: self.duration.as_deref().map(|d| parse_duration_s("duration", d)).transpose()?,
            count: self.count.as_deref().map(parse_count).transpose()?,
            warmup_s: self.warmup.as_deref().map(|d| parse_duration_s("warmup", d)).transpose()?,
            interval_ms: (interval_s * 1000.0).round() as u64,
            seed: self.seed,
            load: if self.reload {
                LoadMode::Reload
            } else if self.skip_load {
                LoadMode::Skip
            } else if self.load_only {
                LoadMode::Only
            } else {
                LoadMode::Auto
            },
            // 0: the run session decides, once every source of the rate is merged
            threads: self.threads,
            shared_schedule: self.shared_schedule,
            server_metrics: !self.no_server_metrics,
            trace_slowest: self.trace_slowest,
            profile: self.profile_config()?,
            trace_probability: self.trace_probability,
            settle: self.settle,
            shard: self.shard_config()?,
            start_at_unix_ms: self
                .start_at
                .as_deref()
                .map(|t| casslab_core::units::parse_start_ms(t).map_err(|e| usage(format!("--start-at {t}: {e}"))))
                .transpose()?,
            verify: match (self.verify, self.no_verify) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            server: None,
            consistency: self.consistency.as_deref().map(|c| level("consistency", c, false)).transpose()?,
            serial_consistency: self.serial_consistency.as_deref().map(|c| level("serial-consistency", c, true)).transpose()?,
        };
        Ok(cfg)
    }

    /// `--profile` and `--profile-file`: recording needs nodes casslab started.
    fn profile_config(&self) -> Result<casslab_core::config::ProfileConfig> {
        if self.profile && !self.cluster.hosts.is_empty() {
            bail_usage!(
                "--profile records the nodes casslab starts, not a cluster given with --hosts; record a Java Flight Recorder file on your nodes \
                 (`jcmd PID JFR.start settings=profile`, then `jcmd PID JFR.dump filename=node1.jfr`) and pass it with --profile-file NODE=node1.jfr"
            );
        }
        if self.profile && self.target.is_some() {
            bail_usage!("--profile records Cassandra nodes (Java Flight Recorder); a Redis target is not one");
        }
        if let Some(t) = self.target.as_deref().and_then(in_process) {
            let name = t.name;
            if !self.cluster.hosts.is_empty() {
                bail_usage!("--target {name} answers every operation inside casslab: drop --hosts (or drop --target {name} to load the cluster)");
            }
            if self.verify {
                bail_usage!("--verify checks what a server's reads return; --target {name} has no server and returns nothing");
            }
        }
        let mut files = Vec::new();
        for spec in &self.profile_file {
            let Some((node, path)) = spec.split_once('=').filter(|(n, p)| !n.trim().is_empty() && !p.trim().is_empty()) else {
                bail_usage!("--profile-file {spec}: write NODE=PATH, e.g. --profile-file 10.0.0.1=node1.jfr");
            };
            let path = PathBuf::from(path.trim());
            if !path.is_file() {
                bail_usage!("--profile-file {spec}: there is no file {}", path.display());
            }
            // refused before the run, not after it
            casslab_core::profile::check_file(&path).map_err(|e| usage(format!("--profile-file {spec}: {e}")))?;
            files.push((node.trim().to_string(), path));
        }
        Ok(casslab_core::config::ProfileConfig { server: self.profile, client: self.profile_client, files })
    }

    /// `--shard I/N`, or `--shards N` with the index from $JOB_COMPLETION_INDEX; the run id is
    /// filled in by the caller when not given.
    fn shard_config(&self) -> Result<Option<ShardConfig>> {
        let Some((index, count)) = shard_index(self.shard.as_deref(), self.shards, std::env::var("JOB_COMPLETION_INDEX").ok())? else { return Ok(None) };
        if self.reload && count > 1 {
            bail_usage!("--reload with shards: the loaders would empty each other's rows; reload once with a single `casslab run WORKLOAD --reload --load-only`, then start the shards");
        }
        let barrier_timeout_s = parse_duration_s("barrier-timeout", &self.barrier_timeout)?;
        Ok(Some(ShardConfig { index, count, run_id: self.run_id.clone().unwrap_or_default(), barrier_timeout_ms: (barrier_timeout_s * 1000.0) as u64 }))
    }
}

impl RunOptions {
    /// The Redis target of `--target URL`.
    fn redis_config(&self, url: &str) -> Result<RedisConfig> {
        let url = redis_url(url)?;
        let timeout_s = parse_duration_s("request-timeout", &self.cluster.request_timeout)?;
        Ok(RedisConfig {
            url: url.to_string(),
            tls_ca_file: self.cluster.tls_ca.clone(),
            connections: self.cluster.connections.max(1),
            request_timeout_ms: (timeout_s * 1000.0) as u64,
            local: false,
        })
    }
}
