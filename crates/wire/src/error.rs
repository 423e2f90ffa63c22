/// Bad input to the wire layer (a malformed range, MAC, size, rate, ...).
/// Every variant is a usage error: the CLI exits with code 2.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("{0}")]
    Invalid(String),
}
