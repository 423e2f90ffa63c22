//! The DUT's forwarding fast paths: `crates/io/bpf/xdpfwd.c` at XDP and
//! `crates/io/bpf/tcfwd.c` at tc ingress, both routing by the kernel's FIB
//! (`bpf_fib_lookup`) past the stack (the `xdp-forward` and `tc-forward`
//! DUT configurations of `crates/lab/src/dut.rs`).
//!
//! A DUT configuration attaches them from one short process and detaches
//! them from another, so they are attached without a bpf_link: the device
//! holds them ([`xdp`], [`tc`]). Everything here acts in the calling
//! thread's network namespace. Only pktlab's own programs (by name) are
//! ever detached; another program on a port makes an attach fail and is
//! left alone.

pub mod stats;
pub mod tc;
pub mod xdp;

use std::os::fd::AsFd;

use aya::maps::{Array, CpuMap, DevMapHash};
use aya::programs::{SchedClassifier, Xdp};
use aya::{Ebpf, EbpfLoader};
use serde::{Deserialize, Serialize};

use crate::loader::{bpf_error, Aligned};
use crate::IoError;

pub use stats::FastPathStats;
pub use tc::TcHook;

static XDP_OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../bpf/xdpfwd.o"));
static TC_OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../../bpf/tcfwd.o"));

/// The kernel's names (15 characters at most) of the XDP programs that
/// `xdp-forward` attaches to ports.
pub const XDP_PROGRAMS: [&str; 3] = ["xdp_fwd", "xdp_fwd_devmap", "xdp_steer"];
/// The kernel's name of `tc-forward`'s program.
pub const TC_PROGRAM: &str = "tc_fwd";

/// How `xdp-forward` reaches the egress port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Redirect {
    /// `bpf_redirect(ifindex)`.
    #[default]
    Plain,
    /// `bpf_redirect_map()` through a DEVMAP_HASH of the attached ports.
    Devmap,
}

/// How `xdp-forward` is attached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct XdpForward {
    pub redirect: Redirect,
    /// CPUs to forward on, through a CPUMAP queue each (flows hashed
    /// among them); empty: on the CPU that runs the port's NAPI.
    pub cpus: Vec<usize>,
    /// Frames each CPU's queue holds (the CPUMAP's `qsize`).
    pub queue: u32,
}

/// The CPUMAP queue size when none is given: the kernel's xdp_redirect_cpu
/// sample's default.
pub const DEFAULT_QUEUE: u32 = 2048;

/// The programs attached to one interface, by kernel name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachments {
    /// The XDP program and whether it runs in native mode.
    pub xdp: Option<(String, bool)>,
    pub tcx_ingress: Vec<String>,
    pub tcx_egress: Vec<String>,
    pub clsact: bool,
    pub clsact_ingress: Vec<String>,
    pub clsact_egress: Vec<String>,
}

fn lookup(name: &str) -> Result<u32, IoError> {
    Ok(crate::iface::lookup(name)?.index)
}

fn program_name(id: u32) -> Result<String, IoError> {
    Ok(stats::program_info(id)?
        .and_then(|p| p.name_as_str().map(str::to_string))
        .unwrap_or_else(|| format!("id {id}")))
}

/// What is attached to `iface`.
pub fn attachments(iface: &str) -> Result<Attachments, IoError> {
    let index = lookup(iface)?;
    let xdp = match xdp::attached(index, iface)? {
        Some(p) => Some((program_name(p.id)?, p.native)),
        None => None,
    };
    let names = |v: Vec<(u32, String)>| v.into_iter().map(|(_, n)| n).collect();
    Ok(Attachments {
        xdp,
        tcx_ingress: names(tc::tcx_programs(iface, false)?),
        tcx_egress: names(tc::tcx_programs(iface, true)?),
        clsact: tc::has_clsact(index, iface)?,
        clsact_ingress: names(tc::clsact_filters(index, iface, false)?),
        clsact_egress: names(tc::clsact_filters(index, iface, true)?),
    })
}

