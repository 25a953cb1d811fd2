//! The fit of one comparison's per-block differences `d = ln B − ln A`: their mean (Student's
//! t on n − 1 degrees of freedom), or, when the blocks ran the two sides in both orders, the
//! mean with an *order effect* — a least-squares line `d = δ + o·s`, `s = +1` when B ran after
//! A in the block and −1 when it ran first — so that what running second costs is estimated
//! (`o`, itself a finding) and taken out of the spread instead of widening the interval of the
//! change `δ` (n − 2 degrees of freedom). Counterbalanced blocks alternate `s`, so `δ` is the
//! plain mean when their number is even; only the spread changes. The order effect is fitted
//! from [`ORDER_FROM`] blocks on: with fewer, the degree of freedom it takes widens the
//! interval more than removing a typical order effect narrows it (a rule fixed in advance, by
//! the count alone, so that the sequential looks can be calibrated for it).
//!
//! Kept as running sums ([`Sums`]), so that every look of a sequential design — and every
//! simulated look of the calibration in `sequential.rs` — costs the same few operations. It
//! fits; which interval a look gives is `sequential.rs`'s and `paired.rs`'s business.

/// The fewest differences from which an order effect is fitted. At 8 blocks, the t quantile
/// of n − 2 degrees of freedom is about 6 % above that of n − 1 (at the levels of a few
/// judged figures), which a 5 % order effect in a block spread of 14 % pays for (it is 13 % of
/// the variance); with fewer blocks it does not.
pub const ORDER_FROM: usize = 8;

/// The model fitted to `n` differences: the order effect from [`ORDER_FROM`] on, when
/// `ordered` (every difference has its order, and both orders occur).
pub fn model_for(n: usize, ordered: bool) -> Model {
    if ordered && n >= ORDER_FROM {
        Model::MeanAndOrder
    } else {
        Model::Mean
    }
}

/// The model fitted to the differences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Model {
    /// Their mean.
    Mean,
    /// Their mean and an order effect (which side ran second in the block).
    MeanAndOrder,
}

impl Model {
    /// The parameters fitted: the degrees of freedom it takes from n differences.
    pub fn params(self) -> usize {
        match self {
            Model::Mean => 1,
            Model::MeanAndOrder => 2,
        }
    }
}

/// Running sums of the differences (`d`) and of their order (`s`, ±1).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sums {
    pub n: usize,
    d: f64,
    dd: f64,
    s: f64,
    ss: f64,
    sd: f64,
    /// Every difference came with its order.
    ordered: bool,
}

/// A fit: the change `δ` (in logarithms) with its standard error, the spread of one block's
/// difference left after the fit, and, with [`Model::MeanAndOrder`], the order effect.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub model: Model,
    pub n: usize,
    pub mean_ln: f64,
    pub se_ln: f64,
    /// One block's spread (the residual standard deviation).
    pub sd_ln: f64,
    pub df: f64,
    /// What running second adds, in logarithms, and its standard error.
    pub order_ln: Option<(f64, f64)>,
}

impl Sums {
    /// Sums of `diffs`; `orders` (±1 per difference, +1 where B ran second) when known for
    /// every one of them, else empty.
    pub fn of(diffs: &[f64], orders: &[f64]) -> Sums {
        let mut s = Sums { ordered: orders.len() == diffs.len(), ..Sums::default() };
        for (i, &d) in diffs.iter().enumerate() {
            s.push(d, orders.get(i).copied());
        }
        s
    }

    /// Adds one difference, with its order when known (an unknown one makes the order
    /// effect unknown).
    pub fn push(&mut self, d: f64, order: Option<f64>) {
        if self.n == 0 {
            self.ordered = true;
        }
        self.n += 1;
        self.d += d;
        self.dd += d * d;
        match order {
            Some(s) => {
                self.s += s;
                self.ss += s * s;
                self.sd += s * d;
            }
            None => self.ordered = false,
        }
    }

    /// Whether every difference has its order and both orders occur.
    pub fn ordered(&self) -> bool {
        self.ordered && self.n > 0 && self.ss - self.s * self.s / self.n as f64 > 1e-9
    }

    /// The model these differences are fitted with ([`model_for`]).
    pub fn model(&self) -> Model {
        model_for(self.n, self.ordered())
    }

