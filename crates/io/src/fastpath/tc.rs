//! tc programs at an interface's ingress that stay attached after the
//! process ends: tcx (Linux 6.6 on) through `BPF_PROG_ATTACH` without a
//! link, which the device holds until `BPF_PROG_DETACH`; before that, a
//! `bpf` filter in direct-action mode under a `clsact` qdisc (netlink).
//!
//! aya attaches tcx only through a bpf_link (closed with its last file
//! descriptor, or kept by pinning in a bpffs, which `ip netns exec` hides
//! by remounting /sys), hence the two system calls here.

use std::os::fd::{AsRawFd, BorrowedFd};

use aya::programs::tc::{self, NlOptions, SchedClassifier, TcAttachOptions, TcAttachType};
use aya_obj::generated::{bpf_attach_type, bpf_cmd};
use netlink_packet_core::NLM_F_DUMP;
use netlink_packet_route::tc::{
    TcAttribute, TcFilterBpfOption, TcHandle, TcHeader, TcMessage, TcOption,
};
use netlink_packet_route::RouteNetlinkMessage;

use crate::netlink::{Socket, NETLINK_ROUTE};
use crate::IoError;

/// The kind of tc attachment a program has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcHook {
    Tcx,
    Clsact,
}

/// `BPF_PROG_ATTACH` / `BPF_PROG_DETACH`'s attribute, as the kernel lays
/// it out (the fields after `attach_flags` stay zero).
#[repr(C)]
#[derive(Default)]
struct AttachAttr {
    target_ifindex: u32,
    attach_bpf_fd: u32,
    attach_type: u32,
    attach_flags: u32,
    replace_bpf_fd: u32,
    relative_fd: u32,
    expected_revision: u64,
}

fn prog_attach_call(cmd: bpf_cmd, index: u32, prog: BorrowedFd<'_>) -> std::io::Result<()> {
    let mut attr = AttachAttr {
        target_ifindex: index,
        attach_bpf_fd: prog.as_raw_fd() as u32,
        attach_type: bpf_attach_type::BPF_TCX_INGRESS as u32,
        ..AttachAttr::default()
    };
    // SAFETY: the attribute has the kernel's layout for these commands and
    // lives for the whole call; the kernel reads only its size.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd as libc::c_long,
            std::ptr::addr_of_mut!(attr),
            std::mem::size_of::<AttachAttr>(),
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Attaches `prog` at tcx ingress of interface `index`, after any program
/// there. Err(EINVAL) on kernels without tcx.
pub fn tcx_attach(index: u32, prog: BorrowedFd<'_>) -> std::io::Result<()> {
    prog_attach_call(bpf_cmd::BPF_PROG_ATTACH, index, prog)
}

/// Detaches `prog` from tcx ingress of interface `index`.
pub fn tcx_detach(index: u32, prog: BorrowedFd<'_>) -> std::io::Result<()> {
    prog_attach_call(bpf_cmd::BPF_PROG_DETACH, index, prog)
}

/// The programs at tcx ingress (`egress` false) or egress of `iface`, by
/// id and kernel name; empty on kernels without tcx.
pub fn tcx_programs(iface: &str, egress: bool) -> Result<Vec<(u32, String)>, IoError> {
    let kind = if egress {
        TcAttachType::Egress
    } else {
        TcAttachType::Ingress
    };
    match SchedClassifier::query_tcx(iface, kind) {
        Ok((_, progs)) => Ok(progs
            .iter()
            .map(|p| (p.id(), p.name_as_str().unwrap_or("").to_string()))
            .collect()),
        Err(e) => match crate::loader::find_os_error(&e).and_then(|io| io.raw_os_error()) {
            // No tcx in this kernel: nothing can be attached there.
            Some(libc::EINVAL) => Ok(Vec::new()),
            _ => Err(crate::loader::bpf_error("listing tcx programs", iface, &e)),
        },
    }
}

/// Attaches `prog` as a direct-action `bpf` filter at the ingress of a
/// `clsact` qdisc on `iface`, adding the qdisc if there is none. The filter
/// stays after this process: aya's handle is forgotten, not dropped (its
/// drop would delete the filter).
pub fn clsact_attach(prog: &mut SchedClassifier, iface: &str) -> Result<(), IoError> {
    let err = |e: &(dyn std::error::Error + 'static)| {
        crate::loader::bpf_error("attaching a clsact filter", iface, e)
    };
    if let Err(e) = tc::qdisc_add_clsact(iface) {
        if crate::loader::find_os_error(&e).and_then(|io| io.raw_os_error()) != Some(libc::EEXIST) {
            return Err(err(&e));
        }
    }
    let id = prog
        .attach_with_options(
            iface,
            TcAttachType::Ingress,
            TcAttachOptions::Netlink(NlOptions::default()),
        )
        .map_err(|e| err(&e))?;
    let link = prog.take_link(id).map_err(|e| err(&e))?;
    std::mem::forget(link);
    Ok(())
}

/// Removes the clsact ingress filters of program name `name` from `iface`,
/// then the clsact qdisc if no filter is left on it.
pub fn clsact_detach(index: u32, iface: &str, name: &str) -> Result<(), IoError> {
    tc::qdisc_detach_program(iface, TcAttachType::Ingress, name)
        .map_err(|e| crate::loader::bpf_error("removing a clsact filter", iface, &e))?;
    let left =
        clsact_filters(index, iface, false)?.len() + clsact_filters(index, iface, true)?.len();
    if left == 0 {
        delete_clsact(index, iface)?;
    }
    Ok(())
}

/// The `bpf` filters at the clsact ingress (or egress) of interface
/// `index`, by program id and name.
pub fn clsact_filters(
    index: u32,
    iface: &str,
    egress: bool,
) -> Result<Vec<(u32, String)>, IoError> {
    let sock = Socket::open(NETLINK_ROUTE)
        .map_err(|e| IoError::sys("opening a netlink socket", iface, e))?;
    let mut get = TcMessage::default();
    get.header = TcHeader::default();
    get.header.index = index as i32;
    get.header.parent = TcHandle {
        major: 0xFFFF,
        minor: if egress {
            TcHandle::MIN_EGRESS
        } else {
            TcHandle::MIN_INGRESS
        },
    };
    let answers = match sock.request(RouteNetlinkMessage::GetTrafficFilter(get), NLM_F_DUMP) {
        Ok(a) => a,
        // No clsact qdisc: no filters.
        Err(crate::netlink::RequestError::Kernel(e))
            if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOENT)) =>
        {
            return Ok(Vec::new())
        }
        Err(e) => return Err(super::xdp::refused("listing tc filters", iface, e, None)),
    };
    let mut out = Vec::new();
    for m in &answers {
        let RouteNetlinkMessage::NewTrafficFilter(f) = m else {
            continue;
        };
        let (mut id, mut name) = (None, String::new());
        for a in &f.attributes {
            if let TcAttribute::Options(opts) = a {
                for o in opts {
                    match o {
                        TcOption::Bpf(TcFilterBpfOption::ProgId(i)) => id = Some(*i),
                        TcOption::Bpf(TcFilterBpfOption::ProgName(n)) => name = n.clone(),
                        _ => {}
                    }
                }
            }
        }
        if let Some(id) = id {
            out.push((id, name));
        }
    }
    Ok(out)
}

