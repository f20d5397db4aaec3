//! DP real summation from exact summation (spec `04-multi-message.md`, "DP real summation from
//! exact summation"; Balle, Bell, Gascon, Nissim, CCS 2020, Thm 5.2 reduction; distributed
//! noise as in Goryczka and Xiong 2017).
//!
//! Client i with x_i in [0, 1]: x_bar_i = unbiased randomized rounding of p x_i
//! (p = ceil(sqrt(n))); nu_i = Z+ - Z-, Z+/- ~ Polya(1/h, alpha) i.i.d. (h = n, or the
//! assumed number of honest, present clients in the robust variant), sampled exactly
//! ([`Polya`]); y_i = (x_bar_i + nu_i) mod q, split into m additive shares ([`Ikos`]).
//! Analyzer: z = sum of all shares mod q; S = z if z < 3q/4 else z - q; estimate S / p.
//!
//! alpha is a dyadic A / 2^40 rounded *up* from e^(-eps/p) (more noise), so the realized
//! epsilon p ln(1/alpha) is at most the target. The sum of h clients' noise is exactly the
//! discrete Laplace Pr[y] = (1 - alpha)/(1 + alpha) alpha^|y|, eps-DP for sensitivity p; with
//! more than h clients contributing noise the sum is that Laplace plus independent noise
//! (post-processing). If the IKOS view is 2^-sigma close to a simulation from the sum mod q
//! (m from [`m_required`]), the protocol is (eps, (1 + e^eps) 2^-sigma)-DP.
//!
//! q is the smallest power of two with q >= 2 n p, q >= 4 T and n p + T < 3q/4, where T bounds
//! the noise: Pr[|noise| > T] <= 2^-sigma, so the decoder is wrong with probability at most
//! 2^-sigma (an accuracy failure only: the output is post-processing of the noisy sum).

use rand_core::CryptoRng;
use thiserror::Error;

use crate::analyzer::ModularSum;
use crate::encode::randomized_round;
use crate::field::Modulus;
use crate::params::{ParamError, Precision, UnitValue};
use crate::protocol::ikos::{m_required, Ikos, IkosError, MAX_SIGMA, MAX_USERS};
use crate::protocol::ikos_alternating_bound::{m_required_alternating, AlternatingBoundError};
use crate::rng::{SecureRng, SimulationRng};
use crate::sample::Polya;

/// alpha = A / 2^ALPHA_BITS.
pub const ALPHA_BITS: u32 = 40;

/// sigma when neither sigma nor a target delta is given, raised by [`default_sigma`] when
/// eps needs more to meet [`DEFAULT_DELTA`].
pub const DEFAULT_SIGMA: u32 = 40;

/// The target delta when neither sigma nor delta is given: sigma is the larger of
/// [`DEFAULT_SIGMA`] and the smallest sigma with (1 + e^eps) 2^-sigma <= 10^-6
/// ([`default_sigma`]).
pub const DEFAULT_DELTA: f64 = 1e-6;

/// log2(1 + e^eps) for eps > 0, without overflow (eps / ln 2 + log2(1 + e^-eps)).
fn log2_one_plus_exp(eps: f64) -> f64 {
    (eps + (-eps).exp().ln_1p()) / core::f64::consts::LN_2
}

/// delta = (1 + e^eps) 2^-sigma of the IKOS sum (module docs: the split-and-mix statistical
/// distance 2^-sigma, times 1 + e^eps for the DP conversion; Balle, Bell, Gascon, Nissim,
/// CCS 2020, Lemma 5.1 form), evaluated in log space (finite for any finite eps below about
/// 700 + sigma ln 2; `+inf` beyond) and rounded up.
pub fn ikos_delta(epsilon: f64, sigma: u32) -> f64 {
    let lg = log2_one_plus_exp(epsilon);
    let l = lg - f64::from(sigma);
    // The log carries a few ulps of its magnitude; exp2 turns an absolute error e in l into a
    // relative error e ln 2 < e. 16 ulps of the magnitude cover both, with room.
    let slack = 1.0 + 16.0 * f64::EPSILON * (lg.abs() + f64::from(sigma) + 1.0);
    (l.exp2() * slack).next_up()
}

