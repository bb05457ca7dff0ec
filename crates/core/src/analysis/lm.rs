//! A small bounded Levenberg-Marquardt solver for three-parameter least
//! squares (Marquardt 1963, with his diagonal scaling so that parameters of
//! very different size, like kappa ~ 1e-4 and lambda ~ 1e4, are treated
//! alike; Nocedal & Wright, "Numerical Optimization", 2nd ed., §10.3).
//!
//! Bounds are handled by projection: a trial step is clamped into the box,
//! and a parameter sitting on a bound whose gradient points out of the box
//! is held fixed for that step (an active-set rule as in Kanzow, Yamashita
//! & Fukushima, "Levenberg-Marquardt methods with strong local convergence
//! properties for solving nonlinear equations with convex constraints",
//! 2004).

pub(crate) const MAX_ITERATIONS: usize = 1000;

type Mat = [[f64; 3]; 3];

pub(crate) trait Problem {
    const LOWER: [f64; 3];
    const UPPER: [f64; 3];
    /// Number of observations.
    fn len(&self) -> usize;
    /// Residual `y - f(p)` of observation `i`, and the gradient of `f`.
    fn residual(&self, i: usize, p: [f64; 3]) -> (f64, [f64; 3]);
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Solution {
    pub params: [f64; 3],
    pub sse: f64,
    pub converged: bool,
}

pub(crate) fn minimize<P: Problem>(problem: &P, start: [f64; 3]) -> Solution {
    let mut p = clamp::<P>(start);
    let mut sse = sum_of_squares(problem, p);
    let mut mu = 1e-3;
    for _ in 0..MAX_ITERATIONS {
        let (a, g) = normal_equations(problem, p);
        let free = free_parameters::<P>(p, &g);
        let Some((next, next_sse)) = improving_step::<P>(problem, p, sse, &a, &g, free, &mut mu)
        else {
            // No step in any trust region lowers the SSE: a minimum.
            return Solution {
                params: p,
                sse,
                converged: true,
            };
        };
        let small_step = (0..3).all(|i| (next[i] - p[i]).abs() <= 1e-12 * p[i].abs().max(1e-12));
        let small_gain = sse - next_sse <= 1e-15 * sse;
        p = next;
        sse = next_sse;
        if small_step || small_gain {
            return Solution {
                params: p,
                sse,
                converged: true,
            };
        }
    }
    Solution {
        params: p,
        sse,
        converged: false,
    }
}

/// Tries ever more damped steps until one lowers the SSE; adapts `mu`.
fn improving_step<P: Problem>(
    problem: &P,
    p: [f64; 3],
    sse: f64,
    a: &Mat,
    g: &[f64; 3],
    free: [bool; 3],
    mu: &mut f64,
) -> Option<([f64; 3], f64)> {
    while *mu < 1e16 {
        if let Some(delta) = damped_step(a, g, free, *mu) {
            let trial = clamp::<P>([p[0] + delta[0], p[1] + delta[1], p[2] + delta[2]]);
            let trial_sse = sum_of_squares(problem, trial);
            if trial_sse < sse {
                *mu = (*mu / 10.0).max(1e-15);
                return Some((trial, trial_sse));
            }
        }
        *mu *= 10.0;
    }
    None
}

/// Solves `(A + mu diag(A)) delta = g` over the free parameters.
fn damped_step(a: &Mat, g: &[f64; 3], free: [bool; 3], mu: f64) -> Option<[f64; 3]> {
    let idx: Vec<usize> = (0..3).filter(|&i| free[i] && a[i][i] > 0.0).collect();
    if idx.is_empty() {
        return None;
    }
    let k = idx.len();
    let mut m = [[0.0; 3]; 3];
    let mut rhs = [0.0; 3];
    for (r, &i) in idx.iter().enumerate() {
        for (c, &j) in idx.iter().enumerate() {
            m[r][c] = a[i][j];
        }
        m[r][r] *= 1.0 + mu;
        rhs[r] = g[i];
    }
    let solution = solve(m, rhs, k)?;
    let mut delta = [0.0; 3];
    for (r, &i) in idx.iter().enumerate() {
        delta[i] = solution[r];
    }
    Some(delta)
}

/// A parameter on a bound whose descent direction leaves the box is held.
fn free_parameters<P: Problem>(p: [f64; 3], g: &[f64; 3]) -> [bool; 3] {
    [0, 1, 2].map(|i| !((p[i] <= P::LOWER[i] && g[i] < 0.0) || (p[i] >= P::UPPER[i] && g[i] > 0.0)))
}

fn clamp<P: Problem>(p: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| p[i].clamp(P::LOWER[i], P::UPPER[i]))
}

fn sum_of_squares<P: Problem>(problem: &P, p: [f64; 3]) -> f64 {
    (0..problem.len())
        .map(|i| problem.residual(i, p).0.powi(2))
        .sum()
}

