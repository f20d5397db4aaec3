//! `calibrate ikos-histogram` and `calibrate ikos-vector`: d coordinate instances of the IKOS
//! DP sum (`blanket::protocol::ikos_vector`, `docs/multi-message.md`, "Vector sums and
//! histograms"). Like `calibrate ikos-sum` there is no gamma to search: the command prints
//! the protocol's own report.

use super::ikos::{check_eps, element_bytes, SigmaArgs};
use crate::output::{echo, kv_table, num, print_json, up};
use crate::usage_bail;
use anyhow::Result;
use blanket::params::ParamError;
use blanket::protocol::ikos::MAX_USERS;
use blanket::protocol::{
    IkosError, IkosSumError, IkosVector, IkosVectorError, IkosVectorReport, VectorInput,
};
use clap::Args;
use serde::Serialize;

/// Arguments of `calibrate ikos-histogram`.
#[derive(Args)]
pub struct CalibrateIkosHistogramArgs {
    /// Number of clients (2 to 10^12).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Number of categories (2 to 2^20); each client holds one.
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub domain: u64,
    /// Target epsilon of the whole histogram (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    #[command(flatten)]
    pub sigma: SigmaArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `calibrate ikos-vector`.
#[derive(Args)]
pub struct CalibrateIkosVectorArgs {
    /// Number of clients (2 to 10^12).
    #[arg(long, value_parser = crate::numeric::parse_users, allow_hyphen_values = true)]
    pub n: f64,
    /// Dimension d (1 to 2^20); each client holds a vector in [0, 1]^d.
    #[arg(long, value_parser = crate::numeric::parse_u64, allow_hyphen_values = true)]
    pub d: u64,
    /// Target epsilon of the whole vector (> 0, natural log).
    #[arg(long, allow_hyphen_values = true)]
    pub eps: f64,
    #[command(flatten)]
    pub sigma: SigmaArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// What both commands print (JSON keys are a contract).
#[derive(Serialize)]
pub struct IkosVectorCalibration {
    /// Protocol name: `ikos-histogram` or `ikos-vector`.
    pub protocol: &'static str,
    /// Clients n.
    pub n: u64,
    /// Dimension (categories for a histogram).
    pub d: usize,
    /// Target epsilon of the whole vector.
    pub eps: f64,
    /// Epsilon per coordinate for sensitivity p (eps/2 for a histogram, eps/d for a vector).
    pub eps_per_coordinate: f64,
    /// Security parameter of the whole view.
    pub sigma: u32,
    /// sigma + ceil(log2 d), each coordinate instance's.
    pub sigma_per_coordinate: u32,
    /// (1 + e^eps) d 2^-sigma_per_coordinate.
    pub delta: f64,
    /// Precision p (1 for a histogram).
    pub p: u32,
    /// Modulus q of every coordinate.
    pub q: u128,
    /// Shares per client and coordinate m.
    pub m: u32,
    /// Messages per client d m.
    pub messages_per_user: u64,
    /// Bytes per client (d m shares of ceil(log2 q / 8) bytes).
    pub bytes_per_user: u64,
    /// Predicted MSE of the estimated vector (sum over coordinates).
    pub predicted_mse: f64,
    /// What `predicted_mse` measures.
    pub predicted_mse_meaning: &'static str,
    /// What the guarantee assumes.
    pub assumes: &'static str,
}

impl IkosVectorCalibration {
    fn of(r: &IkosVectorReport) -> Self {
        let c = &r.coordinate;
        let histogram = r.input == VectorInput::Histogram;
        Self {
            protocol: if histogram {
                "ikos-histogram"
            } else {
                "ikos-vector"
            },
            n: c.users,
            d: r.dim,
            eps: r.epsilon,
            eps_per_coordinate: r.epsilon_per_coordinate,
            sigma: r.sigma,
            sigma_per_coordinate: r.sigma_per_coordinate,
            delta: r.delta,
            p: c.precision,
            q: c.modulus,
            m: c.shares,
            messages_per_user: r.messages_per_user,
            bytes_per_user: r.messages_per_user * element_bytes(c.modulus),
            predicted_mse: r.predicted_mse,
            predicted_mse_meaning: if histogram {
                "expected squared error of the estimated counts, summed over the d categories (discrete Laplace variance each; counts are exact)"
            } else {
                "upper bound on the expected squared error of the estimated coordinate sums, summed over the d coordinates, for any data (rounding <= n/4 plus the discrete Laplace variance, over p^2, per coordinate)"
            },
            assumes: "all n clients honest and present; one uniform shuffle per coordinate of that coordinate's n m shares; pure eps-DP of the noisy vector by basic composition over coordinates",
        }
    }

