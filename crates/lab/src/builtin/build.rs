//! Building the lab from its plan, and removing it.
//!
//! Everything the lab consists of lives inside its three namespaces, so
//! deleting them removes it all: the veths die with their namespace, and
//! nothing is ever created in the caller's namespace (both veth ends are
//! created directly in their target namespaces, so host interfaces that
//! happen to be called `g0` or `d1` are no obstacle and are never touched).

use crate::cidr::Cidr;
use crate::mac::format_mac;
use crate::netns::{self, Netns, VethEnd};
use crate::{sysctl, LabError};

use super::plan::{LabPlan, NsPlan};

/// The steps of [`create`], in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Namespaces,
    Sysctls,
    Veths,
    Addresses,
    Neighbours,
    Routes,
}

/// Creates the whole lab; none of its namespaces may exist. On failure,
/// removes every namespace it created and returns the error (or, if that
/// removal fails too, [`LabError::Cleanup`] with both).
pub fn create(plan: &LabPlan) -> Result<(), LabError> {
    create_with(plan, &|_| Ok(()))
}

/// [`create`], calling `before` ahead of each stage: a failure it returns
/// aborts the build like any other (tests use it to fail half-way).
pub(crate) fn create_with(
    plan: &LabPlan,
    before: &dyn Fn(Stage) -> Result<(), LabError>,
) -> Result<(), LabError> {
    let mut created: Vec<Netns> = Vec::new();
    match populate(plan, before, &mut created) {
        Ok(()) => {
            for ns in created {
                ns.keep();
            }
            Ok(())
        }
        Err(error) => {
            let mut cleanup = Ok(());
            for ns in created.into_iter().rev() {
                let result = ns.delete();
                if cleanup.is_ok() {
                    cleanup = result;
                }
            }
            match cleanup {
                Ok(()) => Err(error),
                Err(cleanup) => Err(LabError::Cleanup {
                    error: Box::new(error),
                    cleanup: Box::new(cleanup),
                }),
            }
        }
    }
}

fn populate(
    plan: &LabPlan,
    before: &dyn Fn(Stage) -> Result<(), LabError>,
    created: &mut Vec<Netns>,
) -> Result<(), LabError> {
    before(Stage::Namespaces)?;
    for ns in &plan.namespaces {
        // Brings loopback up too.
        created.push(Netns::create(&ns.name)?);
    }

    before(Stage::Sysctls)?;
    for ns in &plan.namespaces {
        sysctl::write_in(&ns.name, &ns.sysctls_first)?;
    }

    before(Stage::Veths)?;
    for (a, b) in plan.veth_pairs() {
        let (a, b) = (plan.iface(a), plan.iface(b));
        let (mac_a, mac_b) = (format_mac(a.mac), format_mac(b.mac));
        netns::veth_pair_with(
            VethEnd {
                ns: &a.ns,
                name: a.name,
                mac: Some(&mac_a),
            },
            VethEnd {
                ns: &b.ns,
                name: b.name,
                mac: Some(&mac_b),
            },
            plan.queues,
        )?;
    }
    configure(plan, before)
}

/// Applies the configuration part of the plan to existing namespaces and
/// veths: sysctls, addresses, static neighbours and routes. Every step
/// replaces rather than adds, so it repairs a lab in place (and does
/// nothing to what is already right).
pub fn reconfigure(plan: &LabPlan) -> Result<(), LabError> {
    configure(plan, &|_| Ok(()))
}

fn configure(
    plan: &LabPlan,
    before: &dyn Fn(Stage) -> Result<(), LabError>,
) -> Result<(), LabError> {
    for ns in &plan.namespaces {
        let all: Vec<_> = ns.sysctls().cloned().collect();
        sysctl::write_in(&ns.name, &all)?;
    }

    before(Stage::Addresses)?;
    for ns in &plan.namespaces {
        add_addresses(plan, ns)?;
    }

    before(Stage::Neighbours)?;
    for ns in &plan.namespaces {
        for n in &ns.neighbours {
            let (addr, mac) = (n.addr.to_string(), format_mac(n.mac));
            netns::ip_in(
                &ns.name,
                &[
                    "neighbour",
                    "replace",
                    &addr,
                    "lladdr",
                    &mac,
                    "dev",
                    n.dev,
                    "nud",
                    "permanent",
                ],
            )?;
        }
    }

    before(Stage::Routes)?;
    for ns in &plan.namespaces {
        for r in &ns.routes {
            let (dst, via) = (r.dst.to_string(), r.via.to_string());
            let mut args = vec!["route", "replace", &dst, "via", &via, "dev", r.dev];
            if r.onlink {
                args.push("onlink");
            }
            netns::ip_in(&ns.name, &args)?;
        }
    }
    Ok(())
}

fn add_addresses(plan: &LabPlan, ns: &NsPlan) -> Result<(), LabError> {
    for &role in &ns.ifaces {
        let iface = plan.iface(role);
        add_address(&ns.name, iface.name, iface.ipv4_cidr(), &[])?;
        let mut flags = vec!["nodad"];
        if ns.ipv6_noprefixroute() {
            flags.push("noprefixroute");
        }
        add_address(&ns.name, iface.name, iface.ipv6_cidr(), &flags)?;
    }
    Ok(())
}

fn add_address(ns: &str, dev: &str, addr: Cidr, flags: &[&str]) -> Result<(), LabError> {
    let addr = addr.to_string();
    let mut args = vec!["address", "replace", &addr, "dev", dev];
    args.extend_from_slice(flags);
    netns::ip_in(ns, &args).map(|_| ())
}

/// Deletes those of the lab's namespaces that exist; the first failure is
/// returned after trying them all.
pub fn remove(plan: &LabPlan) -> Result<(), LabError> {
    let mut result = Ok(());
    for ns in &plan.namespaces {
        if netns::exists(&ns.name) {
            let r = netns::delete(&ns.name);
            if result.is_ok() {
                result = r;
            }
        }
    }
    result
}
