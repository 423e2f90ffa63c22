//! pktlab bench layer.
