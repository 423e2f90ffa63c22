//! Loading and attaching XDP programs, for every backend that runs one: the
//! AF_XDP receiver (`xsk_redirect`), the XDP_DROP sink and the live-frame
//! generator (`xdpgen`). The programs' sources are in `crates/io/bpf/`.
//!
//! Programs are loaded with the `aya` crate and attached **through a
//! bpf_link** only: the kernel detaches the program as soon as the link's
//! last file descriptor is closed, which happens when the [`XdpAttachment`]
//! is dropped and also when the process ends for any reason (normal exit,
//! Ctrl-C, SIGKILL, a crash). Nothing is pinned, so bpffs is never needed.
//! Kernels without bpf_link for XDP (before Linux 5.9) are refused rather
//! than given a netlink attachment that would outlive the process.

use std::fmt;

use aya::programs::links::FdLink;
use aya::programs::Xdp;
use aya::{Ebpf, EbpfLoader};

use crate::iface::Iface;
use crate::IoError;

/// `#[repr(align)]` wrapper: the ELF parser needs the object 8-byte aligned,
/// which `include_bytes!` alone does not promise.
#[repr(C, align(8))]
pub(crate) struct Aligned<B: ?Sized>(pub(crate) B);

static OBJECT: &Aligned<[u8]> = &Aligned(*include_bytes!("../bpf/xsk_redirect.o"));

/// The XDP object built from `crates/io/bpf/xsk_redirect.c` (see
/// `crates/io/bpf/build.sh`). It
/// holds two programs: `xsk_redirect` (each RX queue to its AF_XDP socket
/// through the XSKMAP `xsks`) and `xdp_drop` (drops every frame).
pub fn builtin_object() -> &'static [u8] {
    &OBJECT.0
}

/// How to attach an XDP program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AttachMode {
    /// Native (driver) mode where the driver supports it, else generic mode
    /// with a warning on stderr.
    #[default]
    Auto,
    /// Native mode only; an error where the driver refuses it.
    Native,
    /// Generic (SKB) mode: works on every interface, slower.
    Generic,
}

/// The mode an XDP program was attached in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attached {
    Native,
    Generic,
}

impl fmt::Display for Attached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Attached::Native => "native XDP",
            Attached::Generic => "generic XDP",
        })
    }
}

/// An XDP object whose maps exist in the kernel; its programs are loaded
/// and attached with [`XdpObject::attach`].
pub struct XdpObject {
    ebpf: Ebpf,
}

impl XdpObject {
    /// Parses `object` and creates its maps, with `max_entries` overriding
    /// the maximum entries of the named maps. `iface` only names the
    /// interface in error messages.
    pub fn load(object: &[u8], max_entries: &[(&str, u32)], iface: &str) -> Result<Self, IoError> {
        Self::load_configured::<u8>(object, max_entries, None, iface)
    }

    /// [`XdpObject::load`] that also sets global `name` (a `const volatile`
    /// variable in `.rodata`, which must exist) to `value` before the maps
    /// are created, so that the verifier sees it as a constant.
    pub fn load_configured<T: aya::Pod>(
        object: &[u8],
        max_entries: &[(&str, u32)],
        global: Option<(&str, &T)>,
        iface: &str,
    ) -> Result<Self, IoError> {
        let mut loader = EbpfLoader::new();
        for (name, n) in max_entries {
            loader.map_max_entries(name, *n);
        }
        if let Some((name, value)) = global {
            loader.override_global(name, value, true);
        }
        let ebpf = loader
            .load(object)
            .map_err(|e| bpf_error("loading the XDP object", iface, &e))?;
        Ok(XdpObject { ebpf })
    }

