//! `blanket.protocol`: the client and analyzer of each protocol on numpy arrays. Work is cut
//! into chunks of [`CHUNK`] users, randomized and aggregated in parallel on rayon's pool with
//! the GIL released; each chunk draws from its own generator: a `SecureRng` seeded from the
//! OS, or, for simulations only, the ChaCha12 stream (seed, chunk) of a `SimulationRng`, so a
//! seeded run gives the same messages whatever the number of threads.

use crate::errors::{Error, Result};
use blanket::analyzer::{Aggregator, CoordinateSums, IntegerSum};
use blanket::params::{DomainSize, Gamma, Precision, UnitValue};
use blanket::protocol::{Histogram, ScalarSum, VectorSum};
use blanket::randomizer::grr::local_epsilon;
use blanket::rng::{SecureRng, SimulationRng};
use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use rayon::prelude::*;

/// Users per chunk (one generator and one analyzer state each): blanket's simulation chunk.
pub const CHUNK: usize = blanket::simulate::CHUNK;

/// Where a client's randomness comes from.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// The OS-seeded CSPRNG (real clients).
    Os,
    /// A simulation seed (reproducible simulations only).
    Simulation(u64),
}

/// One chunk's generator.
enum ChunkRng {
    Os(SecureRng),
    Simulation(SimulationRng),
}

impl Source {
    fn of(simulation_seed: Option<u64>) -> Self {
        simulation_seed.map_or(Source::Os, Source::Simulation)
    }

    fn chunk(self, chunk: usize) -> Result<ChunkRng> {
        Ok(match self {
            Source::Os => {
                ChunkRng::Os(SecureRng::from_os().map_err(|e| Error::NoGuarantee(e.to_string()))?)
            }
            Source::Simulation(seed) => {
                ChunkRng::Simulation(SimulationRng::stream(seed, chunk as u64))
            }
        })
    }
}

/// Runs `f` on rayon's global pool (`threads` None) or on a pool of `threads` threads.
fn in_pool<R: Send>(threads: Option<usize>, f: impl FnOnce() -> R + Send) -> Result<R> {
    match threads {
        None => Ok(f()),
        Some(t) if (1..=1024).contains(&t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map(|pool| pool.install(f))
            .map_err(|e| Error::NoGuarantee(format!("cannot start {t} threads: {e}"))),
        Some(t) => Err(Error::param(
            "threads",
            "None or an integer from 1 to 1024",
            t,
        )),
    }
}

/// An integer array element (uint32 or int64 from Python) as a value in 0..m.
trait Int: Copy + Sync + std::fmt::Display {
    fn get(self) -> Option<u32>;
}

impl Int for u32 {
    #[inline]
    fn get(self) -> Option<u32> {
        Some(self)
    }
}

impl Int for i64 {
    #[inline]
    fn get(self) -> Option<u32> {
        u32::try_from(self).ok()
    }
}

/// An integer array from Python: uint32 as is, every other integer type as int64.
#[derive(FromPyObject)]
pub enum IntArray<'py> {
    /// uint32.
    U32(PyReadonlyArray1<'py, u32>),
    /// int64.
    I64(PyReadonlyArray1<'py, i64>),
}

fn slice<'a, T: numpy::Element>(a: &'a PyReadonlyArray1<'_, T>, field: &str) -> Result<&'a [T]> {
    a.as_slice().map_err(|_| {
        Error::param(
            field,
            "a contiguous one-dimensional array",
            "a strided view",
        )
    })
}

fn out_of_domain(field: &str, max: u64, value: impl std::fmt::Display) -> Error {
    Error::param(field, format!("integers from 0 to {max}"), value)
}

/// Merges per-chunk analyzer states.
fn merged<A: Aggregator>(
    states: impl ParallelIterator<Item = Result<A>>,
    empty: impl Fn() -> A + Sync + Send,
) -> Result<A> {
    states.try_reduce(&empty, |mut a, b| {
        a.merge(b)?;
        Ok(a)
    })
}

/// The histogram protocol over `domain` categories with blanket probability `gamma`
/// (privacy-blanket GRR; Balle, Bell, Gascon, Nissim 2019, Section 3).
#[pyclass(module = "blanket._blanket", name = "Histogram", frozen)]
pub struct PyHistogram {
    inner: Histogram,
    m: DomainSize,
    gamma: Gamma,
}

#[pymethods]
impl PyHistogram {
    #[new]
    fn new(domain: u64, gamma: f64) -> PyResult<Self> {
        let m = DomainSize::new(domain).map_err(Error::from)?;
        let gamma = Gamma::new(gamma).map_err(Error::from)?;
        Ok(Self {
            inner: Histogram::new(m, gamma),
            m,
            gamma,
        })
    }

    /// Number of categories m.
    #[getter]
    fn domain(&self) -> u32 {
        self.m.get()
    }

    /// Blanket probability gamma.
    #[getter]
    fn gamma(&self) -> f64 {
        self.gamma.get()
    }

    /// Local privacy of one report, log(1 + m (1 - gamma) / gamma), rounded up.
    #[getter]
    fn eps0(&self) -> f64 {
        local_epsilon(self.m, self.gamma)
    }

    /// Randomizes each category (client side); uint32 messages.
    #[pyo3(signature = (values, simulation_seed, threads))]
    fn randomize<'py>(
        &self,
        py: Python<'py>,
        values: IntArray<'py>,
        simulation_seed: Option<u64>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let source = Source::of(simulation_seed);
        let out = match &values {
            IntArray::U32(a) => {
                let x = slice(a, "values")?;
                py.allow_threads(|| self.randomize_all(x, source, threads))
            }
            IntArray::I64(a) => {
                let x = slice(a, "values")?;
                py.allow_threads(|| self.randomize_all(x, source, threads))
            }
        }?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Unbiased count estimates from the shuffled messages (analyzer side).
    #[pyo3(signature = (messages, threads))]
    fn estimate<'py>(
        &self,
        py: Python<'py>,
        messages: IntArray<'py>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let counts = match &messages {
            IntArray::U32(a) => {
                let x = slice(a, "messages")?;
                py.allow_threads(|| self.estimate_all(x, threads))
            }
            IntArray::I64(a) => {
                let x = slice(a, "messages")?;
                py.allow_threads(|| self.estimate_all(x, threads))
            }
        }?;
        Ok(PyArray1::from_vec(py, counts))
    }

    /// Exact mean over the categories of the variance of an estimated count with n reports.
    fn mean_count_variance(&self, n: u64) -> f64 {
        self.inner.mean_count_variance(n)
    }
}

