//! Binomial proportions and rater agreement: Wilson interval, Cohen's
//! kappa and the judge-versus-gold summary.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::bootstrap::{Interval, check_unit};
use crate::{StatsError, defaults};

/// The two-sided normal critical value `z = Φ⁻¹(1 − α/2)` for a confidence
/// level `1 − α` (1.959963984540054 at 95 %).
pub fn normal_critical_value(confidence: f64) -> Result<f64, StatsError> {
    check_unit(confidence)?;
    let normal = Normal::standard();
    Ok(normal.inverse_cdf(1.0 - (1.0 - confidence) / 2.0))
}

/// Wilson score interval for a binomial proportion `successes / n`.
///
/// With `p̂ = successes/n` and `z` from [`normal_critical_value`]:
/// centre `(p̂ + z²/2n) / (1 + z²/n)`, half-width
/// `z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n)`, clamped to `[0, 1]` (the formula
/// of statsmodels' `proportion_confint(method="wilson")`). The estimate is
/// `p̂`, which always lies inside.
///
/// ```
/// let ci = sparring_stats::wilson_interval(8, 10, 0.95)?;
/// assert_eq!(ci.estimate, 0.8);
/// assert!((ci.lo - 0.4901624).abs() < 1e-6 && (ci.hi - 0.9433178).abs() < 1e-6);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn wilson_interval(successes: u64, n: u64, confidence: f64) -> Result<Interval, StatsError> {
    if n == 0 {
        return Err(StatsError::Empty);
    }
    if successes > n {
        return Err(StatsError::SuccessesExceedSamples { n, c: successes });
    }
    let z = normal_critical_value(confidence)?;
    let nf = n as f64;
    let p = successes as f64 / nf;
    let z2 = z * z;
    let denom = 1.0 + z2 / nf;
    let centre = (p + z2 / (2.0 * nf)) / denom;
    let half = z * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / denom;
    Ok(Interval {
        estimate: p,
        lo: (centre - half).clamp(0.0, p),
        hi: (centre + half).clamp(p, 1.0),
    })
}

/// Cohen's kappa for two raters' binary labels on the same items:
/// `(p_o − p_e) / (1 − p_e)` with observed agreement `p_o` and chance
/// agreement `p_e = p_a·p_b + (1−p_a)(1−p_b)` from each rater's share of
/// `true`. Computed from integer counts, so it is exact up to one rounding.
///
/// Returns `Ok(None)` when `p_e = 1`, which happens exactly when both raters
/// gave the same single label to every item: agreement is then perfect but
/// kappa is 0/0 (scikit-learn returns NaN there).
///
/// ```
/// let a = [true, true, false, false];
/// let b = [true, false, false, false];
/// // p_o = 3/4, p_e = (2·1 + 2·3)/16 = 1/2, kappa = 1/2.
/// assert_eq!(sparring_stats::cohen_kappa(&a, &b)?, Some(0.5));
/// assert_eq!(sparring_stats::cohen_kappa(&[true, true], &[true, true])?, None);
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn cohen_kappa(a: &[bool], b: &[bool]) -> Result<Option<f64>, StatsError> {
    check_pairs(a, b)?;
    let n = a.len() as u128;
    let agree = a.iter().zip(b).filter(|(x, y)| x == y).count() as u128;
    let a1 = a.iter().filter(|&&x| x).count() as u128;
    let b1 = b.iter().filter(|&&x| x).count() as u128;
    // n²·p_e and n²·p_o, both integers.
    let expected = a1 * b1 + (n - a1) * (n - b1);
    let observed = agree * n;
    let n2 = n * n;
    if expected == n2 {
        return Ok(None);
    }
    let num = observed as f64 - expected as f64;
    let den = (n2 - expected) as f64;
    Ok(Some(num / den))
}

/// How well a judge's pass/fail verdicts agree with gold labels.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct JudgeAgreement {
    /// Items compared.
    pub n: usize,
    /// Share of items where judge and gold agree.
    pub agreement: f64,
    /// Wilson interval of `agreement` at [`defaults::CONFIDENCE`]: `(lo, hi)`.
    pub agreement_ci95: (f64, f64),
    /// Cohen's kappa; `None` when it is undefined (see [`cohen_kappa`]).
    pub kappa: Option<f64>,
    /// Share of gold-fail items the judge passed; `None` when no item is a
    /// gold fail.
    pub pass_when_gold_fail: Option<f64>,
}

/// Agreement of `judge[i]` (the judge passed item `i`) with `gold[i]` (the
/// gold label says item `i` passes).
///
/// ```
/// let judge = [true, true, false, true, false];
/// let gold = [true, false, false, true, true];
/// let s = sparring_stats::judge_agreement(&judge, &gold)?;
/// assert_eq!(s.n, 5);
/// assert_eq!(s.agreement, 0.6);
/// assert_eq!(s.pass_when_gold_fail, Some(0.5));
/// # Ok::<(), sparring_stats::StatsError>(())
/// ```
pub fn judge_agreement(judge: &[bool], gold: &[bool]) -> Result<JudgeAgreement, StatsError> {
    check_pairs(judge, gold)?;
    let n = judge.len();
    let agree = judge.iter().zip(gold).filter(|(j, g)| j == g).count();
    let ci = wilson_interval(agree as u64, n as u64, defaults::CONFIDENCE)?;
    let gold_fail = gold.iter().filter(|&&g| !g).count();
    let passed_gold_fail = judge.iter().zip(gold).filter(|&(&j, &g)| j && !g).count();
    Ok(JudgeAgreement {
        n,
        agreement: ci.estimate,
        agreement_ci95: (ci.lo, ci.hi),
        kappa: cohen_kappa(judge, gold)?,
        pass_when_gold_fail: (gold_fail > 0).then(|| passed_gold_fail as f64 / gold_fail as f64),
    })
}

fn check_pairs(a: &[bool], b: &[bool]) -> Result<(), StatsError> {
    if a.len() != b.len() {
        return Err(StatsError::LengthMismatch {
            left: a.len(),
            right: b.len(),
        });
    }
    if a.is_empty() {
        return Err(StatsError::Empty);
    }
    Ok(())
}