    /// Loads program `program` into the kernel (once) and attaches it to
    /// `iface` in `mode`. With [`AttachMode::Auto`], a refusal of native
    /// mode falls back to generic mode and prints the attachment's
    /// [`XdpAttachment::warning`] on stderr.
    pub fn attach(
        &mut self,
        program: &str,
        iface: &Iface,
        mode: AttachMode,
    ) -> Result<XdpAttachment, IoError> {
        let name = iface.name.as_str();
        let prog: &mut Xdp = self
            .ebpf
            .program_mut(program)
            .ok_or_else(|| IoError::Xdp {
                op: format!("finding XDP program {program}"),
                iface: name.to_string(),
                reason: "not in the object".to_string(),
            })?
            .try_into()
            .map_err(|e| bpf_error(&format!("loading XDP program {program}"), name, &e))?;
        if prog.fd().is_err() {
            prog.load()
                .map_err(|e| bpf_error(&format!("loading XDP program {program}"), name, &e))?;
        }
        let (link, attached, warning) = match mode {
            AttachMode::Native => (
                attach_link(prog, iface, aya::programs::XdpMode::Driver)?,
                Attached::Native,
                None,
            ),
            AttachMode::Generic => (
                attach_link(prog, iface, aya::programs::XdpMode::Skb)?,
                Attached::Generic,
                None,
            ),
            AttachMode::Auto => match attach_link(prog, iface, aya::programs::XdpMode::Driver) {
                Ok(link) => (link, Attached::Native, None),
                // The driver refused native mode. Anything else (another
                // program already attached, no privilege) would make
                // generic mode fail as well, so it is reported as it is.
                Err(IoError::Xdp { reason, .. }) => {
                    let link = attach_link(prog, iface, aya::programs::XdpMode::Skb)?;
                    let warning = format!(
                        "warning: {name} refused native XDP ({reason}); using generic XDP, which is slower"
                    );
                    eprintln!("{warning}");
                    (link, Attached::Generic, Some(warning))
                }
                Err(e) => return Err(e),
            },
        };
        Ok(XdpAttachment {
            _link: link,
            mode: attached,
            warning,
        })
    }

    /// Takes map `name` out of the object, e.g. to fill an XSKMAP.
    pub fn take_map(&mut self, name: &str) -> Option<aya::maps::Map> {
        self.ebpf.take_map(name)
    }

    /// The underlying aya object, for maps and programs not covered here.
    pub fn ebpf_mut(&mut self) -> &mut Ebpf {
        &mut self.ebpf
    }

    /// The underlying aya object, shared (programs run with BPF_PROG_RUN
    /// from several threads at once).
    pub fn ebpf(&self) -> &Ebpf {
        &self.ebpf
    }
}

/// An attached XDP program. Dropping it detaches the program (closing the
/// bpf_link); so does the end of the process.
pub struct XdpAttachment {
    _link: FdLink,
    mode: Attached,
    warning: Option<String>,
}

impl XdpAttachment {
    /// The mode the program runs in.
    pub fn mode(&self) -> Attached {
        self.mode
    }

    /// The warning printed when native mode was refused and generic mode
    /// used instead.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }
}

impl fmt::Debug for XdpAttachment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("XdpAttachment")
            .field("mode", &self.mode)
            .finish()
    }
}

/// Attaches `prog` to `iface` through a bpf_link in `mode`.
fn attach_link(
    prog: &mut Xdp,
    iface: &Iface,
    mode: aya::programs::XdpMode,
) -> Result<FdLink, IoError> {
    let name = iface.name.as_str();
    let what = match mode {
        aya::programs::XdpMode::Skb => "generic",
        _ => "native",
    };
    let op = format!("attaching XDP in {what} mode");
    let id = prog.attach_to_if_index(iface.index, mode).map_err(|e| {
        match find_os_error(&e).and_then(|io| io.raw_os_error()) {
            Some(libc::EBUSY) | Some(libc::EEXIST) => IoError::XdpBusy(name.to_string()),
            _ => bpf_error(&op, name, &e),
        }
    })?;
    let link = prog.take_link(id).map_err(|e| bpf_error(&op, name, &e))?;
    // aya falls back to a netlink attachment on kernels without bpf_link for
    // XDP; such an attachment would survive a crash. Dropping the
    // conversion error drops the link, which detaches it.
    FdLink::try_from(link)
        .map_err(|_| IoError::Unsupported("XDP through bpf_link (Linux 5.9 or later)"))
}

/// The first operating-system error in `e`'s source chain.
pub(crate) fn find_os_error<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a std::io::Error> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        cur = err.source();
    }
    None
}

/// Maps an aya error to one line: permission problems to
/// [`IoError::NotPermitted`], the rest to [`IoError::Xdp`] with the system
/// error's text (aya's own text can span lines, e.g. a verifier log).
pub(crate) fn bpf_error(op: &str, iface: &str, e: &(dyn std::error::Error + 'static)) -> IoError {
    match find_os_error(e) {
        Some(io) if matches!(io.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) => {
            IoError::NotPermitted {
                what: "loading and attaching XDP programs",
                caps: "CAP_BPF and CAP_NET_ADMIN",
            }
        }
        Some(io) if io.raw_os_error() == Some(libc::ENOSYS) => IoError::Unsupported("BPF"),
        Some(io) => IoError::Xdp {
            op: op.to_string(),
            iface: iface.to_string(),
            reason: crate::error::os_message(io),
        },
        None => IoError::Xdp {
            op: op.to_string(),
            iface: iface.to_string(),
            reason: e.to_string().lines().next().unwrap_or_default().to_string(),
        },
    }
}