impl PyHistogram {
    fn randomize_all<T: Int>(
        &self,
        x: &[T],
        source: Source,
        threads: Option<usize>,
    ) -> Result<Vec<u32>> {
        let h = &self.inner;
        let max = u64::from(self.m.get() - 1);
        let mut out = vec![0u32; x.len()];
        in_pool(threads, || {
            out.par_chunks_mut(CHUNK)
                .zip(x.par_chunks(CHUNK))
                .enumerate()
                .try_for_each(|(c, (o, i))| -> Result<()> {
                    let bad = |v: T| out_of_domain("values", max, v);
                    match source.chunk(c)? {
                        ChunkRng::Os(mut rng) => {
                            for (o, &v) in o.iter_mut().zip(i) {
                                let x = v.get().ok_or_else(|| bad(v))?;
                                *o = h.randomize(x, &mut rng).map_err(|_| bad(v))?;
                            }
                        }
                        ChunkRng::Simulation(mut rng) => {
                            for (o, &v) in o.iter_mut().zip(i) {
                                let x = v.get().ok_or_else(|| bad(v))?;
                                *o = h.randomize_simulated(x, &mut rng).map_err(|_| bad(v))?;
                            }
                        }
                    }
                    Ok(())
                })
        })??;
        Ok(out)
    }

    fn estimate_all<T: Int>(&self, x: &[T], threads: Option<usize>) -> Result<Vec<f64>> {
        let h = &self.inner;
        let max = u64::from(self.m.get() - 1);
        let state = in_pool(threads, || {
            merged(
                x.par_chunks(CHUNK).map(|c| {
                    let mut s = h.aggregator();
                    for &y in c {
                        let m = y.get().ok_or_else(|| out_of_domain("messages", max, y))?;
                        s.absorb(m).map_err(|_| out_of_domain("messages", max, y))?;
                    }
                    Ok(s)
                }),
                || h.aggregator(),
            )
        })??;
        Ok(h.estimate(&state)?.counts)
    }
}

/// The scalar-sum protocol: values in [0, 1], randomized rounding to k levels and GRR over
/// the k + 1 levels with blanket probability gamma (Balle et al. 2019, Section 4).
#[pyclass(module = "blanket._blanket", name = "ScalarSum", frozen)]
pub struct PyScalarSum {
    inner: ScalarSum,
    gamma: Gamma,
}

#[pymethods]
impl PyScalarSum {
    #[new]
    fn new(k: u64, gamma: f64) -> PyResult<Self> {
        let k = Precision::new(k).map_err(Error::from)?;
        let gamma = Gamma::new(gamma).map_err(Error::from)?;
        Ok(Self {
            inner: ScalarSum::new(k, gamma),
            gamma,
        })
    }

    /// Precision k.
    #[getter]
    fn k(&self) -> u32 {
        self.inner.k().get()
    }

    /// Blanket probability gamma.
    #[getter]
    fn gamma(&self) -> f64 {
        self.gamma.get()
    }

