//! The order of a campaign's runs. Machines drift, so by default the
//! configurations take turns (A B A B ...), so a drift spreads over all of them.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

use crate::CampaignError;

/// How runs are ordered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Order {
    /// Iteration by iteration, every configuration in turn, every traffic
    /// profile under each: A B A B ...
    Interleaved,
    /// Every run of a configuration before the next one: A A B B.
    Sequential,
    /// The interleaved runs shuffled, reproducibly from `seed`.
    Random { seed: u64 },
}

impl Order {
    /// `interleaved`, `sequential` or `random` (seed 1 unless given).
    pub fn parse(text: &str, seed: Option<u64>) -> Result<Order, CampaignError> {
        let order = match text {
            "interleaved" => Order::Interleaved,
            "sequential" => Order::Sequential,
            "random" => Order::Random {
                seed: seed.unwrap_or(1),
            },
            other => {
                return Err(CampaignError::Usage(format!(
                    "invalid order '{other}': use interleaved, sequential or random"
                )))
            }
        };
        if seed.is_some() && !matches!(order, Order::Random { .. }) {
            return Err(CampaignError::Usage(format!(
                "a seed only applies to the random order, not to {text}"
            )));
        }
        Ok(order)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
            Order::Random { .. } => "random",
        }
    }
}

/// One run of a campaign: indexes into its configurations and traffic
/// profiles, and the iteration (from 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunKey {
    pub config: usize,
    pub traffic: usize,
    pub iteration: usize,
}

/// Every run of `configs` × `traffics` × `iterations`, in `order`.
pub fn plan(order: &Order, configs: usize, traffics: usize, iterations: usize) -> Vec<RunKey> {
    let mut v = Vec::with_capacity(configs * traffics * iterations);
    match order {
        Order::Sequential => {
            for config in 0..configs {
                for traffic in 0..traffics {
                    for iteration in 1..=iterations {
                        v.push(RunKey {
                            config,
                            traffic,
                            iteration,
                        });
                    }
                }
            }
        }
        Order::Interleaved | Order::Random { .. } => {
            for iteration in 1..=iterations {
                for config in 0..configs {
                    for traffic in 0..traffics {
                        v.push(RunKey {
                            config,
                            traffic,
                            iteration,
                        });
                    }
                }
            }
        }
    }
    if let Order::Random { seed } = order {
        // A fixed generator algorithm: the same seed gives the same order
        // in every pktlab version, which resume relies on.
        let mut rng = rand_pcg::Pcg64::seed_from_u64(*seed);
        v.shuffle(&mut rng);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn letters(v: &[RunKey]) -> String {
        v.iter()
            .map(|k| {
                format!(
                    "{}{}{}",
                    (b'A' + k.config as u8) as char,
                    k.traffic,
                    k.iteration
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn interleaved_takes_turns() {
        let p = plan(&Order::Interleaved, 2, 1, 3);
        assert_eq!(letters(&p), "A01 B01 A02 B02 A03 B03");
        let p = plan(&Order::Interleaved, 2, 2, 1);
        assert_eq!(letters(&p), "A01 A11 B01 B11");
    }

    #[test]
    fn sequential_runs_each_config_in_one_go() {
        let p = plan(&Order::Sequential, 2, 1, 3);
        assert_eq!(letters(&p), "A01 A02 A03 B01 B02 B03");
    }

    #[test]
    fn random_is_a_reproducible_permutation() {
        let a = plan(&Order::Random { seed: 7 }, 3, 2, 4);
        let b = plan(&Order::Random { seed: 7 }, 3, 2, 4);
        let c = plan(&Order::Random { seed: 8 }, 3, 2, 4);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut sorted = a.clone();
        sorted.sort();
        let mut all = plan(&Order::Sequential, 3, 2, 4);
        all.sort();
        assert_eq!(sorted, all);
    }

    #[test]
    fn parsing() {
        assert_eq!(
            Order::parse("random", None).unwrap(),
            Order::Random { seed: 1 }
        );
        assert_eq!(
            Order::parse("random", Some(5)).unwrap(),
            Order::Random { seed: 5 }
        );
        assert!(Order::parse("sequential", Some(5)).unwrap_err().is_usage());
        assert_eq!(
            Order::parse("zigzag", None).unwrap_err().to_string(),
            "invalid order 'zigzag': use interleaved, sequential or random"
        );
    }

    #[test]
    fn names_and_orders_without_a_seed() {
        assert_eq!(
            Order::parse("interleaved", None).unwrap(),
            Order::Interleaved
        );
        assert_eq!(Order::parse("sequential", None).unwrap(), Order::Sequential);
        assert_eq!(Order::Interleaved.name(), "interleaved");
        assert_eq!(Order::Sequential.name(), "sequential");
        assert_eq!(Order::Random { seed: 3 }.name(), "random");
        assert!(plan(&Order::Interleaved, 0, 1, 1).is_empty());
    }
}
