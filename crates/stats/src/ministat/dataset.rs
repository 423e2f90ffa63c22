//! A data set, and the symbol it is drawn with.

/// The most data sets ministat compares at once; `render` and `analyze`
/// ignore any beyond.
pub const MAX_DATASETS: usize = 7;

/// The symbol of set number `k` (1-based), and of OR-ed set numbers in the
/// plot; 0 is the blank of an empty cell.
pub fn symbol(k: usize) -> Option<char> {
    const SYMBOLS: [char; MAX_DATASETS + 1] = [' ', 'x', '+', '*', '%', '#', '@', 'O'];
    SYMBOLS.get(k).copied()
}

/// One named data set, values in input order.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub name: String,
    pub values: Vec<f64>,
}