    /// Local privacy of one report (GRR over k + 1 values), rounded up.
    #[getter]
    fn eps0(&self) -> f64 {
        local_epsilon(self.inner.k().levels(), self.gamma)
    }

    /// Randomizes each value in [0, 1] (client side); uint32 messages in 0..=k.
    #[pyo3(signature = (values, simulation_seed, threads))]
    fn randomize<'py>(
        &self,
        py: Python<'py>,
        values: PyReadonlyArray1<'py, f64>,
        simulation_seed: Option<u64>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let x = slice(&values, "values")?;
        let source = Source::of(simulation_seed);
        let p = &self.inner;
        let out = py.allow_threads(|| -> Result<Vec<u32>> {
            let mut out = vec![0u32; x.len()];
            in_pool(threads, || {
                out.par_chunks_mut(CHUNK)
                    .zip(x.par_chunks(CHUNK))
                    .enumerate()
                    .try_for_each(|(c, (o, i))| -> Result<()> {
                        let unit = |v: f64| {
                            UnitValue::new(v)
                                .map_err(|_| Error::param("values", "numbers in [0, 1]", v))
                        };
                        match source.chunk(c)? {
                            ChunkRng::Os(mut rng) => {
                                for (o, &v) in o.iter_mut().zip(i) {
                                    *o = p.randomize_value(unit(v)?, &mut rng);
                                }
                            }
                            ChunkRng::Simulation(mut rng) => {
                                for (o, &v) in o.iter_mut().zip(i) {
                                    *o = p.randomize_value_simulated(unit(v)?, &mut rng);
                                }
                            }
                        }
                        Ok(())
                    })
            })??;
            Ok(out)
        })?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// (estimated sum, estimated mean, reports) from the shuffled messages (analyzer side).
    #[pyo3(signature = (messages, threads))]
    fn estimate(
        &self,
        py: Python<'_>,
        messages: IntArray<'_>,
        threads: Option<usize>,
    ) -> PyResult<(f64, f64, u64)> {
        let p = &self.inner;
        let max = u64::from(p.k().get());
        fn run<T: Int>(
            p: &ScalarSum,
            x: &[T],
            max: u64,
            threads: Option<usize>,
        ) -> Result<IntegerSum> {
            in_pool(threads, || {
                merged(
                    x.par_chunks(CHUNK).map(|c| {
                        let mut s = p.aggregator();
                        for &y in c {
                            let m = y.get().ok_or_else(|| out_of_domain("messages", max, y))?;
                            s.absorb(m).map_err(|_| out_of_domain("messages", max, y))?;
                        }
                        Ok(s)
                    }),
                    || p.aggregator(),
                )
            })?
        }
        let state = match &messages {
            IntArray::U32(a) => {
                let x = slice(a, "messages")?;
                py.allow_threads(|| run(p, x, max, threads))
            }
            IntArray::I64(a) => {
                let x = slice(a, "messages")?;
                py.allow_threads(|| run(p, x, max, threads))
            }
        }?;
        let e = p.estimate(&state).map_err(Error::from)?;
        Ok((e.sum, e.mean, e.reports))
    }

    /// Worst case over data of n users of the expected squared error of the estimated sum.
    fn worst_case_sum_mse(&self, n: u64) -> f64 {
        self.inner.worst_case_sum_mse(n)
    }
}

/// The vector-sum protocol (Scott, Cormode, Maple 2021): vectors in [0, 1]^d, t sampled
/// coordinates per user, each rounded to k levels and randomized by GRR over k + 1 values.
#[pyclass(module = "blanket._blanket", name = "VectorSum", frozen)]
pub struct PyVectorSum {
    inner: VectorSum,
}

/// (coordinates, values) arrays of vector-sum messages.
type VectorMessages<'py> = (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<u32>>);

/// (mean, sum, reports per coordinate) arrays of a vector-sum estimate.
type VectorEstimate<'py> = (
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<f64>>,
    Bound<'py, PyArray1<u64>>,
);

#[pymethods]
impl PyVectorSum {
    #[new]
    fn new(d: u64, t: u64, k: u64, gamma: f64) -> PyResult<Self> {
        let k = Precision::new(k).map_err(Error::from)?;
        let gamma = Gamma::new(gamma).map_err(Error::from)?;
        Ok(Self {
            inner: VectorSum::new(d, t, k, gamma).map_err(Error::from)?,
        })
    }

    /// Dimension d.
    #[getter]
    fn d(&self) -> u32 {
        self.inner.d()
    }

    /// Coordinates reported per user t.
    #[getter]
    fn t(&self) -> u32 {
        self.inner.t()
    }

    /// Precision k.
    #[getter]
    fn k(&self) -> u32 {
        self.inner.k().get()
    }

    /// Blanket probability gamma.
    #[getter]
    fn gamma(&self) -> f64 {
        self.inner.gamma().get()
    }

