//! An experiment read back from the store, so that it can be compared again (other options, a
//! gate, JSON, its HTML page) without running it again. `casslab experiment` tags each run it
//! makes with `experiment=NAME` and `experiment_id=ID`, and each measured run also with
//! `variant=`, `repetition=`, `position=` and `variant_index=`; the runs of the unmeasured
//! round carry `unmeasured=VARIANT` and the loads before settling `load_of=VARIANT`. This file
//! turns those tags back into the experiment's groups: each variant's measured runs, the
//! variants in the file's order, the baseline first; and reads the design saved with it
//! (`design_record`).
//!
//! It reads the store and says what it found; which runs are valid enough to compare is the
//! caller's (`validity::screen`), and so is the arithmetic (`study`).

use super::design_record::DesignRecord;
use super::study::{Group, StudyPlan};
use crate::store::{tag_key, RunId, Store, StoreError};

/// An experiment's runs, as saved.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedExperiment {
    /// The experiment's name (`name:` of its file).
    pub name: String,
    /// The id of this execution of it (`NAME-STAMP`).
    pub id: String,
    /// Each variant's measured runs in the order they ran, the variants in the file's order
    /// (the baseline first).
    pub groups: Vec<Group>,
    /// The measured runs in the order they ran: (variant, repetition).
    pub order: Vec<(String, u32)>,
    /// `interleaved`, `counterbalanced` or `shuffled`, when recorded.
    pub order_kind: Option<String>,
    /// The seed of a shuffled order.
    pub order_seed: Option<String>,
    /// The runs of the unmeasured round.
    pub unmeasured: Vec<RunId>,
    /// The loads run before settling.
    pub loads: Vec<RunId>,
    /// The fixed rates of a `rates:` experiment (variants `name@rate`), in the order first run.
    pub rates: Vec<f64>,
    /// How its runs were made in blocks and are judged (its saved design record, or the tags
    /// of an experiment saved before the record existed); `None`: not made in blocks.
    pub design: Option<DesignRecord>,
}

impl SavedExperiment {
    /// The groups of one rate of a `rates:` experiment, or all groups when there are none.
    pub fn groups_at(&self, rate: Option<f64>) -> Vec<Group> {
        self.groups.iter().filter(|g| rate.is_none() || rate_of(&g.label) == rate).cloned().collect()
    }

    /// "experiment NAME (ID): VARIANT (runs …), …; baseline: VARIANT".
    pub fn headline(&self) -> String {
        let variants: Vec<String> = self.groups.iter().map(|g| format!("{} (runs {})", g.label, runs_text(&g.runs))).collect();
        format!("experiment {} ({}): {}; baseline: {}", self.name, self.id, variants.join(", "), self.groups[0].label)
    }

    /// How its runs were measured, as the notes of its comparison: the design (at the same
    /// time) or the order the runs ran in, and the runs of its unmeasured round.
    pub fn design_notes(&self) -> Vec<String> {
        let mut notes = vec![match self.design.as_ref().filter(|d| d.simultaneous) {
            Some(d) => format!("measured design: simultaneous (the variants at the same time, layout {})", d.layout.as_deref().unwrap_or("shared")),
            None => {
                let seed = self.order_seed.as_ref().map(|s| format!(", seed {s}")).unwrap_or_default();
                let order: Vec<&str> = self.order.iter().map(|(v, _)| v.as_str()).collect();
                format!("measured order ({}{seed}): {}", self.order_kind.as_deref().unwrap_or("as run"), order.join(" "))
            }
        }];
        if !self.unmeasured.is_empty() {
            notes.push(format!("unmeasured round: runs {}", runs_text(&self.unmeasured)));
        }
        notes
    }

    /// The study plan it is judged with: `plan` (the command line's), in its window, block by
    /// block (sequentially if it ran so) with its judged figures when it was made in blocks,
    /// and its family of comparisons unless `family_asked` (the command line asked for one).
    pub fn study_plan(&self, plan: &StudyPlan, window_s: Option<f64>, family_asked: bool) -> StudyPlan {
        let mut plan = plan.clone();
        plan.opts.window_s = window_s.unwrap_or(plan.opts.window_s);
        if let Some(d) = &self.design {
            plan.blocks = Some(d.block_design());
            plan.judged = plan.judged.or_else(|| d.judged.clone());
            if !family_asked {
                plan.family = d.family;
            }
        }
        plan
    }
}

/// Run ids, a space between each.
fn runs_text(ids: &[RunId]) -> String {
    ids.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
}

/// Why an experiment could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum SavedExperimentError {
    #[error("reading the saved runs: {0}")]
    Store(StoreError),
    #[error("no saved experiment is named or has the id \"{0}\" (`casslab runs --tag experiment` lists the runs of experiments)")]
    NotFound(String),
    #[error("experiment {0} searched for the highest rate meeting an SLA: its runs are steps of searches, not repetitions to compare (`casslab runs --tag experiment_id={0}` lists them)")]
    FindMax(String),
    #[error("experiment {0} has no measured run saved (it was stopped before its first one)")]
    NothingMeasured(String),
}

