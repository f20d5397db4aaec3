//! The 2-round alternating shuffler A^2_pi of Balle, Bell and Gascon, "Amplification by
//! Shuffling without Shuffling", ACM CCS 2023 (arXiv 2305.10867), spec `04-multi-message.md`.
//!
//! The n messages are laid out in an h x w matrix ([`GridLayout`]):
//!
//! 1. **Public placement pi** ([`PublicPlacement`]): a uniform permutation puts client i in
//!    cell pi(i). It is public (the server and the privacy analysis both know it). Applying
//!    it first is what defeats the paper's lower-bound example: without it (clients placed in
//!    index order, [`PublicPlacement::identity`]) a structured input keeps its structure and
//!    amplification is asymptotically weaker than uniform shuffling.
//! 2. **Row round**: each row is permuted by a secret uniform permutation (one shuffling party).
//! 3. **Column round**: each column is permuted by a secret uniform permutation (another party).
//!
//! **What the analyzer sees**: the final matrix read in column-major order, so it learns the
//! column of every message (which messages shared a column, [`GridLayout::column_ranges`]),
//! not its row. Each column is a uniform shuffle of its users, and each user's column is
//! uniform over the columns its row covers: the paper's proof bounds each column as a uniform
//! shuffle of about sqrt(n) users, amplified by the probability about 1/sqrt(n) that the
//! differing user lands in it, composed over the columns ("weak amplification", e^(5 eps0/2)
//! in place of e^(eps0/2)). k alternating rounds approach a uniform shuffle (Hastad's
//! square-lattice shuffle, cited by the paper); this module implements the 2-round version.
//!
//! **Multi-message** protocols (IKOS split-and-mix): the m instances, one per share index,
//! share the same pi and draw independent secret permutations
//! ([`AlternatingShuffler::shuffle_instances`]).
//!
//! The accounting for A^2_pi is [`crate::accounting::AlternatingAccountant`]: per user class,
//! the smallest of the joint clone reduction (`alternating-clones`, docs/alternating.md) and
//! the uniform-shuffle bounds at the row size and at the smallest column height (what is
//! proved, and what of the paper's proof shape is not used, is documented there).

use super::{Shuffler, ShufflerTrust};
use crate::sample::uniform_usize;
use rand_core::CryptoRng;
use std::ops::Range;
use thiserror::Error;

/// A placement or a batch does not fit the layout.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AlternatingError {
    /// The batch does not hold one message per client of the layout.
    #[error("the alternating shuffler's layout holds {expected} messages, got {got}")]
    LengthMismatch {
        /// Clients in the layout.
        expected: usize,
        /// Messages in the batch.
        got: usize,
    },
    /// The cells given for a placement are not a permutation of 0..n.
    #[error("a public placement must map the {n} clients to distinct cells in 0..{n}")]
    NotAPermutation {
        /// Clients in the layout.
        n: usize,
    },
}

/// The h x w matrix of the alternating shuffler for n messages.
///
/// **Rule for any n** (the analysis assumes n = h w with h = w = sqrt(n)):
/// w = ceil(sqrt(n)) columns, h = ceil(n / w) rows, cells numbered row-major 0..n. Every row
/// is full except possibly the last, which holds r = n - (h - 1) w cells (1 <= r <= w) in
/// columns 0..r; so columns 0..r have h cells and columns r..w have h - 1. A perfect square
/// gives the square matrix; no dummy messages are added (the protocol's messages are sent
/// as is, whatever their type).
///
/// **What the ragged last row does to privacy**: a user placed in the short row (probability
/// r / n <= w / n, about 1/sqrt(n), under a uniform pi) is row-shuffled with only r - 1
/// others and lands in one of only r columns, and the columns r..w shuffle h - 1 users
/// instead of h. Both weaken that user's (and those columns') amplification compared with
/// the square case; an analysis of a non-square n must use the smaller row and column sizes
/// (the worst case over cells), not sqrt(n). With n a perfect square, or n = h w, nothing
/// is ragged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GridLayout {
    n: usize,
    width: usize,
    height: usize,
}

