//! What the AF_PACKET TX and RX rings share: the socket, the interface
//! check, and the errors of their socket options.

use std::io;
use std::os::fd::OwnedFd;

use crate::IoError;

/// Opens an AF_PACKET raw socket that receives nothing yet (protocol 0).
pub(super) fn packet_socket() -> Result<OwnedFd, IoError> {
    crate::sys::socket(libc::AF_PACKET, libc::SOCK_RAW, 0).map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => IoError::PermissionDenied,
        Some(libc::EAFNOSUPPORT) | Some(libc::EPROTONOSUPPORT) => IoError::Unsupported("AF_PACKET"),
        _ => IoError::sys("opening an AF_PACKET socket", "", e),
    })
}

/// Looks the interface up and refuses one that is down.
pub(super) fn usable_iface(name: &str) -> Result<crate::iface::Iface, IoError> {
    let iface = crate::iface::lookup(name)?;
    if !crate::iface::is_up(name)? {
        return Err(IoError::InterfaceDown(name.to_string()));
    }
    Ok(iface)
}

/// Maps the error of setting PACKET_TX_RING / PACKET_RX_RING.
pub(super) fn ring_error(
    opt: &'static str,
    iface: &str,
    geometry: String,
    e: io::Error,
) -> IoError {
    match e.raw_os_error() {
        Some(libc::ENOPROTOOPT) => IoError::Unsupported(opt),
        Some(libc::EINVAL) => IoError::BadRing(format!("the kernel refused {opt} of {geometry}")),
        Some(libc::ENOMEM) => IoError::sys(format!("allocating {opt} of {geometry}"), iface, e),
        _ => IoError::sys(format!("setting {opt} of {geometry}"), iface, e),
    }
}

/// Maps the error of a setsockopt that only fails on old kernels.
pub(super) fn feature_error(opt: &'static str, iface: &str, e: io::Error) -> IoError {
    match e.raw_os_error() {
        Some(libc::ENOPROTOOPT) | Some(libc::EINVAL) => IoError::Unsupported(opt),
        _ => IoError::sys(format!("setting {opt}"), iface, e),
    }
}