/// The smallest sigma >= 1 with [`ikos_delta`]`(epsilon, sigma) <= delta` (delta in (0, 1));
/// may exceed [`MAX_SIGMA`] (then it is the value that would be needed; `u64::MAX` if even
/// that overflows).
pub fn sigma_needed(epsilon: f64, delta: f64) -> u64 {
    let guess = (log2_one_plus_exp(epsilon) - delta.log2()).ceil().max(1.0);
    if guess.is_nan() || guess >= 1e18 {
        return u64::MAX;
    }
    let mut s = (guess as u64).saturating_sub(1).max(1);
    // The guess is off by at most one either way (rounding of the log): settle exactly.
    while s <= u64::from(MAX_SIGMA) + 1 && ikos_delta(epsilon, s as u32) > delta {
        s += 1;
    }
    s
}

/// sigma when none is given: max([`DEFAULT_SIGMA`], [`sigma_needed`]`(epsilon,
/// `[`DEFAULT_DELTA`]`))`, so that the printed delta is at most 10^-6 at every epsilon.
/// Errors: [`IkosSumError::NoSigmaForDelta`] when that exceeds [`MAX_SIGMA`].
pub fn default_sigma(epsilon: f64) -> Result<u32, IkosSumError> {
    let needed = sigma_needed(epsilon, DEFAULT_DELTA);
    if needed > u64::from(MAX_SIGMA) {
        return Err(IkosSumError::NoSigmaForDelta {
            epsilon,
            delta: DEFAULT_DELTA,
            needed,
        });
    }
    Ok(DEFAULT_SIGMA.max(needed as u32))
}

/// The sigma-needed clause of the vacuous-delta messages.
fn needed_text(needed: u64) -> String {
    if needed > u64::from(MAX_SIGMA) {
        format!("sigma >= {} would be needed for delta <= 1e-6, above the largest sigma supported ({MAX_SIGMA}): lower epsilon", if needed == u64::MAX { "2^64".to_string() } else { needed.to_string() })
    } else {
        format!("sigma >= {needed} is needed for delta <= 1e-6 (the default target)")
    }
}

/// A parameter or input of [`IkosSum`] outside its range.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum IkosSumError {
    /// A parameter or input value (the field is named).
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The split-and-mix layer (n range, sigma range, no share count).
    #[error(transparent)]
    Ikos(#[from] IkosError),
    /// The requested modulus cannot hold the noisy sum.
    #[error("modulus q = {q} is too small: it must be a power of two >= {required} (q >= 2 n p, q >= 4 T, n p + T < 3q/4)")]
    ModulusTooSmall {
        /// The requested q.
        q: u128,
        /// The smallest admissible q.
        required: u128,
    },
    /// epsilon / p below [`MIN_EPS_PER_UNIT`]: alpha = e^(-epsilon/p) would round to 1 on
    /// [`ALPHA_BITS`] bits.
    #[error("epsilon {epsilon:?} is too small for sensitivity p = {precision}: epsilon / p must be >= 2^-39 (1 + 2^-10) (about 1.821e-12; alpha = e^(-epsilon/p) rounded up to a 40-bit dyadic must stay below 1), i.e. epsilon >= {}", min_epsilon_display(*precision as f64))]
    EpsilonTooSmall {
        /// The epsilon asked for (of this instance).
        epsilon: f64,
        /// The sensitivity p.
        precision: u64,
    },
    /// delta = (1 + e^eps) 2^-sigma is not below 1 (or not finite): the guarantee would
    /// certify nothing, so the protocol is refused.
    #[error("sigma {sigma} at epsilon {epsilon:?} gives delta = (1 + e^eps) 2^-sigma = {delta:.4e}, not below 1: it certifies nothing; {}", needed_text(*needed))]
    VacuousDelta {
        /// The epsilon asked for.
        epsilon: f64,
        /// The sigma asked for.
        sigma: u32,
        /// (1 + e^eps) 2^-sigma (may be `inf`).
        delta: f64,
        /// The smallest sigma with delta <= [`DEFAULT_DELTA`].
        needed: u64,
    },
    /// No sigma up to [`MAX_SIGMA`] brings delta = (1 + e^eps) 2^-sigma down to the target.
    #[error("epsilon {epsilon:?} needs sigma >= {} for delta = (1 + e^eps) 2^-sigma <= {delta:e}, above the largest sigma supported ({max}): lower epsilon or raise the target delta", if *needed == u64::MAX { "2^64".to_string() } else { needed.to_string() }, max = MAX_SIGMA)]
    NoSigmaForDelta {
        /// The epsilon asked for.
        epsilon: f64,
        /// The target delta.
        delta: f64,
        /// The sigma that would be needed.
        needed: u64,
    },
    /// A sum from a different modulus.
    #[error("analyzer modulus {got} differs from the protocol's {expected}")]
    ModulusMismatch {
        /// The protocol's q.
        expected: u128,
        /// The analyzer's q.
        got: u128,
    },
}

