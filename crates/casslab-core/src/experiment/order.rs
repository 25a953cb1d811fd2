//! The order an experiment's runs go in, and what comes before them — the keys `order`,
//! `order_seed`, `unmeasured_round`, `settle` of an experiment file, and [`schedule`], the
//! measured runs in order.
//!
//! Why: the first runs after a load meet compactions, cold caches and a JIT still compiling,
//! and a machine drifts over an hour. If one variant always runs first, it pays for all of
//! that, and a comparison shows a difference that is the order's. So, by default, the cluster
//! is settled after loading (flushed, compactions done), every variant runs once unmeasured,
//! and the measured repetitions are counterbalanced: forward, then backward (a b, b a, a b, …),
//! so that over each pair of repetitions every variant holds every position once. `shuffled`
//! draws each repetition's order from a seeded generator (the seed is recorded with the runs);
//! `interleaved` is the plain a b, a b, … of old.

use crate::workload::Problem;
use crate::yaml::Node;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// How the variants of each repetition are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// Forward in odd repetitions, backward in even ones (a b, b a, a b, …).
    #[default]
    Counterbalanced,
    /// A random order per repetition, from a recorded seed.
    Shuffled,
    /// The file's order in every repetition (a b, a b, …).
    Interleaved,
}

impl Order {
    pub const NAMES: &'static str = "counterbalanced, shuffled or interleaved";

    pub fn parse(s: &str) -> Option<Order> {
        match s.trim() {
            "counterbalanced" => Some(Order::Counterbalanced),
            "shuffled" => Some(Order::Shuffled),
            "interleaved" => Some(Order::Interleaved),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Counterbalanced => "counterbalanced",
            Order::Shuffled => "shuffled",
            Order::Interleaved => "interleaved",
        }
    }
}

/// What runs before the measured repetitions, and in which order those go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOrder {
    pub order: Order,
    /// The seed of a shuffled order; `None`: drawn when the experiment starts (and recorded).
    pub seed: Option<u64>,
    /// Every variant runs once, unmeasured, before the measured repetitions.
    pub unmeasured_round: bool,
    /// After loading, flush and wait until compactions are done before measuring.
    pub settle: bool,
}

impl RunOrder {
    /// What runs before the measured repetitions, in words: "after settling and an
    /// unmeasured round".
    pub fn before(&self) -> &'static str {
        match (self.unmeasured_round, self.settle) {
            (true, true) => "after settling and an unmeasured round",
            (true, false) => "after an unmeasured round",
            (false, true) => "after settling",
            (false, false) => "with nothing before",
        }
    }
}

impl Default for RunOrder {
    fn default() -> Self {
        RunOrder { order: Order::Counterbalanced, seed: None, unmeasured_round: true, settle: true }
    }
}

/// Reads the order keys of an experiment file (`get` looks a key up); errors name the key.
pub(super) fn run_order<'a>(get: impl Fn(&str) -> Option<&'a Node>) -> Result<RunOrder, (&'static str, Problem)> {
    let mut r = RunOrder::default();
    if let Some(v) = get("order") {
        let text = v.scalar_text().unwrap_or_default();
        r.order = Order::parse(&text).ok_or(("order", Problem::Expected { key: "order".into(), expected: Order::NAMES }))?;
    }
    if let Some(v) = get("order_seed") {
        r.seed = Some(v.as_u64().ok_or(("order_seed", Problem::Expected { key: "order_seed".into(), expected: "a whole number" }))?);
    }
    for (key, field) in [("unmeasured_round", &mut r.unmeasured_round), ("settle", &mut r.settle)] {
        if let Some(v) = get(key) {
            *field = v.as_bool().ok_or((key, Problem::Expected { key: key.into(), expected: "true or false" }))?;
        }
    }
    Ok(r)
}

/// The measured runs in order: (variant index, repetition from 1), `repetitions` times
/// `variants`. `seed` is used by [`Order::Shuffled`] only.
pub fn schedule(variants: usize, repetitions: u32, order: Order, seed: u64) -> Vec<(usize, u32)> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(variants * repetitions as usize);
    for rep in 1..=repetitions {
        let mut round: Vec<usize> = (0..variants).collect();
        match order {
            Order::Interleaved => {}
            Order::Counterbalanced if rep % 2 == 0 => round.reverse(),
            Order::Counterbalanced => {}
            Order::Shuffled => {
                for i in (1..round.len()).rev() {
                    round.swap(i, rng.gen_range(0..=i));
                }
            }
        }
        out.extend(round.into_iter().map(|v| (v, rep)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &[(usize, u32)]) -> String {
        s.iter().map(|(v, _)| char::from(b'a' + *v as u8)).collect()
    }

    #[test]
    fn counterbalanced_runs_forward_then_backward() {
        assert_eq!(names(&schedule(2, 3, Order::Counterbalanced, 0)), "abbaab");
        assert_eq!(names(&schedule(3, 2, Order::Counterbalanced, 0)), "abccba");
        assert_eq!(names(&schedule(2, 2, Order::Interleaved, 0)), "abab");
        let reps: Vec<u32> = schedule(2, 2, Order::Counterbalanced, 0).iter().map(|(_, r)| *r).collect();
        assert_eq!(reps, [1, 1, 2, 2]);
    }

    #[test]
    fn a_shuffle_is_a_permutation_per_repetition_and_repeats_with_its_seed() {
        let s = schedule(4, 25, Order::Shuffled, 7);
        assert_eq!(s, schedule(4, 25, Order::Shuffled, 7));
        assert_ne!(s, schedule(4, 25, Order::Shuffled, 8));
        for rep in s.chunks(4) {
            let mut v: Vec<usize> = rep.iter().map(|(v, _)| *v).collect();
            v.sort();
            assert_eq!(v, [0, 1, 2, 3]);
        }
        let firsts: std::collections::BTreeSet<usize> = s.chunks(4).map(|r| r[0].0).collect();
        assert_eq!(firsts.len(), 4, "every variant runs first sometimes");
    }
}
