//! How many worker threads one generator or receiver may run: one check,
//! shared by the engine (which spawns them) and the command line (which
//! refuses a bad `-p` before opening anything).

use crate::WireError;

/// The most worker threads per run. Each thread owns a socket and a queue;
/// no NIC pktlab meets has more queues than this.
pub const MAX_THREADS: usize = 1024;

/// Accepts 1 to [`MAX_THREADS`] threads.
pub fn check_threads(threads: usize) -> Result<(), WireError> {
    if threads == 0 || threads > MAX_THREADS {
        return Err(WireError::InvalidThreads(threads));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_to_1024_threads() {
        assert_eq!(check_threads(1), Ok(()));
        assert_eq!(check_threads(1024), Ok(()));
        for bad in [0, 1025, usize::MAX] {
            assert_eq!(check_threads(bad), Err(WireError::InvalidThreads(bad)));
        }
        assert_eq!(
            check_threads(0).unwrap_err().to_string(),
            "invalid thread count 0: use 1 to 1024"
        );
        assert_eq!(
            check_threads(1025).unwrap_err().to_string(),
            "invalid thread count 1025: use 1 to 1024"
        );
    }
}