/// Smallest epsilon / p accepted, 2^-39 (1 + 2^-10) (about 1.821e-12): for x at least this,
/// 2^40 e^(-x) <= 2^40 (1 - x + x^2/2) <= 2^40 - 2 - 2^-9 + 2^-38, and the f64 `exp` adds at most 2^-13 (one ulp below
/// 1, times 2^40), so A = floor(f64 e^(-x) 2^40) + 2 <= 2^40 - 1 and alpha = A / 2^40 < 1. Far
/// below it alpha would round to 1 (no noise); the noise variance there already exceeds 10^23.
pub const MIN_EPS_PER_UNIT: f64 = (1.0 + 1.0 / 1024.0) / (1u64 << 39) as f64;

/// `MIN_EPS_PER_UNIT * scale` rounded *up* to 4 significant digits, for messages (an epsilon at
/// least the printed value is accepted).
pub fn min_epsilon_display(scale: f64) -> String {
    let m = MIN_EPS_PER_UNIT * scale * (1.0 + 1e-12);
    let exp = m.log10().floor();
    let mant = (m / 10f64.powf(exp) * 1000.0).ceil() / 1000.0;
    format!("{mant:.3}e{}", exp as i32)
}

fn out_of_range(field: &'static str, allowed: &'static str, value: impl ToString) -> IkosSumError {
    IkosSumError::Param(ParamError::OutOfRange {
        field,
        allowed,
        value: value.to_string(),
    })
}

/// The guarantee and predicted error of an [`IkosSum`] instance.
#[derive(Debug, Clone, PartialEq)]
pub struct IkosSumReport {
    /// Clients n.
    pub users: u64,
    /// Clients assumed honest and present, h (noise scaled so that h of them suffice).
    pub honest: u64,
    /// Precision p = ceil(sqrt(n)).
    pub precision: u32,
    /// Modulus q.
    pub modulus: u128,
    /// Shares per client m.
    pub shares: u32,
    /// Security parameter sigma of the split-and-mix layer.
    pub sigma: u32,
    /// Target epsilon (the guarantee; sensitivity 1 on the real sum).
    pub epsilon: f64,
    /// p ln(1/alpha) for the alpha sampled (<= epsilon; f64 evaluation).
    pub epsilon_realized: f64,
    /// (1 + e^epsilon) 2^-sigma.
    pub delta: f64,
    /// alpha = A / 2^40, exactly.
    pub alpha: f64,
    /// Noise bound T: Pr[|total noise| > T] <= 2^-sigma when all n clients are present.
    pub noise_bound: u64,
    /// Variance of the total noise with all n clients present, in encoded units:
    /// 2 (n/h) alpha / (1 - alpha)^2.
    pub noise_variance: f64,
    /// Predicted mean squared error of the estimate, upper bound with all n clients present:
    /// (n/4 + noise_variance) / p^2 (rounding variance <= 1/4 per client).
    pub predicted_mse: f64,
    /// What the guarantee assumes.
    pub assumes: &'static str,
}

/// DP real summation over split-and-mix with distributed Polya noise (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IkosSum {
    users: u64,
    honest: u64,
    precision: Precision,
    epsilon: f64,
    sigma: u32,
    alpha_num: u64,
    noise: Polya,
    noise_bound: u64,
    ikos: Ikos,
    alternating: bool,
    honest_shares: bool,
}

impl IkosSum {
    /// n clients, target epsilon, security parameter sigma; noise for all n clients
    /// (h = n), smallest admissible power-of-two q.
    pub fn new(users: u64, epsilon: f64, sigma: u32) -> Result<Self, IkosSumError> {
        Self::with_options(users, epsilon, sigma, users, None)
    }

