//! The recall judge: one thread per searched vector column, fed by a short queue that the
//! searches offer to without waiting (a full queue is a search not judged), judging each
//! search against the exact k nearest of the corpus as the record says it is (refreshed at most
//! every 50 ms), and adding what it found to the [`RecallSink`] that the engine's sampler
//! empties once per interval. It spends at most half of one core: when its CPU time runs ahead
//! of that share it sleeps, and searches offered meanwhile go unjudged. Its CPU time (thread
//! time, exact searches and refreshes) is counted in the figures it reports.

use super::corpus::{Corpus, CorpusSpec};
use super::exact::{distance, hits, norm, top_k};
use super::RecallCounts;
use crate::gen::GeneratorSet;
use crate::verify::Verifier;
use scylla::value::CqlValue;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Searches waiting to be judged, at most.
const QUEUE: usize = 16;
/// The share of one core the judge may use.
pub const CORE_SHARE: f64 = 0.5;
/// How old the corpus may be when a search is judged.
const REFRESH: Duration = Duration::from_millis(50);

/// One completed search, offered to the judge.
#[derive(Debug, Clone)]
pub struct Query {
    /// The stats slot of the operation in its phase's plan.
    pub slot: usize,
    pub k: u32,
    pub vector: Vec<f32>,
    /// The key columns of each row returned, in order.
    pub returned: Vec<Vec<CqlValue>>,
}

/// Where judges leave their figures until the sampler takes them, per stats slot.
#[derive(Default)]
pub struct RecallSink {
    slots: Mutex<Vec<RecallCounts>>,
    /// Searches offered and not judged yet.
    queued: AtomicU64,
    /// The phase is ending: judge what is queued without pausing for the share of a core.
    hurry: AtomicBool,
}

impl RecallSink {
    fn add(&self, slot: usize, c: RecallCounts) {
        let mut g = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if g.len() <= slot {
            g.resize(slot + 1, RecallCounts::default());
        }
        g[slot].merge(&c);
    }

    /// What was judged since the last call, by slot (and forgets it).
    pub fn take(&self) -> Vec<RecallCounts> {
        std::mem::take(&mut *self.slots.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Waits (up to `limit`) until every search offered was judged, judging without pauses
    /// meanwhile; a phase calls it before its last interval.
    pub async fn settle(&self, limit: Duration) {
        self.hurry.store(true, Ordering::Relaxed);
        let until = tokio::time::Instant::now() + limit;
        while self.queued.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        self.hurry.store(false, Ordering::Relaxed);
    }
}

/// A judge thread for one vector column.
pub struct RecallJudge {
    tx: SyncSender<Query>,
    sink: Arc<RecallSink>,
    pub spec: CorpusSpec,
}

impl RecallJudge {
    /// Starts judging searches of `spec`'s vectors, into `sink`; the record of `verifier`'s
    /// table is what it trusts (searches are skipped while the verifier says the table's rows
    /// are not known).
    pub fn start(spec: CorpusSpec, gens: Arc<GeneratorSet>, verifier: Arc<Verifier>, sink: Arc<RecallSink>) -> std::io::Result<RecallJudge> {
        let (tx, rx) = sync_channel(QUEUE);
        let corpus = Corpus::new(spec.clone(), gens);
        let s = sink.clone();
        std::thread::Builder::new().name("casslab-recall".into()).spawn(move || judge_loop(rx, corpus, verifier, s))?;
        Ok(RecallJudge { tx, sink, spec })
    }

    /// Offers a completed search; false when the judge is busy (the search is not judged).
    pub fn offer(&self, q: Query) -> bool {
        self.sink.queued.fetch_add(1, Ordering::AcqRel);
        match self.tx.try_send(q) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.sink.queued.fetch_sub(1, Ordering::AcqRel);
                false
            }
        }
    }
}

/// This thread's CPU time, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given and reads nothing else.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
    if ok {
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    } else {
        0
    }
}