impl GridLayout {
    /// The layout for `n` messages (n = 0 gives the empty 0 x 0 layout).
    pub fn new(n: usize) -> Self {
        let mut width = n.isqrt();
        if width * width < n {
            width += 1;
        }
        let height = if width == 0 { 0 } else { n.div_ceil(width) };
        Self { n, width, height }
    }

    /// Number of messages (clients) n.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the layout holds no message.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Number of columns w = ceil(sqrt(n)).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows h = ceil(n / w).
    pub fn height(&self) -> usize {
        self.height
    }

    /// Cells in row `row` (w, or r for a ragged last row).
    pub fn row_len(&self, row: usize) -> usize {
        assert!(row < self.height, "row {row} out of range");
        (self.n - row * self.width).min(self.width)
    }

    /// Cells in column `col` (h, or h - 1 right of a ragged last row).
    pub fn column_height(&self, col: usize) -> usize {
        assert!(col < self.width, "column {col} out of range");
        (self.n - col).div_ceil(self.width)
    }

    /// (row, column) of row-major cell `cell`.
    pub fn cell_position(&self, cell: usize) -> (usize, usize) {
        assert!(cell < self.n, "cell {cell} out of range");
        (cell / self.width, cell % self.width)
    }

    /// The output positions of each column: the shuffler's output is the final matrix in
    /// column-major order, so column c's messages are `output[column_ranges()[c]]`, top row
    /// first. This is what the analyzer learns beyond the multiset: which messages shared a
    /// column.
    pub fn column_ranges(&self) -> Vec<Range<usize>> {
        let mut start = 0;
        (0..self.width)
            .map(|c| {
                let end = start + self.column_height(c);
                let r = start..end;
                start = end;
                r
            })
            .collect()
    }

    /// (row, column) of the final cell read at output position `k` (column-major order).
    pub fn output_position(&self, k: usize) -> (usize, usize) {
        assert!(k < self.n, "output position {k} out of range");
        let mut start = 0;
        for c in 0..self.width {
            let h = self.column_height(c);
            if k < start + h {
                return (k - start, c);
            }
            start += h;
        }
        unreachable!("k < n lies in some column")
    }
}

/// The public randomness pi: client i sits in row-major cell `cells()[i]` before the rounds.
///
/// It is public: the server, the shuffling parties and the privacy analysis all see it. Draw
/// it with [`PublicPlacement::sample`] from a generator the parties agree on (its seed may be
/// published, since pi protects nothing by being secret); accept a placement received from
/// elsewhere with [`PublicPlacement::from_cells`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicPlacement {
    layout: GridLayout,
    cells: Vec<usize>,
}

impl PublicPlacement {
    /// A uniformly random placement of the layout's clients (Fisher-Yates with exact uniform
    /// integers).
    pub fn sample<R: CryptoRng + ?Sized>(layout: GridLayout, rng: &mut R) -> Self {
        let mut cells: Vec<usize> = (0..layout.len()).collect();
        fisher_yates(&mut cells, rng);
        Self { layout, cells }
    }

    /// Client i in cell i: A^2 *without* pi. Kept as the baseline of the paper's lower-bound
    /// example (a structured input keeps its structure); a deployment uses
    /// [`PublicPlacement::sample`].
    pub fn identity(layout: GridLayout) -> Self {
        Self {
            layout,
            cells: (0..layout.len()).collect(),
        }
    }

    /// A placement given explicitly (client i in cell `cells[i]`); it must be a permutation
    /// of 0..n.
    pub fn from_cells(layout: GridLayout, cells: Vec<usize>) -> Result<Self, AlternatingError> {
        let n = layout.len();
        if cells.len() != n {
            return Err(AlternatingError::LengthMismatch {
                expected: n,
                got: cells.len(),
            });
        }
        let mut seen = vec![false; n];
        for &c in &cells {
            if c >= n || std::mem::replace(&mut seen[c], true) {
                return Err(AlternatingError::NotAPermutation { n });
            }
        }
        Ok(Self { layout, cells })
    }