    /// [`IkosSum::new`] with the robust variant (noise scaled so that any `honest` clients
    /// supply the full discrete Laplace: r = 1/honest, 1 <= honest <= n) and an optional
    /// modulus q = 2^`modulus_bits` (rejected if too small).
    pub fn with_options(
        users: u64,
        epsilon: f64,
        sigma: u32,
        honest: u64,
        modulus_bits: Option<u32>,
    ) -> Result<Self, IkosSumError> {
        if !(1..=MAX_USERS).contains(&users) {
            return Err(IkosError::UsersOutOfRange {
                n: users,
                max: MAX_USERS,
            }
            .into());
        }
        if !(1..=users).contains(&honest) {
            return Err(out_of_range("honest", "an integer in 1..=n", honest));
        }
        // p = ceil(sqrt(n)), exactly.
        let mut p = (users as f64).sqrt().ceil() as u64;
        while p * p < users {
            p += 1;
        }
        while p > 1 && (p - 1) * (p - 1) >= users {
            p -= 1;
        }
        Self::with_precision(users, p, epsilon, sigma, honest, modulus_bits)
    }

    /// The general constructor: encoding precision p (a client's encoded value lies in
    /// 0..=p, sensitivity p), alpha >= e^(-epsilon/p). Used with p = ceil(sqrt(n)) by
    /// [`IkosSum::with_options`] and per coordinate by `ikos_vector` (p = 1 for counts).
    pub(crate) fn with_precision(
        users: u64,
        p: u64,
        epsilon: f64,
        sigma: u32,
        honest: u64,
        modulus_bits: Option<u32>,
    ) -> Result<Self, IkosSumError> {
        if !(1..=MAX_USERS).contains(&users) {
            return Err(IkosError::UsersOutOfRange {
                n: users,
                max: MAX_USERS,
            }
            .into());
        }
        if !(1..=users).contains(&honest) {
            return Err(out_of_range("honest", "an integer in 1..=n", honest));
        }
        if !(epsilon.is_finite() && epsilon > 0.0) {
            return Err(out_of_range("epsilon", "a finite number > 0", epsilon));
        }
        let delta = ikos_delta(epsilon, sigma);
        if delta.is_nan() || delta >= 1.0 {
            return Err(IkosSumError::VacuousDelta {
                epsilon,
                sigma,
                delta,
                needed: sigma_needed(epsilon, DEFAULT_DELTA),
            });
        }
        let precision = Precision::new(p)?;
        if epsilon / (p as f64) < MIN_EPS_PER_UNIT {
            return Err(IkosSumError::EpsilonTooSmall {
                epsilon,
                precision: p,
            });
        }
        // alpha = A / 2^40 >= e^(-eps/p): floor(f64 value * 2^40) + 2. The f64 exp is off by
        // far less than 2^-40, so A / 2^40 > e^(-eps/p) (alpha rounded up: more noise).
        let scale = (1u64 << ALPHA_BITS) as f64;
        let alpha_num = ((-epsilon / p as f64).exp() * scale).floor() as u64 + 2;
        if alpha_num >= 1 << ALPHA_BITS {
            return Err(out_of_range(
                "epsilon",
                "large enough that e^(-epsilon/p) < 1 - 2^-39",
                epsilon,
            ));
        }
        let noise = Polya::new(honest, alpha_num, 1 << ALPHA_BITS)?;
        // ln(1/alpha), rounded down a little (a larger T is safe).
        let ln_inv_alpha = (f64::from(ALPHA_BITS) * core::f64::consts::LN_2
            - (alpha_num as f64).ln())
            * (1.0 - 1e-9);
        let s = users as f64 / honest as f64;
        let bits = f64::from(sigma) + 1.0;
        let t = if honest == users {
            // Pr[|Y| > T] = 2 alpha^(T+1) / (1 + alpha) <= 2 alpha^(T+1).
            bits * core::f64::consts::LN_2 / ln_inv_alpha
        } else {
            // Chernoff at z = alpha^(-1/2): Pr[NB(s) > T] <= alpha^((T+1)/2) (1 + sqrt alpha)^s.
            2.0 * (bits + s) * core::f64::consts::LN_2 / ln_inv_alpha
        };
        if t.is_nan() || t >= 2f64.powi(60) {
            return Err(out_of_range(
                "epsilon",
                "large enough that the noise bound T < 2^60",
                epsilon,
            ));
        }
        let noise_bound = t.ceil() as u64 + 1;
        let np = u128::from(users) * u128::from(p);
        let tt = u128::from(noise_bound);
        let fits = |q: u128| q >= 2 * np && q >= 4 * tt && 4 * (np + tt) < 3 * q;
        let required = (1..=64u32)
            .map(|b| 1u128 << b)
            .find(|&q| fits(q))
            .ok_or_else(|| {
                out_of_range(
                    "epsilon",
                    "large enough that the noisy sum fits in 64 bits",
                    epsilon,
                )
            })?;
        let q = match modulus_bits {
            None => required,
            Some(b) => {
                let modulus = Modulus::power_of_two(b).map_err(IkosError::from)?;
                if !fits(modulus.q()) {
                    return Err(IkosSumError::ModulusTooSmall {
                        q: modulus.q(),
                        required,
                    });
                }
                modulus.q()
            }
        };
        let modulus = Modulus::new(q).map_err(IkosError::from)?;
        let shares = m_required(users, modulus, sigma)?;
        Ok(Self {
            users,
            honest,
            precision,
            epsilon,
            sigma,
            alpha_num,
            noise,
            noise_bound,
            ikos: Ikos::new(modulus, shares)?,
            alternating: false,
            honest_shares: false,
        })
    }