    /// Randomizes each row of an (n, d) array in [0, 1] (client side): (coordinates, values),
    /// t uint32 messages per user, user i's at positions i t .. (i + 1) t.
    #[pyo3(signature = (values, simulation_seed, threads))]
    fn randomize<'py>(
        &self,
        py: Python<'py>,
        values: PyReadonlyArray2<'py, f64>,
        simulation_seed: Option<u64>,
        threads: Option<usize>,
    ) -> PyResult<VectorMessages<'py>> {
        let p = &self.inner;
        let (d, t) = (p.d() as usize, p.t() as usize);
        let shape = values.shape();
        if shape[1] != d {
            return Err(Error::param(
                "values",
                format!("an (n, d) array with d = {d} columns"),
                format!("an array of shape ({}, {})", shape[0], shape[1]),
            )
            .into());
        }
        let x = values
            .as_slice()
            .map_err(|_| Error::param("values", "a C-contiguous (n, d) array", "a strided view"))?;
        let source = Source::of(simulation_seed);
        let (coords, vals) = py.allow_threads(|| -> Result<(Vec<u32>, Vec<u32>)> {
            let n = x.len() / d.max(1);
            let mut coords = vec![0u32; n * t];
            let mut vals = vec![0u32; n * t];
            in_pool(threads, || {
                coords
                    .par_chunks_mut(CHUNK * t)
                    .zip(vals.par_chunks_mut(CHUNK * t))
                    .zip(x.par_chunks(CHUNK * d))
                    .enumerate()
                    .try_for_each(|(c, ((co, vo), rows))| -> Result<()> {
                        let mut row = Vec::with_capacity(d);
                        let mut scratch = Vec::new();
                        let mut rng = source.chunk(c)?;
                        let mut at = 0;
                        for (r, xs) in rows.chunks(d).enumerate() {
                            row.clear();
                            for (j, &v) in xs.iter().enumerate() {
                                row.push(UnitValue::new(v).map_err(|_| {
                                    Error::param(
                                        "values",
                                        "numbers in [0, 1]",
                                        format!("{v} at row {}, column {j}", c * CHUNK + r),
                                    )
                                })?);
                            }
                            let mut emit = |(j, v): (u32, u32)| {
                                co[at] = j;
                                vo[at] = v;
                                at += 1;
                            };
                            match &mut rng {
                                ChunkRng::Os(g) => {
                                    p.randomize_row(&row, g, &mut scratch, &mut emit)
                                }
                                ChunkRng::Simulation(g) => {
                                    p.randomize_row_simulated(&row, g, &mut scratch, &mut emit)
                                }
                            }
                        }
                        Ok(())
                    })
            })??;
            Ok((coords, vals))
        })?;
        Ok((PyArray1::from_vec(py, coords), PyArray1::from_vec(py, vals)))
    }

    /// (mean, sum, reports per coordinate) from the shuffled (coordinate, value) messages.
    #[pyo3(signature = (coordinates, values, threads))]
    fn estimate<'py>(
        &self,
        py: Python<'py>,
        coordinates: PyReadonlyArray1<'py, u32>,
        values: PyReadonlyArray1<'py, u32>,
        threads: Option<usize>,
    ) -> PyResult<VectorEstimate<'py>> {
        let p = &self.inner;
        let cs = slice(&coordinates, "coordinates")?;
        let vs = slice(&values, "values")?;
        if cs.len() != vs.len() {
            return Err(Error::param(
                "values",
                format!("as many values as coordinates ({})", cs.len()),
                vs.len(),
            )
            .into());
        }
        let (d, k) = (p.d(), p.k().get());
        let e = py.allow_threads(|| -> Result<_> {
            let state: CoordinateSums = in_pool(threads, || {
                merged(
                    cs.par_chunks(CHUNK)
                        .zip(vs.par_chunks(CHUNK))
                        .map(|(c, v)| {
                            let mut s = p.aggregator();
                            for (&j, &y) in c.iter().zip(v) {
                                if j >= d {
                                    return Err(out_of_domain("coordinates", u64::from(d - 1), j));
                                }
                                s.absorb((j, y))
                                    .map_err(|_| out_of_domain("values", u64::from(k), y))?;
                            }
                            Ok(s)
                        }),
                    || p.aggregator(),
                )
            })??;
            Ok(p.estimate(&state)?)
        })?;
        Ok((
            PyArray1::from_vec(py, e.mean),
            PyArray1::from_vec(py, e.sum),
            PyArray1::from_vec(py, e.reports),
        ))
    }

    /// Worst case over data of n users of the expected squared error of the estimated mean
    /// vector, summed over the d coordinates.
    fn worst_case_mean_mse(&self, n: u64) -> f64 {
        self.inner.worst_case_mean_mse(n)
    }
}
