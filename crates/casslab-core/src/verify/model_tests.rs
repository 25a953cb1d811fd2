//! The write record and the classifier against a model of a correct store, on random
//! interleavings: writes (puts and deletes) that are acknowledged, time out before or after
//! they land, or land twice (a retry); reads that overlap them; and the store deciding the last
//! write by client timestamps (CQL), by its coordinators' own clocks (CQL without client
//! timestamps), or by arrival (Redis). Each read gets the answer the model's store gives —
//! which must never be called a violation — and, now and then, an answer no correct store could
//! give, which must never be called ok. The counts are printed (`cargo test -p casslab-core
//! model_tests -- --nocapture`).
//!
//! What a correct store may answer, from what the client saw alone: under timestamps (which rise
//! with a key's write numbers), any upsert at or above the highest write acknowledged before the
//! read was sent and begun before it came back, or no row when such a write deletes; under
//! arrival, any write not superseded — one that ended before a later write, acknowledged before
//! the read was sent, began — except that a write that failed may arrive at any time.

use super::classify::{classify, Class, Expiry, Found, Judged};
use super::record::{Begun, KeyState, Order, WriteKind, WriteRecord};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// How the model's store picks a key's last write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Store {
    /// By the timestamp casslab gives each write (the record's order: timestamps).
    ClientTimestamps,
    /// By the timestamp the coordinator that applies it gives it: its clock's millisecond times
    /// 1000 plus its own counter (the record still assumes timestamps follow the numbers).
    CoordinatorTimestamps,
    /// By arrival (the record's order: arrival).
    Arrival,
}

struct Write {
    key: usize,
    begun: Begun,
    b: u64,
    /// When it finished (`None`: in flight), and whether it was acknowledged.
    e: Option<u64>,
    acked: bool,
    /// When it lands on the store, each time it does (a retry lands again), and the
    /// timestamp each landing carries.
    lands: Vec<(u64, i64)>,
    /// When the client gives up on it (acknowledged or failed).
    ends_at: u64,
    will_ack: bool,
}

struct Read {
    key: usize,
    s: u64,
    f: u64,
    at_send: KeyState,
}

#[derive(Debug, Default)]
struct Tally {
    reads: u64,
    /// Correct answers: judged ok, unchecked, or (wrongly) a violation.
    correct_ok: u64,
    correct_unchecked: u64,
    false_violations: u64,
    /// Answers no correct store gives: caught, unchecked, or (wrongly) ok.
    wrong: u64,
    caught: u64,
    wrong_unchecked: u64,
    missed: u64,
    /// Wrong from what the client saw, but within what the record keeps by design (overlapping
    /// writes under arrival order): accepted.
    accepted_by_design: u64,
}

/// What a read found, as the model names it: a write's row, no row, or a value no write made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Row(usize),
    Absent,
    Garbage,
}

struct History {
    store: Store,
    deletes: bool,
    writes: Vec<Write>,
    /// Per key: the times its writes in flight dropped to none.
    quiet: Vec<Vec<u64>>,
    loaded: Vec<bool>,
}

impl History {
    fn of_key(&self, key: usize) -> impl Iterator<Item = (usize, &Write)> {
        self.writes.iter().enumerate().filter(move |(_, w)| w.key == key)
    }

    /// Writes of `key` acknowledged before a read sent at `s` (in one step, writes end first,
    /// then reads end, then new writes and reads begin).
    fn acked_before(&self, key: usize, s: u64) -> impl Iterator<Item = &Write> {
        self.of_key(key).map(|(_, w)| w).filter(move |w| w.acked && w.e.is_some_and(|e| e <= s))
    }

    /// Whether write `w` can no longer be a key's last write for a read sent at `s`, from what
    /// the client saw.
    fn superseded(&self, w: &Write, s: u64) -> bool {
        match self.store {
            Store::ClientTimestamps | Store::CoordinatorTimestamps => self.acked_before(w.key, s).any(|x| x.begun.number > w.begun.number),
            // a write that failed, or is in flight, may still arrive
            Store::Arrival => w.acked && self.acked_before(w.key, s).any(|x| w.e.is_some_and(|e| e <= x.b)),
        }
    }

