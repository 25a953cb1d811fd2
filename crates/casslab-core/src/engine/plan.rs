//! A phase's plan, whatever the target: its planned operations, the names of the stats slots
//! the workers record into (the operations first, then the figures recorded beside them, such
//! as `<op>.request`), the generators values are drawn from, and the mix as a cumulative table
//! that picks the next operation.

use crate::gen::GeneratorSet;
use std::sync::Arc;

/// Everything a phase's workers share about what to run.
pub struct Plan<O> {
    pub ops: Vec<O>,
    /// Names of the stats slots: the operations (same indexes as `ops`), then the figures
    /// recorded beside them.
    pub slot_names: Vec<String>,
    pub gens: Arc<GeneratorSet>,
    /// Cumulative weights of `ops`, normalized to end at 1.0.
    cumulative: Vec<f64>,
}

impl<O> Plan<O> {
    /// `slot_names` starts with one name per operation of `ops`; `weights` has one per operation.
    pub fn new(ops: Vec<O>, slot_names: Vec<String>, weights: &[f64], gens: Arc<GeneratorSet>) -> Plan<O> {
        debug_assert!(slot_names.len() >= ops.len() && weights.len() == ops.len());
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Plan { ops, slot_names, gens, cumulative }
    }

    /// Picks an operation for a uniform draw `u` in [0, 1).
    #[inline]
    pub fn pick(&self, u: f64) -> usize {
        match self.cumulative.iter().position(|c| u < *c) {
            Some(i) => i,
            None => self.cumulative.len() - 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_follows_ratios() {
        let gens = Arc::new(GeneratorSet::build(&Default::default()).unwrap());
        let p: Plan<()> = Plan::new(vec![(), (), ()], vec!["a".into(), "b".into(), "c".into()], &[1.0, 3.0, 0.0], gens);
        assert_eq!(p.pick(0.0), 0);
        assert_eq!(p.pick(0.2499), 0);
        assert_eq!(p.pick(0.25), 1);
        assert_eq!(p.pick(0.9999999), 1);
        assert!(p.cumulative[1] > 0.999999);
    }
}