    /// The layout the placement fills.
    pub fn layout(&self) -> GridLayout {
        self.layout
    }

    /// The cell of every client.
    pub fn cells(&self) -> &[usize] {
        &self.cells
    }
}

/// The alternating shuffler A^2_pi: public placement, a secret row round, then a secret
/// column round; output in column-major order of the final matrix.
///
/// `messages[i]` must be client i's message (the placement is per client). Implements
/// [`Shuffler`] for batches of exactly n messages; [`AlternatingShuffler::try_shuffle`]
/// returns an error instead of panicking on a wrong length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlternatingShuffler {
    placement: PublicPlacement,
}

impl AlternatingShuffler {
    /// The shuffler for a public placement.
    pub fn new(placement: PublicPlacement) -> Self {
        Self { placement }
    }

    /// The public placement pi.
    pub fn placement(&self) -> &PublicPlacement {
        &self.placement
    }

    /// The layout.
    pub fn layout(&self) -> GridLayout {
        self.placement.layout
    }

    /// Draws the two secret rounds and returns, for each output position, the client whose
    /// message is read there.
    fn draw_order<R: CryptoRng + ?Sized>(&self, rng: &mut R) -> Vec<usize> {
        let layout = self.placement.layout;
        let (n, w) = (layout.n, layout.width);
        // grid[cell] = client in that cell.
        let mut grid = vec![0usize; n];
        for (client, &cell) in self.placement.cells.iter().enumerate() {
            grid[cell] = client;
        }
        // Row round: a uniform permutation of each row's cells.
        for row in grid.chunks_mut(w.max(1)) {
            fisher_yates(row, rng);
        }
        // Column round: a uniform permutation of each column's cells (stride w), read out
        // in column-major order.
        let mut order = Vec::with_capacity(n);
        let mut column = Vec::with_capacity(layout.height);
        for c in 0..w {
            column.clear();
            column.extend((c..n).step_by(w).map(|cell| grid[cell]));
            fisher_yates(&mut column, rng);
            order.extend_from_slice(&column);
        }
        order
    }

    /// Shuffles one batch (`messages[i]` from client i) in place, or reports a length that
    /// does not match the layout.
    pub fn try_shuffle<T, R: CryptoRng + ?Sized>(
        &self,
        messages: &mut [T],
        rng: &mut R,
    ) -> Result<(), AlternatingError> {
        let n = self.placement.layout.n;
        if messages.len() != n {
            return Err(AlternatingError::LengthMismatch {
                expected: n,
                got: messages.len(),
            });
        }
        let order = self.draw_order(rng);
        permute_in_place(messages, &order);
        Ok(())
    }

    /// Shuffles the m instances of a multi-message protocol (instance j holds every client's
    /// j-th message, client i at index i): all share pi, each draws its own secret row and
    /// column permutations. Every instance is checked before any is shuffled.
    pub fn shuffle_instances<T, R: CryptoRng + ?Sized>(
        &self,
        instances: &mut [Vec<T>],
        rng: &mut R,
    ) -> Result<(), AlternatingError> {
        let n = self.placement.layout.n;
        if let Some(bad) = instances.iter().find(|v| v.len() != n) {
            return Err(AlternatingError::LengthMismatch {
                expected: n,
                got: bad.len(),
            });
        }
        for instance in instances.iter_mut() {
            let order = self.draw_order(rng);
            permute_in_place(instance, &order);
        }
        Ok(())
    }
}

impl Shuffler for AlternatingShuffler {
    fn trust(&self) -> ShufflerTrust {
        ShufflerTrust::Alternating { rounds: 2 }
    }