    /// Under arrival, whether write `w` ended before a moment when no write to its key was in
    /// flight, after which a write acknowledged before `s` began (the record's groups).
    fn behind_a_group(&self, w: &Write, s: u64) -> bool {
        let Some(e) = w.e else { return false };
        self.acked_before(w.key, s).any(|x| self.quiet[w.key].iter().any(|q| *q >= e && *q <= x.b))
    }

    /// Whether the loaded row (write 1, acknowledged before everything) is superseded at `s`.
    fn load_superseded(&self, key: usize, s: u64) -> bool {
        self.acked_before(key, s).next().is_some()
    }

    /// Whether a correct store may answer `a` to read `r`, from what the client saw; and, under
    /// arrival, whether the record's groups accept it.
    fn allowed(&self, r: &Read, a: Answer) -> (bool, bool) {
        let begun_by_end = |w: &Write| w.b < r.f;
        match a {
            Answer::Garbage => (false, false),
            Answer::Row(usize::MAX) => {
                let ok = self.loaded[r.key] && !self.load_superseded(r.key, r.s);
                (ok, ok)
            }
            Answer::Row(i) => {
                let w = &self.writes[i];
                let ok = w.begun.kind == WriteKind::Put && begun_by_end(w) && !self.superseded(w, r.s);
                (ok, ok || (self.store == Store::Arrival && !self.behind_a_group(w, r.s) && begun_by_end(w)))
            }
            Answer::Absent => {
                let nothing_acked = !self.loaded[r.key] && self.acked_before(r.key, r.s).next().is_none();
                let deletes: Vec<&Write> = self.of_key(r.key).map(|(_, w)| w).filter(|w| w.begun.kind == WriteKind::Delete && begun_by_end(w)).collect();
                let ok = nothing_acked || deletes.iter().any(|d| !self.superseded(d, r.s));
                // without the kinds of recent writes, two or more begun while the read ran may be
                // either kind
                let during = self.of_key(r.key).filter(|(_, w)| w.b > r.s && w.b < r.f).count();
                let by_groups = self.store == Store::Arrival && (deletes.iter().any(|d| !self.behind_a_group(d, r.s)) || (during >= 2 && self.deletes));
                (ok, ok || by_groups)
            }
        }
    }

    /// What the model's store answers read `r`: the last of the writes it sees.
    fn answer(&self, r: &Read, rng: &mut SmallRng) -> Answer {
        let mut best: Option<(i64, Answer)> = None;
        let mut consider = |ts: i64, a: Answer| {
            if best.is_none_or(|(b, _)| ts > b) {
                best = Some((ts, a));
            }
        };
        let answer_of = |i: usize| if self.writes[i].begun.kind == WriteKind::Put { Answer::Row(i) } else { Answer::Absent };
        match self.store {
            Store::ClientTimestamps | Store::CoordinatorTimestamps => {
                // a quorum read: every write acknowledged before it was sent, and any of those
                // that landed before it came back
                if self.loaded[r.key] {
                    consider(i64::MIN + 1, Answer::Row(usize::MAX));
                }
                for (i, w) in self.of_key(r.key) {
                    let certain = w.acked && w.e.is_some_and(|e| e <= r.s);
                    for (at, ts) in &w.lands {
                        if *at < r.f && (certain || rng.gen_bool(0.5)) {
                            consider(*ts, answer_of(i));
                        }
                    }
                }
            }
            Store::Arrival => {
                // one server: the state at one moment while the read ran
                let at = rng.gen_range(r.s..r.f);
                if self.loaded[r.key] {
                    consider(-1, Answer::Row(usize::MAX));
                }
                for (i, w) in self.of_key(r.key) {
                    for (land, _) in &w.lands {
                        if *land < at {
                            consider(*land as i64, answer_of(i));
                        }
                    }
                }
            }
        }
        best.map_or(Answer::Absent, |(_, a)| a)
    }
}