/// Attaches `xdp-forward` to every port of `ifaces` (one program, so one
/// set of counters, for all of them). A port that refuses leaves none
/// attached.
pub fn attach_xdp_forward(ifaces: &[&str], how: &XdpForward) -> Result<(), IoError> {
    let first = ifaces.first().copied().unwrap_or("-");
    let indexes = ifaces
        .iter()
        .map(|i| lookup(i))
        .collect::<Result<Vec<u32>, _>>()?;
    let mut ebpf = load_xdp_object(how, first)?;
    let (port_prog, cpumap_prog) = match (how.redirect, how.cpus.is_empty()) {
        (Redirect::Plain, true) => ("xdp_fwd", None),
        (Redirect::Devmap, true) => ("xdp_fwd_devmap", None),
        (Redirect::Plain, false) => ("xdp_steer", Some("xdp_fwd_cpumap")),
        (Redirect::Devmap, false) => ("xdp_steer", Some("xdp_fwd_devmap_cpumap")),
    };
    if how.redirect == Redirect::Devmap {
        fill_ports(&mut ebpf, &indexes, first)?;
    }
    if let Some(p) = cpumap_prog {
        load_xdp(&mut ebpf, p, first)?;
        fill_cpus(&mut ebpf, p, how, first)?;
    }
    load_xdp(&mut ebpf, port_prog, first)?;
    let prog: &Xdp = ebpf
        .program(port_prog)
        .and_then(|p| p.try_into().ok())
        .ok_or_else(|| missing(port_prog, first))?;
    let fd = prog
        .fd()
        .map_err(|e| bpf_error("loading the XDP forwarder", first, &e))?;
    for (n, (&iface, &index)) in ifaces.iter().zip(&indexes).enumerate() {
        if let Err(e) = xdp::attach(index, iface, fd.as_fd()) {
            let _ = detach_xdp_forward(&ifaces[..n]);
            return Err(e);
        }
    }
    Ok(())
}

fn load_xdp_object(how: &XdpForward, iface: &str) -> Result<Ebpf, IoError> {
    let steer: u32 = how.cpus.len().max(1) as u32;
    let highest = how.cpus.iter().copied().max().unwrap_or(0);
    let mut loader = EbpfLoader::new();
    loader.override_global("STEER_CPUS", &steer, true);
    loader.map_max_entries("fwd_cpus", highest as u32 + 1);
    loader
        .load(&XDP_OBJECT.0)
        .map_err(|e| bpf_error("loading the XDP forwarder", iface, &e))
}

fn missing(prog: &str, iface: &str) -> IoError {
    IoError::Xdp {
        op: format!("finding program {prog}"),
        iface: iface.to_string(),
        reason: "not in the object".into(),
    }
}

fn load_xdp(ebpf: &mut Ebpf, name: &str, iface: &str) -> Result<(), IoError> {
    let prog: &mut Xdp = ebpf
        .program_mut(name)
        .ok_or_else(|| missing(name, iface))?
        .try_into()
        .map_err(|e| bpf_error(&format!("loading {name}"), iface, &e))?;
    prog.load()
        .map_err(|e| bpf_error(&format!("loading {name}"), iface, &e))
}

