//! The distributions the intervals need, from the `statrs` crate: the standard normal's
//! quantile and CDF, Student's t's CDF and quantile for any degrees of freedom (fractional
//! ones included: Welch's), and the chi-squared quantile (the range of a spread estimated
//! from few blocks). Thin, so that the rest of the analysis names what it
//! needs and one place says where it comes from; the tests hold them to published tables.

use statrs::distribution::{ChiSquared, ContinuousCDF, Normal, StudentsT};

fn standard_normal() -> Normal {
    Normal::new(0.0, 1.0).expect("the standard normal")
}

/// Φ⁻¹(p), the standard normal quantile (−∞ at 0, +∞ at 1).
pub fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    standard_normal().inverse_cdf(p)
}

/// Φ(x), the standard normal CDF.
pub fn normal_cdf(x: f64) -> f64 {
    standard_normal().cdf(x)
}

/// φ(x), the standard normal density.
pub fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Student's t CDF with `df` (> 0, not necessarily whole) degrees of freedom; NaN for a
/// `df` that is not positive.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d.cdf(t),
        Err(_) => f64::NAN,
    }
}

/// Student's t quantile: the `t` with `t_cdf(t, df) = p`.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 || p.is_nan() {
        return f64::NAN;
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    // statrs refines its quantile by Newton steps; a bisection on the CDF finishes where those
    // are imprecise far in the tails at few degrees of freedom
    let d = match StudentsT::new(0.0, 1.0, df) {
        Ok(d) => d,
        Err(_) => return f64::NAN,
    };
    let guess = d.inverse_cdf(p);
    if guess.is_finite() && (d.cdf(guess) - p).abs() < 1e-12 {
        return guess;
    }
    let (mut lo, mut hi) = if p < 0.5 { (-1.0, 0.0) } else { (0.0, 1.0) };
    while d.cdf(lo) > p {
        lo *= 2.0;
    }
    while d.cdf(hi) < p {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if d.cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 * hi.abs().max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The chi-squared quantile with `df` degrees of freedom: the `x` below which a share `p`
/// lies; NaN for a `df` that is not positive.
pub fn chi_squared_quantile(p: f64, df: f64) -> f64 {
    match ChiSquared::new(df) {
        Ok(d) if (0.0..=1.0).contains(&p) => d.inverse_cdf(p),
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_and_t_quantiles_match_tables() {
        assert!((normal_quantile(0.975) - 1.959963984540054).abs() < 1e-8);
        assert!((normal_quantile(0.001) + 3.090232306167813).abs() < 1e-8);
        assert!((normal_cdf(1.959963984540054) - 0.975).abs() < 1e-9);
        assert!((normal_cdf(-3.0) - 0.0013498980316301).abs() < 1e-9);
        assert!((normal_pdf(0.0) - 0.3989422804014327).abs() < 1e-12);
        // qt() values; the fractional and extreme ones checked by numeric integration
        for (p, df, want) in [
            (0.975, 1.0, 12.706204736),
            (0.975, 2.0, 4.302652730),
            (0.975, 4.0, 2.776445105),
            (0.975, 9.0, 2.262157163),
            (0.975, 59.0, 2.000995378),
            (0.995, 3.0, 5.840909310),
            (0.9995, 2.5, 18.27789),
            (0.9975, 4.0, 5.597568),
            (0.99999, 2.0, 223.6057),
        ] {
            let got = t_quantile(p, df);
            assert!((got - want).abs() / want < 2e-5, "t({p}, {df}) = {got}, want {want}");
            assert!((t_cdf(got, df) - p).abs() < 1e-9);
        }
        assert!((t_quantile(0.025, 4.0) + 2.776445105).abs() < 1e-6);
        assert!((t_cdf(0.0, 3.3) - 0.5).abs() < 1e-12);
        assert!((t_cdf(-2.0, 1e6) - normal_cdf(-2.0)).abs() < 1e-6);
        assert!(t_quantile(0.9, 0.0).is_nan() && t_cdf(1.0, -1.0).is_nan());
        // qchisq(): 2 degrees of freedom, and 10
        for (p, df, want) in [(0.025, 2.0, 0.05063562), (0.975, 2.0, 7.37775891), (0.025, 10.0, 3.24697278), (0.975, 10.0, 20.48317735)] {
            let got = chi_squared_quantile(p, df);
            assert!((got - want).abs() / want < 1e-6, "chisq({p}, {df}) = {got}");
        }
        assert!(chi_squared_quantile(0.5, 0.0).is_nan());
    }
}