/// Whether interface `index` has a clsact qdisc.
pub fn has_clsact(index: u32, iface: &str) -> Result<bool, IoError> {
    let sock = Socket::open(NETLINK_ROUTE)
        .map_err(|e| IoError::sys("opening a netlink socket", iface, e))?;
    let answers = sock
        .request(
            RouteNetlinkMessage::GetQueueDiscipline(TcMessage::default()),
            NLM_F_DUMP,
        )
        .map_err(|e| super::xdp::refused("listing qdiscs", iface, e, None))?;
    Ok(answers.iter().any(|m| match m {
        RouteNetlinkMessage::NewQueueDiscipline(q) => {
            q.header.index == index as i32
                && q.attributes
                    .iter()
                    .any(|a| matches!(a, TcAttribute::Kind(k) if k == "clsact"))
        }
        _ => false,
    }))
}

fn delete_clsact(index: u32, iface: &str) -> Result<(), IoError> {
    let sock = Socket::open(NETLINK_ROUTE)
        .map_err(|e| IoError::sys("opening a netlink socket", iface, e))?;
    let mut del = TcMessage::default();
    del.header.index = index as i32;
    del.header.parent = TcHandle::CLSACT;
    del.header.handle = TcHandle {
        major: 0xFFFF,
        minor: 0,
    };
    del.attributes.push(TcAttribute::Kind("clsact".into()));
    sock.request_explained(RouteNetlinkMessage::DelQueueDiscipline(del), 0)
        .map(|_| ())
        .map_err(|(e, why)| super::xdp::refused("deleting the clsact qdisc", iface, e, why))
}

/// The fd of program `id`, to detach it.
pub(crate) fn program_fd(id: u32, iface: &str) -> Result<aya::programs::ProgramFd, IoError> {
    let info = super::stats::program_info(id)?.ok_or_else(|| IoError::Xdp {
        op: "finding a tc program".into(),
        iface: iface.to_string(),
        reason: format!("program {id} is gone"),
    })?;
    info.fd()
        .map_err(|e| crate::loader::bpf_error("opening a tc program", iface, &e))
}
