//! pktlab history layer: every campaign's results in a database (SQLite
//! embedded by default, PostgreSQL for a team), trends over labels, and
//! changes found as FD.io CSIT finds them ([`jumpavg`]).

pub mod jumpavg;
