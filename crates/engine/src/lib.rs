//! pktlab engine layer.