fn judge_loop(rx: Receiver<Query>, mut corpus: Corpus, verifier: Arc<Verifier>, sink: Arc<RecallSink>) {
    let started = Instant::now();
    let cpu0 = thread_cpu_ns();
    let mut refreshed: Option<Instant> = None;
    while let Ok(q) = rx.recv() {
        let c0 = thread_cpu_ns();
        let counts = if verifier.checking(corpus.spec.table_index) {
            if refreshed.is_none_or(|r| r.elapsed() >= REFRESH) {
                corpus.refresh();
                refreshed = Some(Instant::now());
            }
            judge(&mut corpus, &q)
        } else {
            RecallCounts { k: q.k, skipped: 1, ..RecallCounts::default() }
        };
        let cost_ns = thread_cpu_ns().saturating_sub(c0);
        sink.add(q.slot, RecallCounts { cost_ns, ..counts });
        sink.queued.fetch_sub(1, Ordering::AcqRel);
        // keep to the share of a core: sleep while the CPU time runs ahead of it
        if !sink.hurry.load(Ordering::Relaxed) {
            let busy_s = thread_cpu_ns().saturating_sub(cpu0) as f64 / 1e9;
            let ahead_s = busy_s / CORE_SHARE - started.elapsed().as_secs_f64();
            if ahead_s > 0.0 {
                std::thread::sleep(Duration::from_secs_f64(ahead_s.min(0.25)));
            }
        }
    }
}

/// One search judged against the exact answer over `corpus`.
fn judge(corpus: &mut Corpus, q: &Query) -> RecallCounts {
    let k = q.k as usize;
    if q.vector.len() != corpus.spec.dims {
        return RecallCounts { k: q.k, skipped: 1, ..RecallCounts::default() };
    }
    let sim = corpus.spec.similarity;
    let nearest = top_k(sim, &q.vector, &corpus.vectors, &corpus.norms, &corpus.present, k);
    let q_norm = norm(&q.vector);
    let mut seen: Vec<u32> = Vec::with_capacity(q.returned.len());
    let mut returned: Vec<Option<f32>> = Vec::with_capacity(q.returned.len());
    for key in &q.returned {
        match corpus.index_of(key) {
            Some(i) if seen.contains(&i) => {}
            Some(i) => {
                seen.push(i);
                returned.push(Some(distance(sim, &q.vector, q_norm, corpus.vector(i), corpus.norms[i as usize])));
            }
            None => returned.push(None),
        }
    }
    let possible = (k as u64).min(corpus.len());
    RecallCounts { k: q.k, judged: 1, hits: hits(&nearest, &returned, k).min(possible), possible, skipped: 0, cost_ns: 0, corpus: corpus.len() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::Similarity;
    use crate::verify::{Column, KeyPart, Table};

    #[test]
    fn a_judge_finds_exact_answers_perfect_and_others_partial() {
        let yaml = "k: { type: bigint, dist: sequence, min: 0, max: 1000 }\nv: { type: \"vector<float, 8>\", vector: { kind: clustered, centroids: 5 } }";
        let gens = Arc::new(GeneratorSet::build(&crate::yaml::from_str(yaml).unwrap()).unwrap());
        let (k, v) = (gens.index_of("k").unwrap(), gens.index_of("v").unwrap());
        let (base, span) = gens.domain(k);
        let table = Arc::new(Table::new(
            "vectors",
            vec![KeyPart { column: "id".into(), gens: vec![k], base, span }],
            vec![Column { name: "v".into(), gens: vec![v], load_only: false, nullable: false }],
            vec![vec![0]],
        ));
        for key in 0..500 {
            table.record.mark_loaded(key);
        }
        let verifier = Arc::new(Verifier::new(vec![table.clone()], true));
        let spec = CorpusSpec { table: table.clone(), table_index: 0, generator: v, dims: 8, similarity: Similarity::Euclidean };
        let mut corpus = Corpus::new(spec.clone(), gens.clone());
        corpus.refresh();
        let q = corpus.vector(17).iter().map(|x| x + 0.01).collect::<Vec<f32>>();
        let exact = top_k(Similarity::Euclidean, &q, &corpus.vectors, &corpus.norms, &corpus.present, 10);
        let keys = |ids: &[u32]| ids.iter().map(|i| vec![CqlValue::BigInt(*i as i64)]).collect::<Vec<_>>();
        let right: Vec<u32> = exact.iter().map(|x| x.0).collect();
        let half: Vec<u32> = right[..5].iter().copied().chain(900..905).collect();
        let sink = Arc::new(RecallSink::default());
        let judge = RecallJudge::start(spec, gens, verifier, sink.clone()).unwrap();
        assert!(judge.offer(Query { slot: 1, k: 10, vector: q.clone(), returned: keys(&right) }));
        assert!(judge.offer(Query { slot: 1, k: 10, vector: q, returned: keys(&half) }));
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        rt.block_on(sink.settle(Duration::from_secs(30)));
        let got = sink.take();
        assert_eq!(got.len(), 2);
        assert_eq!((got[1].judged, got[1].hits, got[1].possible, got[1].corpus), (2, 15, 20, 500), "{:?}", got[1]);
        assert!(got[1].cost_ns > 0);
        assert!(sink.take().is_empty(), "taken once");
    }
}