    /// The fit of [`Sums::model`]; `None` with fewer than two differences.
    pub fn fit(&self) -> Option<Fit> {
        self.fit_as(self.model())
    }

    /// The fit of `model` (`None` when the differences do not allow it).
    pub fn fit_as(&self, model: Model) -> Option<Fit> {
        let n = self.n as f64;
        if self.n <= model.params() {
            return None;
        }
        let mean = self.d / n;
        let syy = (self.dd - n * mean * mean).max(0.0);
        match model {
            Model::Mean => {
                let sd = (syy / (n - 1.0)).sqrt();
                Some(Fit { model, n: self.n, mean_ln: mean, se_ln: sd / n.sqrt(), sd_ln: sd, df: n - 1.0, order_ln: None })
            }
            Model::MeanAndOrder => {
                let x_bar = self.s / n;
                let sxx = self.ss - n * x_bar * x_bar;
                if !self.ordered || sxx <= 1e-9 {
                    return None;
                }
                let sxy = self.sd - n * x_bar * mean;
                let slope = sxy / sxx;
                let intercept = mean - slope * x_bar;
                let rss = (syy - sxy * sxy / sxx).max(0.0);
                let var = rss / (n - 2.0);
                let se = (var * (1.0 / n + x_bar * x_bar / sxx)).sqrt();
                Some(Fit { model, n: self.n, mean_ln: intercept, se_ln: se, sd_ln: var.sqrt(), df: n - 2.0, order_ln: Some((slope, (var / sxx).sqrt())) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_is_students_and_the_order_effect_comes_out_of_the_spread() {
        let d = [0.10, 0.02, 0.12, 0.00, 0.09, 0.03, 0.10, 0.02, 0.12, 0.00, 0.09, 0.03];
        let plain = Sums::of(&d, &[]).fit().unwrap();
        assert_eq!((plain.model, plain.df), (Model::Mean, 11.0));
        assert!((plain.mean_ln - 0.06).abs() < 1e-12);
        let sd = (d.iter().map(|x| (x - 0.06f64).powi(2)).sum::<f64>() / 11.0).sqrt();
        assert!((plain.sd_ln - sd).abs() < 1e-12 && (plain.se_ln - sd / 12f64.sqrt()).abs() < 1e-12);
        // B second in the odd blocks: those are 0.087 higher, an order effect of ±0.043
        let s: Vec<f64> = (0..12).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let fit = Sums::of(&d, &s).fit().unwrap();
        assert_eq!((fit.model, fit.df), (Model::MeanAndOrder, 10.0));
        assert!((fit.mean_ln - 0.06).abs() < 1e-12, "balanced: the change is the mean");
        let (o, se_o) = fit.order_ln.unwrap();
        assert!((o - 0.0433333).abs() < 1e-6, "{o}");
        assert!(se_o > 0.0 && fit.sd_ln < plain.sd_ln / 3.0, "{fit:?}");
        // one order only: nothing to separate; too few blocks: not worth a degree of freedom
        assert_eq!(Sums::of(&d, &[1.0; 12]).model(), Model::Mean);
        assert_eq!(Sums::of(&d[..7], &s[..7]).model(), Model::Mean);
        assert_eq!(Sums::of(&d[..8], &s[..8]).model(), Model::MeanAndOrder);
        assert!(Sums::of(&d[..1], &[]).fit().is_none());
    }

    #[test]
    fn an_unbalanced_order_is_fitted_by_least_squares() {
        // d = 0.2 + 0.05 s exactly, s unbalanced: the intercept is δ, not the mean
        let s = [1.0, 1.0, 1.0, -1.0, 1.0, 1.0, -1.0, 1.0, 1.0];
        let d: Vec<f64> = s.iter().map(|x| 0.2 + 0.05 * x).collect();
        let fit = Sums::of(&d, &s).fit().unwrap();
        assert_eq!(fit.model, Model::MeanAndOrder);
        assert!((fit.mean_ln - 0.2).abs() < 1e-12 && (fit.order_ln.unwrap().0 - 0.05).abs() < 1e-12, "{fit:?}");
        assert!(fit.se_ln < 1e-6);
        let mut pushed = Sums::default();
        for (x, o) in d.iter().zip(s) {
            pushed.push(*x, Some(o));
        }
        assert_eq!(pushed, Sums::of(&d, &s));
        pushed.push(0.3, None);
        assert_eq!(pushed.model(), Model::Mean);
    }
}
