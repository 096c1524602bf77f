//! Exact binomial sampling on top of [`StatsRng::unit_f64`], for drawing
//! multinomial counts in the grouped bootstrap and sign-flip test.
//!
//! Inversion when `n·min(p, 1−p) <= 30`, else BTPE (Kachitvichyanukul and
//! Schmeiser 1988, "Binomial random variate generation", CACM 31(2)), the
//! same split numpy uses. Both are exact up to floating point; the inversion
//! restarts past 10 standard deviations above the mean (a probability below
//! 1e-20), as numpy's does.

use crate::rng::StatsRng;

/// A draw from Binomial(`n`, `p`); `p` is clamped to `[0, 1]`.
pub(crate) fn binomial(rng: &mut StatsRng, n: u64, p: f64) -> u64 {
    if n == 0 || p <= 0.0 || p.is_nan() {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    if p <= 0.5 {
        draw(rng, n, p)
    } else {
        n - draw(rng, n, 1.0 - p)
    }
}

/// Requires `0 < p <= 0.5`, `n >= 1`.
fn draw(rng: &mut StatsRng, n: u64, p: f64) -> u64 {
    if n as f64 * p <= 30.0 {
        inversion(rng, n, p)
    } else {
        btpe(rng, n, p)
    }
}

#[allow(clippy::many_single_char_names)]
fn inversion(rng: &mut StatsRng, n: u64, p: f64) -> u64 {
    let q = 1.0 - p;
    let nf = n as f64;
    let qn = (nf * q.ln()).exp();
    let np = nf * p;
    let bound = (np + 10.0 * (np * q + 1.0).sqrt()).min(nf) as u64;
    let mut x = 0u64;
    let mut px = qn;
    let mut u = rng.unit_f64();
    while u > px {
        x += 1;
        if x > bound {
            x = 0;
            px = qn;
            u = rng.unit_f64();
        } else {
            u -= px;
            px = ((nf - x as f64 + 1.0) * p * px) / (x as f64 * q);
        }
    }
    x
}

/// Stirling-series correction used by the BTPE acceptance test.
fn stirling_tail(x: f64) -> f64 {
    let x2 = x * x;
    (13860.0 - (462.0 - (132.0 - (99.0 - 140.0 / x2) / x2) / x2) / x2) / x / 166_320.0
}

#[allow(clippy::many_single_char_names)]
fn btpe(rng: &mut StatsRng, n: u64, p: f64) -> u64 {
    let nf = n as f64;
    let r = p;
    let q = 1.0 - r;
    let fm = nf * r + r;
    let m = fm.floor();
    let npq = nf * r * q;
    let p1 = (2.195 * npq.sqrt() - 4.6 * q).floor() + 0.5;
    let xm = m + 0.5;
    let xl = xm - p1;
    let xr = xm + p1;
    let c = 0.134 + 20.5 / (15.3 + m);
    let a = (fm - xl) / (fm - xl * r);
    let lam_l = a * (1.0 + a / 2.0);
    let a = (xr - fm) / (xr * q);
    let lam_r = a * (1.0 + a / 2.0);
    let p2 = p1 * (1.0 + 2.0 * c);
    let p3 = p2 + c / lam_l;
    let p4 = p3 + c / lam_r;

    loop {
        let u = rng.unit_f64() * p4;
        let mut v = rng.unit_f64();
        let y: f64;
        if u <= p1 {
            // Triangular centre: accept at once.
            return (xm - p1 * v + u).floor() as u64;
        } else if u <= p2 {
            // Parallelograms.
            let x = xl + (u - p1) / c;
            v = v * c + 1.0 - (m - x + 0.5).abs() / p1;
            if v > 1.0 {
                continue;
            }
            y = x.floor();
        } else if u <= p3 {
            // Left exponential tail.
            if v == 0.0 {
                continue;
            }
            let yl = (xl + v.ln() / lam_l).floor();
            if yl < 0.0 {
                continue;
            }
            y = yl;
            v *= (u - p2) * lam_l;
        } else {
            // Right exponential tail.
            if v == 0.0 {
                continue;
            }
            let yr = (xr - v.ln() / lam_r).floor();
            if yr > nf {
                continue;
            }
            y = yr;
            v *= (u - p3) * lam_r;
        }

        let k = (y - m).abs();
        if k <= 20.0 || k >= npq / 2.0 - 1.0 {
            // Explicit evaluation of f(y)/f(m) by recursion.
            let s = r / q;
            let a = s * (nf + 1.0);
            let mut f = 1.0;
            if m < y {
                let mut i = m + 1.0;
                while i <= y {
                    f *= a / i - s;
                    i += 1.0;
                }
            } else if m > y {
                let mut i = y + 1.0;
                while i <= m {
                    f /= a / i - s;
                    i += 1.0;
                }
            }
            if v <= f {
                return y as u64;
            }
            continue;
        }

        // Squeeze on ln(v), then the final test with Stirling's formula.
        let rho = (k / npq) * ((k * (k / 3.0 + 0.625) + 0.166_666_666_666_666_66) / npq + 0.5);
        let t = -k * k / (2.0 * npq);
        let big_a = v.ln();
        if big_a < t - rho {
            return y as u64;
        }
        if big_a > t + rho {
            continue;
        }
        let x1 = y + 1.0;
        let f1 = m + 1.0;
        let z = nf + 1.0 - m;
        let w = nf - y + 1.0;
        let bound = xm * (f1 / x1).ln()
            + (nf - m + 0.5) * (z / w).ln()
            + (y - m) * (w * r / (x1 * q)).ln()
            + stirling_tail(f1)
            + stirling_tail(z)
            + stirling_tail(x1)
            + stirling_tail(w);
        if big_a <= bound {
            return y as u64;
        }
    }
}