/// The classifier's verdict on answer `a` to read `r`.
fn judge(h: &History, r: &Read, at_end: &KeyState, a: Answer) -> Class {
    let found = match a {
        Answer::Absent => Found::Absent,
        Answer::Garbage => Found::Row { newest: None, corrupt: true },
        Answer::Row(usize::MAX) => Found::Row { newest: Some(1), corrupt: false },
        Answer::Row(i) => Found::Row { newest: Some(h.writes[i].begun.number), corrupt: false },
    };
    classify(&r.at_send, at_end, found, Expiry::Live, Judged { stale_checkable: true, one_row: true, deletes: h.deletes }).0
}

/// One random history of `steps` events over `keys` keys, its reads judged into `t`.
fn run_history(store: Store, seed: u64, steps: u64, keys: usize, t: &mut Tally) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let order = if store == Store::Arrival { Order::Arrival } else { Order::Timestamps };
    let record = WriteRecord::new(keys as u64, order);
    let deletes = rng.gen_bool(0.5);
    let fails = [0.0, 0.02, 0.2][rng.gen_range(0..3)];
    let loaded: Vec<bool> = (0..keys).map(|k| k == 0 || rng.gen_bool(0.3)).collect();
    for (k, l) in loaded.iter().enumerate() {
        if *l {
            record.mark_loaded(k as u64);
        }
    }
    let mut h = History { store, deletes, writes: Vec::new(), quiet: vec![Vec::new(); keys], loaded };
    let mut reads: Vec<Read> = Vec::new();
    let mut in_flight = vec![0u32; keys];
    // the client's clock: a tick per event
    let clock = std::cell::Cell::new(0i64);
    // each coordinator's counter within its current millisecond
    let mut coordinators = [(0u64, 0i64); 3];
    for now in 1..=steps {
        clock.set(now as i64 * 10);
        // writes that end now
        for i in 0..h.writes.len() {
            let w = &mut h.writes[i];
            if w.e.is_none() && w.ends_at == now {
                w.e = Some(now);
                w.acked = w.will_ack;
                record.finish(w.key as u64, &w.begun, w.acked);
                in_flight[w.key] -= 1;
                if in_flight[w.key] == 0 {
                    h.quiet[w.key].push(now);
                }
            }
        }
        // reads that end now
        let (done, rest): (Vec<Read>, Vec<Read>) = std::mem::take(&mut reads).into_iter().partition(|r| r.f == now);
        reads = rest;
        for r in done {
            let at_end = record.state(r.key as u64);
            t.reads += 1;
            let a = h.answer(&r, &mut rng);
            match judge(&h, &r, &at_end, a) {
                Class::Ok => t.correct_ok += 1,
                Class::Unchecked => t.correct_unchecked += 1,
                c => {
                    t.false_violations += 1;
                    if t.false_violations <= 3 {
                        eprintln!("{store:?}: false {c:?} for {a:?}; sent {:?}, end {:?}", r.at_send, at_end);
                    }
                }
            }
            // an answer no correct store gives, when there is one
            if rng.gen_bool(0.3) {
                let mut wrong: Vec<Answer> = vec![Answer::Garbage];
                let candidates = h.of_key(r.key).map(|(i, _)| Answer::Row(i)).chain([Answer::Absent]);
                wrong.extend(
                    candidates
                        .filter(|a| matches!(a, Answer::Absent) || matches!(a, Answer::Row(i) if h.writes[*i].begun.kind == WriteKind::Put))
                        .filter(|a| !h.allowed(&r, *a).0),
                );
                if h.loaded[r.key] && h.load_superseded(r.key, r.s) {
                    wrong.push(Answer::Row(usize::MAX));
                }
                let a = wrong[rng.gen_range(0..wrong.len())];
                let by_design = a != Answer::Garbage && h.allowed(&r, a).1;
                t.wrong += 1;
                match judge(&h, &r, &at_end, a) {
                    Class::Unchecked => t.wrong_unchecked += 1,
                    Class::Ok if by_design => t.accepted_by_design += 1,
                    Class::Ok => {
                        t.missed += 1;
                        if t.missed <= 3 {
                            eprintln!("{store:?}: missed {a:?}; sent {:?}, end {:?}", r.at_send, at_end);
                        }
                    }
                    _ => t.caught += 1,
                }
            }
        }
        // something new: a write or a read, on a few hot keys
        let key = rng.gen_range(0..keys);
        if rng.gen_bool(0.5) && in_flight[key] < 12 {
            let kind = if deletes && rng.gen_bool(0.3) { WriteKind::Delete } else { WriteKind::Put };
            let begun = record.begin_stamped(key as u64, kind, || clock.get()).expect("a key of the record");
            let took = rng.gen_range(1..25);
            let will_ack = !rng.gen_bool(fails);
            // when it lands: before its acknowledgement, or, failed, at any time or never
            let mut lands = Vec::new();
            let land = |rng: &mut SmallRng| if will_ack { rng.gen_range(now..now + took) } else { rng.gen_range(now..now + 150) };
            if will_ack || rng.gen_bool(0.6) {
                lands.push(land(&mut rng));
                if rng.gen_bool(0.15) {
                    lands.push(land(&mut rng)); // a retry lands again
                }
            }
            let lands = lands
                .into_iter()
                .map(|at| {
                    let ts = match store {
                        Store::ClientTimestamps => begun.timestamp_us.expect("timestamps under timestamp order"),
                        Store::Arrival => 0,
                        Store::CoordinatorTimestamps => {
                            // the coordinator stamps it when it gets it: ms × 1000 + its counter
                            let c = &mut coordinators[rng.gen_range(0..3)];
                            let ms = at / 4;
                            if c.0 != ms {
                                *c = (ms, 0);
                            }
                            c.1 += 1;
                            ms as i64 * 1000 + c.1 - 1
                        }
                    };
                    (at, ts)
                })
                .collect();
            in_flight[key] += 1;
            h.writes.push(Write { key, begun, b: now, e: None, acked: false, lands, ends_at: now + took, will_ack });
        } else if rng.gen_bool(0.7) {
            reads.push(Read { key, s: now, f: now + rng.gen_range(1..25), at_send: record.state(key as u64) });
        }
    }
}