/// `J^T J` and `J^T r`: `J^T r` is minus half the gradient of the SSE.
fn normal_equations<P: Problem>(problem: &P, p: [f64; 3]) -> (Mat, [f64; 3]) {
    let mut a = [[0.0; 3]; 3];
    let mut g = [0.0; 3];
    for i in 0..problem.len() {
        let (r, j) = problem.residual(i, p);
        for row in 0..3 {
            g[row] += j[row] * r;
            for col in 0..3 {
                a[row][col] += j[row] * j[col];
            }
        }
    }
    (a, g)
}

/// `J^T J` at `p`, for the covariance of the estimates.
pub(crate) fn normal_matrix<P: Problem>(problem: &P, p: [f64; 3]) -> Mat {
    normal_equations(problem, p).0
}

/// Inverse of a symmetric positive definite 3x3 matrix; `None` when
/// singular.
pub(crate) fn inverse(a: &Mat) -> Option<Mat> {
    let mut inv = [[0.0; 3]; 3];
    for col in 0..3 {
        let mut e = [0.0; 3];
        e[col] = 1.0;
        let x = solve(*a, e, 3)?;
        for row in 0..3 {
            inv[row][col] = x[row];
        }
    }
    Some(inv)
}

/// Solves the leading k x k block of a symmetric system with a positive
/// diagonal. The system is first scaled to unit diagonal (Jacobi scaling):
/// the USL's normal matrix mixes entries 20 orders of magnitude apart, and
/// only relative to the diagonal can a pivot be judged singular.
fn solve(m: Mat, b: [f64; 3], k: usize) -> Option<[f64; 3]> {
    let mut d = [1.0; 3];
    for i in 0..k {
        d[i] = m[i][i].sqrt();
        if !(d[i] > 0.0 && d[i].is_finite()) {
            return None;
        }
    }
    let mut scaled = [[0.0; 3]; 3];
    let mut rhs = [0.0; 3];
    for i in 0..k {
        for j in 0..k {
            scaled[i][j] = m[i][j] / (d[i] * d[j]);
        }
        rhs[i] = b[i] / d[i];
    }
    let y = eliminate(scaled, rhs, k)?;
    Some([0, 1, 2].map(|i| if i < k { y[i] / d[i] } else { 0.0 }))
}

/// Gaussian elimination with partial pivoting on the leading k x k block
/// of a matrix with unit diagonal.
fn eliminate(mut m: Mat, mut b: [f64; 3], k: usize) -> Option<[f64; 3]> {
    for col in 0..k {
        let pivot = (col..k).max_by(|&x, &y| m[x][col].abs().total_cmp(&m[y][col].abs()))?;
        if m[pivot][col].abs() <= 1e-13 {
            return None;
        }
        m.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = m[col];
        for row in col + 1..k {
            let f = m[row][col] / pivot_row[col];
            for (c, v) in m[row].iter_mut().enumerate().take(k).skip(col) {
                *v -= f * pivot_row[c];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..k).rev() {
        let tail: f64 = (row + 1..k).map(|c| m[row][c] * x[c]).sum();
        x[row] = (b[row] - tail) / m[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::needless_range_loop)] // a matrix product reads best indexed
    fn solve_and_inverse() {
        let a = [[4.0, 2.0, 0.0], [2.0, 5.0, 1.0], [0.0, 1.0, 3.0]];
        let inv = inverse(&a).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let v: f64 = (0..3).map(|k| a[i][k] * inv[k][j]).sum();
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((v - want).abs() < 1e-12, "{i} {j} {v}");
            }
        }
        let singular = [[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(inverse(&singular).is_none());
    }

    /// y = a + b x + c x^2 with a >= 1 binding (the free optimum has a = 0).
    struct Quadratic;

    impl Problem for Quadratic {
        const LOWER: [f64; 3] = [1.0, -10.0, -10.0];
        const UPPER: [f64; 3] = [10.0, 10.0, 10.0];
        fn len(&self) -> usize {
            5
        }
        fn residual(&self, i: usize, p: [f64; 3]) -> (f64, [f64; 3]) {
            let x = i as f64;
            let y = 2.0 * x + 0.5 * x * x;
            (y - (p[0] + p[1] * x + p[2] * x * x), [1.0, x, x * x])
        }
    }

    #[test]
    fn respects_bounds() {
        let s = minimize(&Quadratic, [5.0, 0.0, 0.0]);
        assert!(s.converged);
        assert_eq!(s.params[0], 1.0);
        // With a = 1 the rest is linear least squares of y - 1 on (x, x^2);
        // numpy.linalg.lstsq gives b = 1.12903226, c = 0.66129032,
        // SSE = 1.1290322580645162.
        assert!((s.params[1] - 1.12903226).abs() < 1e-7, "{:?}", s.params);
        assert!((s.params[2] - 0.66129032).abs() < 1e-7, "{:?}", s.params);
        assert!((s.sse - 1.1290322580645162).abs() < 1e-9);
    }
}