    /// # Panics
    /// If `messages.len()` differs from the layout's n (use
    /// [`AlternatingShuffler::try_shuffle`] to get an error instead).
    fn shuffle<T, R: CryptoRng + ?Sized>(&self, messages: &mut [T], rng: &mut R) {
        if let Err(e) = self.try_shuffle(messages, rng) {
            panic!("{e}");
        }
    }
}

/// Durstenfeld's Fisher-Yates with exact uniform indices.
fn fisher_yates<T, R: CryptoRng + ?Sized>(v: &mut [T], rng: &mut R) {
    for i in (1..v.len()).rev() {
        let j = uniform_usize(rng, i + 1);
        v.swap(i, j);
    }
}

/// Rearranges `v` so that the new `v[k]` is the old `v[src[k]]` (`src` a permutation), by
/// following cycles with swaps (no `Clone` needed).
fn permute_in_place<T>(v: &mut [T], src: &[usize]) {
    debug_assert_eq!(v.len(), src.len());
    let mut done = vec![false; v.len()];
    for start in 0..v.len() {
        if done[start] {
            continue;
        }
        let mut j = start;
        loop {
            done[j] = true;
            let s = src[j];
            if s == start {
                break;
            }
            v.swap(j, s);
            j = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{simulation_rng, simulation_stream};
    use crate::sample::stats::{chi_square, chi_square_critical};
    use crate::sample::Bernoulli;
    use crate::shuffle::UniformShuffler;

    #[test]
    fn layout_rule_square_rectangular_and_ragged() {
        let l = GridLayout::new(16);
        assert_eq!((l.height(), l.width()), (4, 4));
        assert!((0..4).all(|r| l.row_len(r) == 4) && (0..4).all(|c| l.column_height(c) == 4));
        let l = GridLayout::new(12); // 3 x 4, nothing ragged
        assert_eq!((l.height(), l.width()), (3, 4));
        assert!((0..4).all(|c| l.column_height(c) == 3));
        let l = GridLayout::new(10); // w = 4, h = 3, last row r = 2
        assert_eq!((l.height(), l.width()), (3, 4));
        assert_eq!((0..3).map(|r| l.row_len(r)).collect::<Vec<_>>(), [4, 4, 2]);
        assert_eq!(
            (0..4).map(|c| l.column_height(c)).collect::<Vec<_>>(),
            [3, 3, 2, 2]
        );
        assert_eq!(l.column_ranges(), vec![0..3, 3..6, 6..8, 8..10]);
        assert_eq!(l.output_position(7), (1, 2));
        assert_eq!(l.cell_position(9), (2, 1));
        for n in 0..300 {
            let l = GridLayout::new(n);
            assert_eq!(l.len(), n);
            if n == 0 {
                assert!(l.is_empty() && l.width() == 0 && l.column_ranges().is_empty());
                continue;
            }
            let (h, w) = (l.height(), l.width());
            assert!(w * w >= n && (w - 1) * (w - 1) < n, "n = {n}");
            assert!(h <= w && (h - 1) * w < n && h * w >= n, "n = {n}");
            assert_eq!((0..h).map(|r| l.row_len(r)).sum::<usize>(), n);
            assert_eq!((0..w).map(|c| l.column_height(c)).sum::<usize>(), n);
            assert_eq!(l.column_ranges().last().unwrap().end, n);
        }
    }

    #[test]
    fn placement_from_cells_is_checked() {
        let l = GridLayout::new(4);
        assert!(PublicPlacement::from_cells(l, vec![3, 1, 0, 2]).is_ok());
        assert_eq!(
            PublicPlacement::from_cells(l, vec![3, 1, 0, 1]),
            Err(AlternatingError::NotAPermutation { n: 4 })
        );
        assert_eq!(
            PublicPlacement::from_cells(l, vec![4, 1, 0, 2]),
            Err(AlternatingError::NotAPermutation { n: 4 })
        );
        assert_eq!(
            PublicPlacement::from_cells(l, vec![0, 1, 2]),
            Err(AlternatingError::LengthMismatch {
                expected: 4,
                got: 3
            })
        );
    }

    #[test]
    fn output_is_a_permutation_square_and_not() {
        let mut rng = simulation_rng(31);
        for n in [0usize, 1, 2, 3, 5, 10, 16, 17, 99, 100, 1000] {
            let layout = GridLayout::new(n);
            let s = AlternatingShuffler::new(PublicPlacement::sample(layout, &mut rng));
            assert_eq!(s.trust(), ShufflerTrust::Alternating { rounds: 2 });
            let mut v: Vec<u32> = (0..n as u32).collect();
            s.shuffle(&mut v, &mut rng);
            let mut sorted = v.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n as u32).collect::<Vec<_>>(), "n = {n}");
            // Non-Clone payloads move too.
            let mut boxed: Vec<Box<usize>> = (0..n).map(Box::new).collect();
            s.try_shuffle(&mut boxed, &mut rng).unwrap();
            let mut back: Vec<usize> = boxed.into_iter().map(|b| *b).collect();
            back.sort_unstable();
            assert_eq!(back, (0..n).collect::<Vec<_>>());
        }
        let s = AlternatingShuffler::new(PublicPlacement::identity(GridLayout::new(9)));
        assert_eq!(
            s.try_shuffle(&mut [0u8; 8], &mut rng),
            Err(AlternatingError::LengthMismatch {
                expected: 9,
                got: 8
            })
        );
    }

    /// Rows are kept by the row round and columns by the column round: every output column
    /// holds exactly one client of each row it crosses (rows taken from pi).
    fn assert_rows_respected(s: &AlternatingShuffler, out: &[usize]) {
        let l = s.layout();
        for (c, range) in l.column_ranges().into_iter().enumerate() {
            let mut rows: Vec<usize> = out[range]
                .iter()
                .map(|&client| l.cell_position(s.placement().cells()[client]).0)
                .collect();
            rows.sort_unstable();
            assert_eq!(rows, (0..l.column_height(c)).collect::<Vec<_>>());
        }
    }

    /// Statistical tolerance of the chi-square tests below: `chi_square_critical`, the upper
    /// critical value at significance about 1e-6 (fixed seeds, so the outcome is
    /// deterministic; the bound says the seed is not a lucky one).
    ///
    /// Given pi, client i's final cell must be uniform over {(r, c): c in the columns its
    /// pi-row covers, r < height(c)}: the column uniform over the row's cells (row round),
    /// the row uniform within the column (column round). Checked for a client of a full row
    /// and one of the ragged row (n = 10: rows of 4, 4, 2 cells), and for n = 16.
    #[test]
    fn final_cell_is_uniform_over_its_columns_rows() {
        for n in [10usize, 16] {
            let layout = GridLayout::new(n);
            let mut rng = simulation_rng(100 + n as u64);
            let s = AlternatingShuffler::new(PublicPlacement::sample(layout, &mut rng));
            let (h, w) = (layout.height(), layout.width());
            let full_row_client = (0..n)
                .find(|&i| layout.cell_position(s.placement().cells()[i]).0 == 0)
                .unwrap();
            let last_row_client = (0..n)
                .find(|&i| layout.cell_position(s.placement().cells()[i]).0 == h - 1)
                .unwrap();
            let trials = 60_000u64;
            let mut counts = vec![vec![0u64; h * w]; 2];
            for _ in 0..trials {
                let order = s.draw_order(&mut rng);
                assert_rows_respected(&s, &order);
                for (t, &client) in [full_row_client, last_row_client].iter().enumerate() {
                    let k = order.iter().position(|&x| x == client).unwrap();
                    let (r, c) = layout.output_position(k);
                    counts[t][r * w + c] += 1;
                }
            }
            for (t, &client) in [full_row_client, last_row_client].iter().enumerate() {
                let row = layout.cell_position(s.placement().cells()[client]).0;
                let cols = layout.row_len(row);
                let (mut observed, mut expected) = (Vec::new(), Vec::new());
                for c in 0..w {
                    for r in 0..h {
                        let reachable = c < cols && r < layout.column_height(c);
                        let o = counts[t][r * w + c];
                        if !reachable {
                            assert_eq!(o, 0, "n = {n}: client {client} reached ({r}, {c})");
                            continue;
                        }
                        observed.push(o);
                        expected
                            .push(trials as f64 / (cols as f64 * layout.column_height(c) as f64));
                    }
                }
                let x2 = chi_square(&observed, &expected);
                assert!(
                    x2 < chi_square_critical(observed.len() - 1),
                    "n = {n}, client {client}: chi-square {x2}"
                );
            }
        }
    }

    /// m instances share pi (every instance keeps pi's rows within its columns) and draw
    /// independent secrets: the final columns of one client in instances 0 and 1 are
    /// independent and jointly uniform (chi-square over the w x w table, tolerance as above),
    /// and instances are not copies of each other.
    #[test]
    fn instances_share_pi_with_independent_secrets() {
        let layout = GridLayout::new(16);
        let w = layout.width();
        let mut rng = simulation_rng(77);
        let s = AlternatingShuffler::new(PublicPlacement::sample(layout, &mut rng));
        let column_of = |out: &[usize], client: usize| {
            layout
                .output_position(out.iter().position(|&x| x == client).unwrap())
                .1
        };
        let trials = 32_000u64;
        let mut joint = vec![0u64; w * w];
        let mut identical = 0;
        for _ in 0..trials {
            let mut inst: Vec<Vec<usize>> = vec![(0..16).collect(); 3];
            s.shuffle_instances(&mut inst, &mut rng).unwrap();
            for out in &inst {
                assert_rows_respected(&s, out);
            }
            joint[column_of(&inst[0], 5) * w + column_of(&inst[1], 5)] += 1;
            identical += usize::from(inst[0] == inst[1]);
        }
        let expected = vec![trials as f64 / (w * w) as f64; w * w];
        let x2 = chi_square(&joint, &expected);
        assert!(x2 < chi_square_critical(w * w - 1), "chi-square {x2}");
        // Each of the 4!^8 outputs (row assignment, then column order) is equally likely, so
        // two independent instances coincide with probability 4!^-8 ~ 9e-12 per trial.
        assert_eq!(identical, 0);
        let mut bad = vec![vec![0u8; 16], vec![0u8; 15]];
        assert_eq!(
            s.shuffle_instances(&mut bad, &mut rng),
            Err(AlternatingError::LengthMismatch {
                expected: 16,
                got: 15
            })
        );
        assert_eq!(bad[0], vec![0u8; 16]);
    }

    /// Which shuffler runs in the lower-bound experiment.
    #[derive(Clone, Copy)]
    enum Mode {
        /// A^2 without pi: clients in index order.
        NoPi,
        /// A^2_pi: a fresh public uniform pi per trial.
        WithPi,
        /// The ideal uniform shuffle.
        Uniform,
    }

    /// Success rate of the distinguisher over `trials` runs on each of the two inputs.
    ///
    /// Lower-bound example (Balle, Bell, Gascon, CCS 2023, Section 4.3: "a row of almost all
    /// ones and no other ones"): n = 256 in a 16 x 16 grid, binary randomized response with
    /// eps0 = 0.51 ln n (flip probability p = 1 / (1 + n^0.51) ~ 0.056). Clients 0..w (row
    /// 0 without pi) hold 1, all others 0, except the differing client 0, who holds 0 in
    /// D0 and 1 in D1. Under A^2 without pi the row round sends row 0's reports to distinct
    /// columns, so under D1 every column holds a row-0 "1" (unless flipped), and under D0
    /// one column does not, and is empty of ones unless one of its other users flipped.
    /// Distinguisher (knows the layout): guess D0 iff some column of the output has no 1.
    fn distinguisher_success(mode: Mode, trials: u64, seed: u64) -> f64 {
        let n = 256usize;
        let layout = GridLayout::new(n);
        let ranges = layout.column_ranges();
        let flip = Bernoulli::new(1.0 / (1.0 + (0.51 * (n as f64).ln()).exp())).unwrap();
        let mut correct = 0u64;
        for d in [0u8, 1] {
            let mut rng = simulation_stream(seed, u64::from(d));
            for _ in 0..trials {
                let mut reports: Vec<u8> = (0..n)
                    .map(|i| {
                        let x = u8::from(i < layout.width() && (i != 0 || d == 1));
                        x ^ u8::from(flip.sample(&mut rng))
                    })
                    .collect();
                match mode {
                    Mode::NoPi => AlternatingShuffler::new(PublicPlacement::identity(layout))
                        .shuffle(&mut reports, &mut rng),
                    Mode::WithPi => {
                        let pi = PublicPlacement::sample(layout, &mut rng);
                        AlternatingShuffler::new(pi).shuffle(&mut reports, &mut rng)
                    }
                    Mode::Uniform => UniformShuffler.shuffle(&mut reports, &mut rng),
                }
                let some_column_empty = ranges
                    .iter()
                    .any(|r| reports[r.clone()].iter().all(|&y| y == 0));
                correct += u64::from(some_column_empty == (d == 0));
            }
        }
        correct as f64 / (2 * trials) as f64
    }

    /// The paper's lower-bound example as a test of the simulator.
    ///
    /// Exact success under A^2 without pi (columns independent given the row round):
    /// with e1 = p (1-p)^(h-1) (a column with a row-0 "1" input shows no 1) and
    /// e0 = (1-p)^h (the hole column shows no 1), success = ((1 - e1)^w + 1 - (1 - e0)
    /// (1 - e1)^(w-1)) / 2 ~ 0.631 at n = 256. Measured over 2 x 10^4 fixed-seed trials
    /// (standard error 0.0035): required within 5 standard errors (0.018) of it.
    /// Under A^2_pi and the uniform shuffle the same test must be within 0.03 of 1/2: the
    /// 5-standard-error binomial half-width (0.018) plus what the number of ones alone
    /// reveals (both inputs' counts differ by one report, which any shuffler reveals; its
    /// effect on this test, ~0.006 by simulation, vanishes as n grows).
    /// Measured (seed 2023): no pi 0.6363, with pi 0.5057, uniform 0.5060.
    #[test]
    fn lower_bound_example_separates_a2_without_pi_only() {
        let trials = 10_000;
        let n = 256f64;
        let (h, w) = (16i32, 16i32);
        let p = 1.0 / (1.0 + (0.51 * n.ln()).exp());
        let e1 = p * (1.0 - p).powi(h - 1);
        let e0 = (1.0 - p).powi(h);
        let exact = ((1.0 - e1).powi(w) + 1.0 - (1.0 - e0) * (1.0 - e1).powi(w - 1)) / 2.0;
        let se = (0.25 / (2.0 * trials as f64)).sqrt();
        let no_pi = distinguisher_success(Mode::NoPi, trials, 2023);
        let with_pi = distinguisher_success(Mode::WithPi, trials, 2023);
        let uniform = distinguisher_success(Mode::Uniform, trials, 2023);
        eprintln!("exact {exact:.4}; no pi {no_pi:.4}, with pi {with_pi:.4}, uniform {uniform:.4}");
        assert!(
            (no_pi - exact).abs() < 5.0 * se,
            "no pi {no_pi} vs exact {exact}"
        );
        assert!(no_pi > 0.6);
        assert!((with_pi - 0.5).abs() < 0.03, "with pi {with_pi}");
        assert!((uniform - 0.5).abs() < 0.03, "uniform {uniform}");
    }
}
