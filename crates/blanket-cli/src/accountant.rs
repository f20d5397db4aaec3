//! Which accountant certifies the guarantees the CLI prints.

use blanket::accounting::{BlanketTheorem31, ShuffleAccountant};
use clap::ValueEnum;

/// The `--accountant` flag of the calibrate and simulate commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum AccountantChoice {
    /// The tightest certified bound blanket has for the randomizer.
    #[default]
    Best,
    /// The paper's closed form (Balle et al. 2019, Theorem 3.1).
    Paper,
}

/// The accountant for a choice.
pub fn resolve(choice: AccountantChoice) -> Box<dyn ShuffleAccountant> {
    match choice {
        // Until the numerical accountants land, the best certified bound is Theorem 3.1.
        AccountantChoice::Best | AccountantChoice::Paper => Box::new(BlanketTheorem31),
    }
}