fn run_many(store: Store, histories: u64) -> Tally {
    let mut t = Tally::default();
    for seed in 0..histories {
        run_history(store, seed, 300, 3, &mut t);
    }
    println!("{store:?}: {t:?}");
    t
}

#[test]
fn client_timestamps_no_false_and_no_missed_violations() {
    let t = run_many(Store::ClientTimestamps, 800);
    assert!(t.reads > 40_000 && t.wrong > 10_000, "{t:?}");
    assert_eq!((t.false_violations, t.missed, t.accepted_by_design), (0, 0, 0), "{t:?}");
    assert!(t.correct_ok > t.correct_unchecked * 10, "most reads are judged: {t:?}");
}

#[test]
fn arrival_order_no_false_and_no_missed_violations() {
    let t = run_many(Store::Arrival, 800);
    assert!(t.reads > 40_000 && t.wrong > 10_000, "{t:?}");
    assert_eq!((t.false_violations, t.missed), (0, 0), "{t:?}");
    assert!(t.correct_unchecked > 0, "a failed write makes its key unchecked: {t:?}");
}

#[test]
fn coordinator_timestamps_make_a_correct_store_look_stale() {
    // why every recorded write carries a client timestamp: coordinators that stamp writes
    // with their own clocks may order two writes against the order they were made
    let t = run_many(Store::CoordinatorTimestamps, 300);
    assert!(t.false_violations > 0, "{t:?}");
}
