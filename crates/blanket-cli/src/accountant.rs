//! Which accountant certifies the guarantees the CLI prints.

use blanket::accounting::{Best, BlanketTheorem31, ShuffleAccountant};
use clap::ValueEnum;

/// The `--accountant` flag of the calibrate and simulate commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum AccountantChoice {
    /// The tightest certified bound blanket has for the randomizer: the minimum over the
    /// certified methods (blanket-closed, erlingsson-closed, fmt21-closed, fmt21-numerical,
    /// clones-krr, grr-exact), naming the one that won.
    #[default]
    Best,
    /// The paper's closed form (Balle et al. 2019, Theorem 3.1).
    Paper,
}

/// The accountant for a choice.
pub fn resolve(choice: AccountantChoice) -> Box<dyn ShuffleAccountant> {
    match choice {
        AccountantChoice::Best => Box::new(Best::default()),
        AccountantChoice::Paper => Box::new(BlanketTheorem31),
    }
}