fn fill_ports(ebpf: &mut Ebpf, indexes: &[u32], iface: &str) -> Result<(), IoError> {
    let err = |e: &(dyn std::error::Error + 'static)| bpf_error("filling the port map", iface, e);
    let map = ebpf
        .map_mut("ports")
        .ok_or_else(|| missing("ports", iface))?;
    let mut ports: DevMapHash<_> = DevMapHash::try_from(map).map_err(|e| err(&e))?;
    for &i in indexes {
        ports.insert(i, i, None, 0).map_err(|e| err(&e))?;
    }
    Ok(())
}

fn fill_cpus(ebpf: &mut Ebpf, prog: &str, how: &XdpForward, iface: &str) -> Result<(), IoError> {
    let err = |e: &(dyn std::error::Error + 'static)| bpf_error("filling the CPU queues", iface, e);
    let fd = {
        let p: &Xdp = ebpf
            .program(prog)
            .and_then(|p| p.try_into().ok())
            .ok_or_else(|| missing(prog, iface))?;
        p.fd()
            .map_err(|e| err(&e))?
            .try_clone()
            .map_err(|e| err(&e))?
    };
    {
        let map = ebpf
            .map_mut("steer_to")
            .ok_or_else(|| missing("steer_to", iface))?;
        let mut to: Array<_, u32> = Array::try_from(map).map_err(|e| err(&e))?;
        for (i, &cpu) in how.cpus.iter().enumerate() {
            to.set(i as u32, cpu as u32, 0).map_err(|e| err(&e))?;
        }
    }
    let map = ebpf
        .map_mut("fwd_cpus")
        .ok_or_else(|| missing("fwd_cpus", iface))?;
    let mut cpus: CpuMap<_> = CpuMap::try_from(map).map_err(|e| err(&e))?;
    let queue = if how.queue == 0 {
        DEFAULT_QUEUE
    } else {
        how.queue
    };
    for &cpu in &how.cpus {
        cpus.set(cpu as u32, queue, Some(&fd), 0)
            .map_err(|e| err(&e))?;
    }
    Ok(())
}

/// Detaches `xdp-forward` from every port of `ifaces` where it is
/// attached; returns how many. Another XDP program is left alone.
pub fn detach_xdp_forward(ifaces: &[&str]) -> Result<usize, IoError> {
    let mut n = 0;
    for &iface in ifaces {
        let index = lookup(iface)?;
        let Some(p) = xdp::attached(index, iface)? else {
            continue;
        };
        let Some(info) = stats::program_info(p.id)? else {
            continue;
        };
        if !XDP_PROGRAMS.contains(&info.name_as_str().unwrap_or("")) {
            continue;
        }
        let fd = info
            .fd()
            .map_err(|e| bpf_error("opening the XDP forwarder", iface, &e))?;
        xdp::detach(index, iface, fd.as_fd(), p.native)?;
        n += 1;
    }
    Ok(n)
}

/// Attaches `tc-forward` at the ingress of every port of `ifaces` (one
/// program for all), with tcx where the kernel has it (`hook` None) or the
/// hook asked for. A port that refuses leaves none attached.
pub fn attach_tc_forward(ifaces: &[&str], hook: Option<TcHook>) -> Result<TcHook, IoError> {
    let first = ifaces.first().copied().unwrap_or("-");
    let indexes = ifaces
        .iter()
        .map(|i| lookup(i))
        .collect::<Result<Vec<u32>, _>>()?;
    let mut ebpf = EbpfLoader::new()
        .load(&TC_OBJECT.0)
        .map_err(|e| bpf_error("loading the tc forwarder", first, &e))?;
    let prog: &mut SchedClassifier = ebpf
        .program_mut(TC_PROGRAM)
        .ok_or_else(|| missing(TC_PROGRAM, first))?
        .try_into()
        .map_err(|e| bpf_error("loading the tc forwarder", first, &e))?;
    prog.load()
        .map_err(|e| bpf_error("loading the tc forwarder", first, &e))?;
    let fd = prog
        .fd()
        .map_err(|e| bpf_error("loading the tc forwarder", first, &e))?
        .try_clone()
        .map_err(|e| bpf_error("loading the tc forwarder", first, &e))?;
    let mut used = hook.unwrap_or(TcHook::Tcx);
    for (n, (&iface, &index)) in ifaces.iter().zip(&indexes).enumerate() {
        let done = match used {
            TcHook::Tcx => match tc::tcx_attach(index, fd.as_fd()) {
                // No tcx in this kernel: a clsact filter, unless tcx was asked for.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) && hook.is_none() && n == 0 => {
                    used = TcHook::Clsact;
                    tc::clsact_attach(prog, iface)
                }
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Err(IoError::Xdp {
                    op: "attaching tc-forward at tcx ingress".into(),
                    iface: iface.to_string(),
                    reason: "it is attached there already".into(),
                }),
                Err(e) => Err(IoError::Xdp {
                    op: "attaching tc-forward at tcx ingress".into(),
                    iface: iface.to_string(),
                    reason: crate::os_message(&e),
                }),
                Ok(()) => Ok(()),
            },
            TcHook::Clsact => tc::clsact_attach(prog, iface),
        };
        if let Err(e) = done {
            let _ = detach_tc_forward(&ifaces[..n]);
            return Err(e);
        }
    }
    Ok(used)
}

/// Detaches `tc-forward` (tcx or clsact) from every port of `ifaces`;
/// returns how many attachments it removed. Other programs stay.
pub fn detach_tc_forward(ifaces: &[&str]) -> Result<usize, IoError> {
    let mut n = 0;
    for &iface in ifaces {
        let index = lookup(iface)?;
        for (id, name) in tc::tcx_programs(iface, false)? {
            if name != TC_PROGRAM {
                continue;
            }
            let fd = tc::program_fd(id, iface)?;
            tc::tcx_detach(index, fd.as_fd()).map_err(|e| IoError::Xdp {
                op: "detaching tc-forward from tcx ingress".into(),
                iface: iface.to_string(),
                reason: crate::os_message(&e),
            })?;
            n += 1;
        }
        if tc::clsact_filters(index, iface, false)?
            .iter()
            .any(|(_, name)| name == TC_PROGRAM)
        {
            tc::clsact_detach(index, iface, TC_PROGRAM)?;
            n += 1;
        }
    }
    Ok(n)
}

/// The id of the CPUMAP (`fwd_cpus`) of the steering program attached to
/// `iface`, if xdp-forward is attached there through CPU queues: the XDP
/// drop tracer's CPU-queue counts name that map, and this says which DUT
/// port it serves ([`crate::xdpdrops::name_with`]).
pub fn queue_map(iface: &str) -> Result<Option<u32>, IoError> {
    let index = lookup(iface)?;
    let Some(p) = xdp::attached(index, iface)? else {
        return Ok(None);
    };
    let Some(info) = stats::program_info(p.id)? else {
        return Ok(None);
    };
    if info.name_as_str() != Some("xdp_steer") {
        return Ok(None);
    }
    let err = |e: &(dyn std::error::Error + 'static)| {
        bpf_error("reading the steering program's maps", iface, e)
    };
    let _fd = info.fd().map_err(|e| err(&e))?;
    for id in info.map_ids().map_err(|e| err(&e))?.unwrap_or_default() {
        let m = aya::maps::MapInfo::from_id(id).map_err(|e| err(&e))?;
        if m.name_as_str() == Some("fwd_cpus") {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// The counters of the pktlab fast path attached to `iface` (its XDP
/// program first, else its tc program), with that program's name; None
/// when neither is attached.
pub fn stats(iface: &str) -> Result<Option<(String, FastPathStats)>, IoError> {
    let index = lookup(iface)?;
    if let Some(p) = xdp::attached(index, iface)? {
        let name = program_name(p.id)?;
        if XDP_PROGRAMS.contains(&name.as_str()) {
            return Ok(Some((name, stats::read_program_stats(p.id, iface)?)));
        }
    }
    let tc = tc::tcx_programs(iface, false)?
        .into_iter()
        .chain(tc::clsact_filters(index, iface, false)?);
    for (id, name) in tc {
        if name == TC_PROGRAM {
            return Ok(Some((name, stats::read_program_stats(id, iface)?)));
        }
    }
    Ok(None)
}