    fn print(&self, json: bool) -> Result<()> {
        if json {
            return print_json(self);
        }
        let rows = vec![
            ("protocol", self.protocol.to_string()),
            ("n", self.n.to_string()),
            ("dimension d", self.d.to_string()),
            ("target eps", echo(self.eps)),
            ("eps per coordinate", echo(self.eps_per_coordinate)),
            ("precision p", self.p.to_string()),
            (
                "modulus q",
                format!("{} (2^{})", self.q, self.q.trailing_zeros()),
            ),
            ("shares per client and coordinate m", self.m.to_string()),
            (
                "messages per client d m",
                self.messages_per_user.to_string(),
            ),
            (
                "sigma (per coordinate)",
                format!("{} ({})", self.sigma, self.sigma_per_coordinate),
            ),
            (
                "certified (eps, delta)",
                format!("({}, {})", up(self.eps), up(self.delta)),
            ),
            ("predicted MSE (vector)", num(self.predicted_mse)),
            ("bytes per client", self.bytes_per_user.to_string()),
        ];
        println!("{}", kv_table("Calibration (IKOS vector)", &rows));
        println!("predicted MSE: {}", self.predicted_mse_meaning);
        println!("assumes: {}", self.assumes);
        Ok(())
    }
}

fn build(
    input: VectorInput,
    n: u64,
    d: u64,
    dim_flag: &str,
    eps: f64,
    sigma: u32,
) -> Result<IkosVector> {
    if !(2..=MAX_USERS).contains(&n) {
        usage_bail!("--n must be an integer from 2 to {MAX_USERS}, got {n}");
    }
    let dim = usize::try_from(d).unwrap_or(usize::MAX);
    IkosVector::new(input, n, dim, eps, sigma).map_err(|e| {
        let flag = match &e {
            IkosVectorError::Param(ParamError::OutOfRange { field: "dim", .. }) => {
                dim_flag.to_string()
            }
            IkosVectorError::Param(ParamError::OutOfRange { field: "sigma", .. })
            | IkosVectorError::Sum(IkosSumError::Ikos(IkosError::NoShareCount { .. })) => {
                "--sigma".into()
            }
            _ => format!("--eps {}", echo(eps)),
        };
        anyhow::Error::new(crate::exit::Usage(format!("{flag}: {e}")))
    })
}

/// Runs `calibrate ikos-histogram`.
pub fn calibrate_histogram(a: &CalibrateIkosHistogramArgs) -> Result<()> {
    let eps = check_eps(a.eps)?;
    let sigma = a.sigma.sigma(eps)?;
    let v = build(
        VectorInput::Histogram,
        a.n as u64,
        a.domain,
        "--domain",
        eps,
        sigma,
    )?;
    IkosVectorCalibration::of(&v.report()).print(a.json)
}

/// Runs `calibrate ikos-vector`.
pub fn calibrate_vector(a: &CalibrateIkosVectorArgs) -> Result<()> {
    let eps = check_eps(a.eps)?;
    let sigma = a.sigma.sigma(eps)?;
    let v = build(VectorInput::UnitBox, a.n as u64, a.d, "--d", eps, sigma)?;
    IkosVectorCalibration::of(&v.report()).print(a.json)
}
