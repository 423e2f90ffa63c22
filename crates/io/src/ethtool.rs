//! The two ethtool ioctls pktlab needs: the driver's name and the channel
//! (queue) counts. Two fixed structs over SIOCETHTOOL; the ethtool crates
//! speak the netlink interface asynchronously, for two reads.

use crate::IoError;

const ETHTOOL_GDRVINFO: u32 = 0x03;
const ETHTOOL_GCHANNELS: u32 = 0x3c;

/// `struct ethtool_drvinfo` (linux/ethtool.h).
#[repr(C)]
struct DrvInfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

/// `struct ethtool_channels` (linux/ethtool.h): the counts in use and their
/// maxima.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Channels {
    cmd: u32,
    pub max_rx: u32,
    pub max_tx: u32,
    pub max_other: u32,
    pub max_combined: u32,
    pub rx_count: u32,
    pub tx_count: u32,
    pub other_count: u32,
    pub combined_count: u32,
}

impl Channels {
    /// RX queues in use (combined channels count for both directions).
    pub(crate) fn rx_queues(&self) -> u32 {
        self.rx_count + self.combined_count
    }

    /// TX queues in use.
    pub(crate) fn tx_queues(&self) -> u32 {
        self.tx_count + self.combined_count
    }
}

/// Runs SIOCETHTOOL with `data` (a struct starting with its command).
/// `Ok(false)` when the driver does not implement the command.
fn ioctl<T>(name: &str, data: &mut T) -> Result<bool, IoError> {
    ioctl_at(name, (data as *mut T).cast())
}

/// Runs SIOCETHTOOL with the command buffer at `data`, which must stay
/// valid and large enough for the command's answer during the call.
fn ioctl_at(name: &str, data: *mut libc::c_char) -> Result<bool, IoError> {
    let sock = crate::sys::socket(libc::AF_UNIX, libc::SOCK_DGRAM, 0)
        .map_err(|e| IoError::sys("opening an ioctl socket", name, e))?;
    let mut ifr = crate::sys::ifreq(name)?;
    ifr.ifr_ifru.ifru_data = data;
    match crate::sys::ifreq_ioctl(&sock, libc::SIOCETHTOOL, &mut ifr) {
        Ok(()) => Ok(true),
        Err(e) => match e.raw_os_error() {
            Some(libc::ENODEV) | Some(libc::ENXIO) => {
                Err(IoError::NoSuchInterface(name.to_string()))
            }
            Some(libc::EOPNOTSUPP) => Ok(false),
            _ => Err(IoError::sys("querying ethtool", name, e)),
        },
    }
}

/// The driver's name (`veth`, `ixgbe`, ...), if it says.
pub(crate) fn driver(name: &str) -> Result<Option<String>, IoError> {
    // SAFETY: plain old data; all-zero is valid.
    let mut d: DrvInfo = unsafe { std::mem::zeroed() };
    d.cmd = ETHTOOL_GDRVINFO;
    if !ioctl(name, &mut d)? {
        return Ok(None);
    }
    let end = d
        .driver
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(d.driver.len());
    Ok(Some(String::from_utf8_lossy(&d.driver[..end]).into_owned()))
}

/// The interface's channel counts, if its driver reports them.
pub(crate) fn channels(name: &str) -> Result<Option<Channels>, IoError> {
    let mut c = Channels {
        cmd: ETHTOOL_GCHANNELS,
        ..Default::default()
    };
    Ok(ioctl(name, &mut c)?.then_some(c))
}

const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;

/// `struct ethtool_value` (linux/ethtool.h): the legacy one-flag commands.
#[repr(C)]
struct Value {
    cmd: u32,
    data: u32,
}

/// Whether generic receive offload is on, if the driver says. Asked of the
/// calling thread's network namespace.
pub fn gro(name: &str) -> Result<Option<bool>, IoError> {
    let mut v = Value {
        cmd: ETHTOOL_GGRO,
        data: 0,
    };
    Ok(ioctl(name, &mut v)?.then_some(v.data != 0))
}

/// Turns generic receive offload on or off (what `ethtool -K NAME gro on`
/// does); `Ok(false)` when the driver cannot. Needs CAP_NET_ADMIN.
pub fn set_gro(name: &str, on: bool) -> Result<bool, IoError> {
    let mut v = Value {
        cmd: ETHTOOL_SGRO,
        data: u32::from(on),
    };
    ioctl(name, &mut v)
}

const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
/// `ETH_SS_STATS`: the string set naming the driver's statistics.
const ETH_SS_STATS: u32 = 1;
/// `ETH_GSTRING_LEN`.
const GSTRING_LEN: usize = 32;

/// The driver's own statistics (`ethtool -S NAME`), by name, in the
/// driver's order; None when the driver has none. Read through
/// ETHTOOL_GDRVINFO (how many), ETHTOOL_GSTRINGS (their names) and
/// ETHTOOL_GSTATS (their values) in the calling thread's namespace.
pub fn stats(name: &str) -> Result<Option<Vec<(String, u64)>>, IoError> {
    // SAFETY: plain old data; all-zero is valid.
    let mut d: DrvInfo = unsafe { std::mem::zeroed() };
    d.cmd = ETHTOOL_GDRVINFO;
    if !ioctl(name, &mut d)? || d.n_stats == 0 {
        return Ok(None);
    }
    let n = d.n_stats as usize;
    // struct ethtool_gstrings: cmd, string_set, len, then len names of 32
    // bytes; u32 words keep the header aligned.
    let mut strings = vec![0u32; 3 + n * GSTRING_LEN / 4];
    strings[0] = ETHTOOL_GSTRINGS;
    strings[1] = ETH_SS_STATS;
    strings[2] = d.n_stats;
    // The buffer holds the header and all n names the driver writes.
    if !ioctl_at(name, strings.as_mut_ptr().cast())? {
        return Ok(None);
    }
    // struct ethtool_stats: cmd, n_stats, then n_stats u64 values.
    let mut values = vec![0u64; 1 + n];
    let mut head = [0u8; 8];
    head[..4].copy_from_slice(&ETHTOOL_GSTATS.to_ne_bytes());
    head[4..].copy_from_slice(&d.n_stats.to_ne_bytes());
    values[0] = u64::from_ne_bytes(head);
    // The buffer holds the header and all n values the driver writes.
    if !ioctl_at(name, values.as_mut_ptr().cast())? {
        return Ok(None);
    }
    // The kernel says how many it filled (a driver may have fewer now).
    let filled = (strings[2] as usize).min(n);
    let names: Vec<u8> = strings[3..].iter().flat_map(|w| w.to_ne_bytes()).collect();
    Ok(Some(
        names
            .chunks(GSTRING_LEN)
            .take(filled)
            .zip(&values[1..])
            .map(|(raw, &v)| {
                let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
                (String::from_utf8_lossy(&raw[..end]).into_owned(), v)
            })
            .collect(),
    ))
}

/// The driver statistics that count dropped frames: their names say
/// `drop` or `discard` (`rx_queue_0_drops`, `rx_discards_phy`, ...).
pub fn drop_stats(name: &str) -> Result<Vec<(String, u64)>, IoError> {
    Ok(stats(name)?
        .unwrap_or_default()
        .into_iter()
        .filter(|(n, _)| n.contains("drop") || n.contains("discard"))
        .collect())
}
