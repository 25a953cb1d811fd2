//! How an experiment made its measured runs and how they are judged, as one typed record saved
//! with it: blocks at the same time or one after another, a sequential experiment's target
//! (precision, budget, spending, first look) with the horizon it fixed after its first block
//! and the look at which its budget ended it, the judged figures, the equivalence margin, and
//! over what its confidence held. The experiment saves it when it starts and again as it learns
//! more (`store::experiment_rows`, kind `design`); `compare --experiment` reads it back and
//! judges the runs as they were judged. Its runs also carry it as tags (`design=sequential`,
//! `precision=0.1`, …) for people and `runs --tag`; those are read only for experiments saved
//! before the record existed.

use super::paired::{BlockDesign, SequentialDesign};
use super::sequential::{SequentialPlan, Spending};
use super::study::{Family, FigureRef};
use crate::store::{tag_key, Store, StoreError};
use serde::{Deserialize, Serialize};

/// The kind of experiment document the record is saved as.
const KIND: &str = "design";

/// An experiment made in blocks, as it was designed and as far as it went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DesignRecord {
    /// Its variants ran at the same time, each block one stretch of time; `layout` says where.
    pub simultaneous: bool,
    pub layout: Option<String>,
    /// A sequential experiment's target; `None`: a fixed number of blocks.
    pub sequential: Option<SequentialPlan>,
    /// The most blocks its budget allowed (fixed after its first block).
    pub max_blocks: Option<usize>,
    /// The look at which its budget, not its data, ended it.
    pub final_look: Option<usize>,
    /// The figures it judged, when chosen; the equivalence margin it asked for.
    pub judged: Option<Vec<FigureRef>>,
    pub margin: Option<f64>,
    /// Over what its confidence held.
    pub family: Family,
}

impl DesignRecord {
    /// The sequential design its runs are judged by, once its horizon is known.
    pub fn sequential_design(&self) -> Option<SequentialDesign> {
        let (plan, max_blocks) = (self.sequential?, self.max_blocks?);
        Some(SequentialDesign { spending: plan.spending, first_look: plan.first_look, max_blocks, final_look: self.final_look })
    }

    /// How its blocks are compared.
    pub fn block_design(&self) -> BlockDesign {
        BlockDesign { sequential: self.sequential_design(), margin: self.margin, simultaneous: self.simultaneous, ..BlockDesign::default() }
    }

    /// The tags its measured runs carry for people (the design, a sequential experiment's
    /// target, the judged figures, the family and the margin).
    pub fn tags(&self) -> Vec<String> {
        let mut tags = Vec::new();
        if let Some(j) = &self.judged {
            tags.push(format!("judge={}", j.iter().map(|f| f.to_string()).collect::<Vec<_>>().join(",")));
        }
        if self.family != Family::Comparison {
            tags.push(format!("family={}", self.family.key()));
        }
        if let Some(m) = self.margin {
            tags.push(format!("equivalence={m}"));
        }
        tags.extend(match &self.sequential {
            None => vec!["design=blocks".into()],
            Some(p) => vec![
                "design=sequential".into(),
                format!("precision={}", p.precision),
                format!("first_look={}", p.first_look),
                format!("spending={}", p.spending.key()),
                format!("budget_s={}", p.budget_s),
            ],
        });
        tags
    }

    /// Saves it as experiment `experiment_id`'s design (replacing what was saved before).
    pub fn save(&self, store: &Store, experiment_id: &str) -> Result<(), StoreError> {
        let json = serde_json::to_string(self).expect("a design record is plain data");
        store.set_experiment_document(experiment_id, KIND, &json)
    }

    /// Experiment `experiment_id`'s saved design; `None` for one saved before designs were
    /// recorded (or not made in blocks).
    pub fn load(store: &Store, experiment_id: &str) -> Result<Option<DesignRecord>, StoreError> {
        Ok(store.experiment_document(experiment_id, KIND)?.and_then(|json| serde_json::from_str(&json).ok()))
    }

    /// The design of an experiment saved before designs were recorded, from the tags of one of
    /// its measured runs; `None` if it was not made in blocks.
    pub fn from_tags(tags: &[String]) -> Option<DesignRecord> {
        let tag = |key: &str| tags.iter().find(|t| tag_key(t) == key && t.len() > key.len()).map(|t| &t[key.len() + 1..]);
        let design = tag("design")?;
        let number = |k| tag(k).and_then(|v| v.parse::<f64>().ok());
        let sequential = (design == "sequential")
            .then(|| {
                let spending = tag("spending").and_then(Spending::from_key)?;
                let first_look = number("first_look")? as usize;
                Some(SequentialPlan { precision: number("precision").unwrap_or(0.0), budget_s: number("budget_s").unwrap_or(0.0), spending, first_look })
            })
            .flatten();
        Some(DesignRecord {
            simultaneous: tag("timing") == Some("simultaneous"),
            layout: tag("layout").map(str::to_string),
            sequential,
            max_blocks: number("max_blocks").map(|m| m as usize),
            final_look: number("final_look").map(|f| f as usize),
            judged: tag("judge").and_then(|j| j.split(',').map(|f| f.parse().ok()).collect()),
            margin: number("equivalence"),
            family: tag("family").and_then(Family::from_key).unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequential() -> DesignRecord {
        DesignRecord {
            simultaneous: true,
            layout: Some("shared".into()),
            sequential: Some(SequentialPlan { precision: 0.05, budget_s: 1200.0, spending: Spending::Hsd(-4.0), first_look: 4 }),
            max_blocks: Some(21),
            final_look: Some(18),
            judged: Some(vec!["read.p99".parse().unwrap(), "total.ops_s".parse().unwrap()]),
            margin: Some(0.05),
            family: Family::Experiment,
        }
    }

    #[test]
    fn a_saved_design_comes_back_as_it_was_and_is_replaced_as_it_grows() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(DesignRecord::load(&store, "e-1").unwrap(), None);
        let mut d = sequential();
        d.final_look = None;
        d.save(&store, "e-1").unwrap();
        d.final_look = Some(18);
        d.save(&store, "e-1").unwrap();
        assert_eq!(DesignRecord::load(&store, "e-1").unwrap(), Some(sequential()));
        let judged = d.sequential_design().unwrap();
        assert_eq!((judged.first_look, judged.max_blocks, judged.final_look, judged.spending), (4, 21, Some(18), Spending::Hsd(-4.0)));
    }

    #[test]
    fn the_tags_of_an_older_experiment_give_the_same_design() {
        let mut d = sequential();
        let mut tags = d.tags();
        tags.extend(["timing=simultaneous".into(), "layout=shared".into(), "max_blocks=21".into(), "final_look=18".into()]);
        assert_eq!(DesignRecord::from_tags(&tags), Some(d.clone()));
        d.sequential = None;
        d.simultaneous = false;
        d.layout = None;
        let (mut tags, fixed) = (d.tags(), d.clone());
        assert!(tags.contains(&"design=blocks".to_string()), "{tags:?}");
        tags.extend(["max_blocks=21".into(), "final_look=18".into()]);
        assert_eq!(DesignRecord::from_tags(&tags), Some(fixed));
        assert_eq!(DesignRecord::from_tags(&["variant=a".into()]), None, "not made in blocks");
    }
}