    /// The same protocol with its shares sent through the alternating shuffler A^2_pi (m
    /// instances sharing pi) instead of one uniform shuffle: m becomes
    /// [`crate::protocol::m_required_alternating`] for n, q and sigma (certified for
    /// `GridLayout::new(n)`, rectangular or ragged; `docs/multi-message.md`). The noise, q and the guarantee's
    /// form are unchanged.
    pub fn over_alternating(&self) -> Result<Self, AlternatingBoundError> {
        let modulus = self.ikos.modulus();
        let shares = m_required_alternating(self.users, modulus, self.sigma)?;
        Ok(Self {
            ikos: Ikos::new(modulus, shares)?,
            alternating: true,
            ..*self
        })
    }

    /// The same protocol certified for its h honest, present clients only (the rule of
    /// `blanket protocol run`, docs/protocol.md "What the guarantee covers"): the noise is
    /// already scaled so that h clients' Polya noise sums to the discrete Laplace, and m
    /// becomes max(m, m_required(h, q, sigma)) so that split-and-mix is sigma-secure for the
    /// h m shares of the honest, present clients (the adversary knows the other shares and
    /// can remove them from the view). Uniform shuffle only (the alternating count is not
    /// analysed for absent or malicious cells). Errors: no share count for h.
    pub fn for_honest_present(self) -> Result<Self, IkosSumError> {
        let modulus = self.ikos.modulus();
        let needed = m_required(self.honest, modulus, self.sigma)?;
        let shares = self.ikos.shares().max(needed);
        Ok(Self {
            ikos: Ikos::new(modulus, shares)?,
            honest_shares: true,
            ..self
        })
    }

    /// Whether the shares go through the alternating shuffler A^2_pi.
    pub fn is_alternating(&self) -> bool {
        self.alternating
    }

    /// The same protocol with `shares` shares per client instead of
    /// `m_required(n, q, sigma)` (same modulus, noise and precision). For a deployment whose
    /// shuffled batches can hold fewer clients than n (the service sizes q for its largest
    /// batch and m for its smallest): the caller checks sigma-security at each batch's client
    /// count with [`Ikos::distance_bound_log2`]. Errors: `shares` outside 2..=4096.
    pub fn with_shares(self, shares: u32) -> Result<Self, IkosSumError> {
        if !(2..=crate::protocol::ikos::MAX_SHARES).contains(&shares) {
            return Err(out_of_range("shares", "an integer from 2 to 4096", shares));
        }
        Ok(Self {
            ikos: Ikos::new(self.ikos.modulus(), shares)?,
            ..self
        })
    }

    /// The split-and-mix layer (modulus, shares).
    pub fn ikos(&self) -> Ikos {
        self.ikos
    }

    /// Precision p.
    pub fn precision(&self) -> u32 {
        self.precision.get()
    }

    /// alpha as an exact f64 (A / 2^40).
    pub fn alpha(&self) -> f64 {
        self.alpha_num as f64 / (1u64 << ALPHA_BITS) as f64
    }

    /// The per-client noise sampler Polya(1/h, alpha).
    pub fn noise(&self) -> Polya {
        self.noise
    }

    /// Variance of the total noise when `present` clients add theirs:
    /// 2 (present / h) alpha / (1 - alpha)^2.
    pub fn noise_variance(&self, present: u64) -> f64 {
        let a = self.alpha();
        2.0 * (present as f64 / self.honest as f64) * a / ((1.0 - a) * (1.0 - a))
    }