// The store's error is shown in the message, so it is not a source too (`{:#}` would print it
// twice).
impl From<StoreError> for SavedExperimentError {
    fn from(e: StoreError) -> SavedExperimentError {
        SavedExperimentError::Store(e)
    }
}

/// The value of the run's tag `key=…`.
fn tag<'a>(tags: &'a [String], key: &str) -> Option<&'a str> {
    tags.iter().find(|t| tag_key(t) == key && t.len() > key.len()).map(|t| &t[key.len() + 1..])
}

/// The rate of a `rates:` variant's label (`name@1000`).
fn rate_of(label: &str) -> Option<f64> {
    label.rsplit_once('@').and_then(|(_, r)| r.parse::<f64>().ok())
}

/// The experiment whose id is `key`, or the latest one named `key`.
pub fn saved_experiment(store: &Store, key: &str) -> Result<SavedExperiment, SavedExperimentError> {
    let mut ids = store.runs_tagged(&format!("experiment_id={key}"))?;
    let mut id = key.to_string();
    if ids.is_empty() {
        // a name: its latest execution
        let named = store.runs_tagged(&format!("experiment={key}"))?;
        let last = named.last().ok_or_else(|| SavedExperimentError::NotFound(key.to_string()))?;
        id = tag(&store.run(*last)?.tags, "experiment_id").ok_or_else(|| SavedExperimentError::NotFound(key.to_string()))?.to_string();
        ids = store.runs_tagged(&format!("experiment_id={id}"))?;
    }
    let mut out = SavedExperiment {
        name: String::new(),
        id: id.clone(),
        groups: Vec::new(),
        order: Vec::new(),
        order_kind: None,
        order_seed: None,
        unmeasured: Vec::new(),
        loads: Vec::new(),
        rates: Vec::new(),
        design: DesignRecord::load(store, &id)?,
    };
    // (position, variant index, variant, repetition, run)
    let mut measured: Vec<(u32, Option<u32>, String, u32, RunId)> = Vec::new();
    for run in ids {
        let tags = store.run(run)?.tags;
        if out.name.is_empty() {
            out.name = tag(&tags, "experiment").unwrap_or(&id).to_string();
        }
        if tag(&tags, "find_max").is_some() {
            return Err(SavedExperimentError::FindMax(id));
        }
        if tag(&tags, "unmeasured").is_some() {
            out.unmeasured.push(run);
        } else if tag(&tags, "load_of").is_some() {
            out.loads.push(run);
        } else if let Some(variant) = tag(&tags, "variant") {
            let number = |k| tag(&tags, k).and_then(|v| v.parse::<u32>().ok());
            out.order_kind = out.order_kind.or_else(|| tag(&tags, "order").map(str::to_string));
            out.order_seed = out.order_seed.or_else(|| tag(&tags, "order_seed").map(str::to_string));
            // an experiment saved before the record existed: the first measured run's tags
            if out.design.is_none() {
                out.design = DesignRecord::from_tags(&tags);
            }
            measured.push((number("position").unwrap_or(u32::MAX), number("variant_index"), variant.to_string(), number("repetition").unwrap_or(0), run));
        }
    }
    if measured.is_empty() {
        return Err(SavedExperimentError::NothingMeasured(id));
    }
    measured.sort_by_key(|m| (m.0, m.4));
    // the file's order where recorded; else the order of first appearance (the file's order
    // in the first repetition of an interleaved or counterbalanced experiment)
    let mut variants: Vec<(Option<u32>, usize, String)> = Vec::new();
    for (k, (_, index, name, _, _)) in measured.iter().enumerate() {
        if !variants.iter().any(|v| &v.2 == name) {
            variants.push((*index, k, name.clone()));
        }
    }
    variants.sort_by_key(|(index, first, _)| (index.unwrap_or(u32::MAX), *first));
    for (_, _, name) in variants {
        let runs = measured.iter().filter(|m| m.2 == name).map(|m| m.4).collect();
        if let Some(rate) = rate_of(&name).filter(|r| !out.rates.contains(r)) {
            out.rates.push(rate);
        }
        out.groups.push(Group { label: name, runs });
    }
    out.order = measured.into_iter().map(|(_, _, v, rep, _)| (v, rep)).collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::paired::SequentialDesign;
    use crate::analysis::sequential::Spending;
    use crate::analysis::study::Family;
    use crate::config::{RunConfig, RunEnvironment};

    fn save(store: &Store, tags: &[&str]) -> RunId {
        let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
        store.begin_run("kv", &RunConfig::default(), &RunEnvironment::default(), &tags, 1_000).unwrap()
    }

    #[test]
    fn the_groups_come_back_in_the_files_order_whatever_ran_first() {
        let store = Store::open_in_memory().unwrap();
        let e = ["experiment=cache", "experiment_id=cache-1"];
        let u = save(&store, &[e[0], e[1], "unmeasured=a"]);
        let l = save(&store, &[e[0], e[1], "load_of=a"]);
        // shuffled: b ran first, but a is the file's first variant
        let b1 = save(&store, &[e[0], e[1], "order=shuffled", "order_seed=7", "variant=b", "variant_index=1", "repetition=1", "position=1"]);
        let a1 = save(&store, &[e[0], e[1], "order=shuffled", "order_seed=7", "variant=a", "variant_index=0", "repetition=1", "position=2"]);
        let a2 = save(&store, &[e[0], e[1], "order=shuffled", "order_seed=7", "variant=a", "variant_index=0", "repetition=2", "position=3"]);
        save(&store, &["experiment=other", "experiment_id=other-1", "variant=a", "position=1"]);
        let s = saved_experiment(&store, "cache-1").unwrap();
        assert_eq!((s.name.as_str(), s.id.as_str()), ("cache", "cache-1"));
        assert_eq!(s.groups, vec![Group { label: "a".into(), runs: vec![a1, a2] }, Group { label: "b".into(), runs: vec![b1] }]);
        assert_eq!(s.order, vec![("b".to_string(), 1), ("a".to_string(), 1), ("a".to_string(), 2)]);
        assert_eq!((s.order_kind.as_deref(), s.order_seed.as_deref()), (Some("shuffled"), Some("7")));
        assert_eq!((s.unmeasured, s.loads), (vec![u], vec![l]));
        // by name: the latest execution
        let c2 = save(&store, &[e[0], "experiment_id=cache-2", "variant=a", "repetition=1", "position=1"]);
        let s = saved_experiment(&store, "cache").unwrap();
        assert_eq!((s.id.as_str(), s.groups.len(), s.groups[0].runs.clone()), ("cache-2", 1, vec![c2]));
    }

    /// A sequential experiment the budget ended spends the error rate left at its final look,
    /// judged again from the store as it was judged; and its family comes back with it.
    #[test]
    fn a_sequential_design_comes_back_with_its_final_look_and_family() {
        let store = Store::open_in_memory().unwrap();
        let design = ["design=sequential", "precision=0.05", "first_look=4", "spending=obrien-fleming", "max_blocks=21", "final_look=18", "family=experiment"];
        for (k, v) in ["a", "b"].iter().enumerate() {
            let mut tags = vec!["experiment=s", "experiment_id=s-1"];
            let (variant, position) = (format!("variant={v}"), format!("position={}", k + 1));
            tags.extend([variant.as_str(), "repetition=1", position.as_str()]);
            tags.extend(design);
            save(&store, &tags);
        }
        let s = saved_experiment(&store, "s").unwrap();
        let design = s.design.as_ref().unwrap();
        assert_eq!(design.sequential_design(), Some(SequentialDesign { final_look: Some(18), ..SequentialDesign::new(Spending::OBrienFleming, 4, 21) }));
        assert_eq!(design.family, Family::Experiment);
        // the record saved with an experiment is what comes back, whatever its runs' tags say
        let mut record = design.clone();
        record.final_look = None;
        record.save(&store, "s-1").unwrap();
        assert_eq!(saved_experiment(&store, "s").unwrap().design, Some(record));
    }

    #[test]
    fn runs_without_a_variant_index_keep_the_order_of_the_first_repetition() {
        let store = Store::open_in_memory().unwrap();
        let t = |v: &str, p: &str| vec!["experiment=x".to_string(), "experiment_id=x-1".into(), format!("variant={v}"), format!("position={p}")];
        let tags: Vec<Vec<String>> = vec![t("base@100", "1"), t("new@100", "2"), t("new@200", "4"), t("base@200", "3")];
        for tg in &tags {
            save(&store, &tg.iter().map(String::as_str).collect::<Vec<_>>());
        }
        let s = saved_experiment(&store, "x").unwrap();
        let labels: Vec<&str> = s.groups.iter().map(|g| g.label.as_str()).collect();
        assert_eq!(labels, ["base@100", "new@100", "base@200", "new@200"]);
        assert_eq!(s.rates, [100.0, 200.0]);
        assert_eq!(s.groups_at(Some(200.0)).iter().map(|g| g.label.clone()).collect::<Vec<_>>(), ["base@200", "new@200"]);
    }

    #[test]
    fn searches_unknown_names_and_empty_experiments_are_said_so() {
        let store = Store::open_in_memory().unwrap();
        assert!(matches!(saved_experiment(&store, "nope"), Err(SavedExperimentError::NotFound(_))));
        save(&store, &["experiment=f", "experiment_id=f-1", "variant=a", "find_max=s1", "step=1"]);
        assert!(matches!(saved_experiment(&store, "f"), Err(SavedExperimentError::FindMax(id)) if id == "f-1"));
        save(&store, &["experiment=g", "experiment_id=g-1", "unmeasured=a"]);
        let e = saved_experiment(&store, "g-1").unwrap_err();
        assert!(matches!(e, SavedExperimentError::NothingMeasured(_)) && e.to_string().contains("stopped before its first one"), "{e}");
    }
}
