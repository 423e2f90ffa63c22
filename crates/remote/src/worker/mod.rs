//! `pktlab worker --stdio`: a generator or receiver run for a controller
//! on another host, spoken to in JSON lines over ssh. [`protocol`] holds
//! the lines, [`serve`] the worker's side; the controller's side is
//! [`crate::ssh`].

pub mod protocol;
pub mod serve;