    /// Guarantee and predicted error.
    pub fn report(&self) -> IkosSumReport {
        let p = f64::from(self.precision());
        let a = self.alpha();
        let noise_variance = self.noise_variance(self.users);
        IkosSumReport {
            users: self.users,
            honest: self.honest,
            precision: self.precision(),
            modulus: self.ikos.modulus().q(),
            shares: self.ikos.shares(),
            sigma: self.sigma,
            epsilon: self.epsilon,
            epsilon_realized: -p * a.ln(),
            delta: ikos_delta(self.epsilon, self.sigma),
            alpha: a,
            noise_bound: self.noise_bound,
            noise_variance,
            predicted_mse: (self.users as f64 / 4.0 + noise_variance) / (p * p),
            assumes: if self.alternating {
                if self.honest == self.users {
                    "all n clients are honest and present (a dropped or colluding client's noise is lost); the alternating shuffler A^2_pi (m instances sharing a public placement, secret row and column permutations; layout GridLayout(n), a ragged last row allowed)"
                } else {
                    "at least h clients are honest and present (their noise alone is the discrete Laplace); the alternating shuffler A^2_pi (layout GridLayout(n), a ragged last row allowed); the IKOS bound is for the n clients present"
                }
            } else if self.honest_shares {
                "at least h of the n clients are honest and present (their Polya noise alone is the discrete Laplace; the share count m is sigma-secure for their h m shares; absent and malicious clients are not protected); one uniform shuffle of all shares"
            } else if self.honest == self.users {
                "all n clients are honest and present (a dropped or colluding client's noise is lost); one uniform shuffle of all n m shares"
            } else {
                "at least h clients are honest and present (their noise alone is the discrete Laplace); one uniform shuffle of all n m shares; the IKOS bound is for the n clients present"
            },
        }
    }

    /// The encoded message y = (x_bar + nu) mod q.
    pub(crate) fn encode(&self, x_bar: u64, nu: i64) -> u64 {
        let q = self.ikos.modulus().q() as i128;
        (i128::from(x_bar) + i128::from(nu)).rem_euclid(q) as u64
    }

    /// The signed noisy sum S from z = sum mod q.
    pub fn decode(&self, z: u64) -> i128 {
        let q = self.ikos.modulus().q();
        if 4 * u128::from(z) >= 3 * q {
            i128::from(z) - q as i128
        } else {
            i128::from(z)
        }
    }

    fn randomize_with<R: CryptoRng + ?Sized>(
        &self,
        x: f64,
        rng: &mut R,
    ) -> Result<Vec<u64>, IkosSumError> {
        let x = UnitValue::new(x)?;
        let x_bar = u64::from(randomized_round(x, self.precision, rng));
        self.randomize_encoded(x_bar, rng)
    }

    /// The m shares of an already encoded value x_bar in 0..=p plus this client's noise.
    pub(crate) fn randomize_encoded<R: CryptoRng + ?Sized>(
        &self,
        x_bar: u64,
        rng: &mut R,
    ) -> Result<Vec<u64>, IkosSumError> {
        debug_assert!(x_bar <= u64::from(self.precision()));
        let nu = self.noise.sample_difference(rng);
        let y = self.encode(x_bar, nu);
        Ok(self
            .ikos
            .modulus()
            .share(y, self.ikos.shares() as usize, rng)
            .map_err(IkosError::from)?)
    }

    /// Client side: the m shares of x in [0, 1] (error naming `value` otherwise).
    pub fn randomize(&self, x: f64, rng: &mut SecureRng) -> Result<Vec<u64>, IkosSumError> {
        self.randomize_with(x, rng)
    }

    /// [`IkosSum::randomize`] with a seeded RNG, for simulations only.
    pub fn randomize_simulated(
        &self,
        x: f64,
        rng: &mut SimulationRng,
    ) -> Result<Vec<u64>, IkosSumError> {
        self.randomize_with(x, rng)
    }

    /// An empty analyzer state.
    pub fn analyzer(&self) -> ModularSum {
        self.ikos.analyzer()
    }

    /// The estimate of sum x_i from the analyzer's state: decode(z) / p.
    pub fn estimate(&self, sum: &ModularSum) -> Result<f64, IkosSumError> {
        if sum.modulus() != self.ikos.modulus() {
            return Err(IkosSumError::ModulusMismatch {
                expected: self.ikos.modulus().q(),
                got: sum.modulus().q(),
            });
        }
        Ok(self.decode(sum.sum()) as f64 / f64::from(self.precision()))
    }
}

#[cfg(test)]
mod tests;
