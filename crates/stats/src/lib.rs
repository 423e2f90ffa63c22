//! pktlab stats layer.
