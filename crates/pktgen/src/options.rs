//! pkt-gen's options with pkt-gen's meanings (netmap's apps/pkt-gen/pkt-gen.c
//! and the FreeBSD port's `-U`), checked: a bad value is one line and exit 2
//! where pkt-gen's `atoi` would take it as 0.

use crate::error::{usage, PktgenError};
use crate::getopt::{getopt, Opt};

/// The name scripts call, and `pkill` looks for.
pub const NAME: &str = "pkt-gen";

/// pkt-gen's arguments when `argv` (a program's command line, its path
/// first) called it through a link named `pkt-gen`; None for another
/// name.
pub fn args_if_called_as_pkt_gen(
    argv: impl IntoIterator<Item = std::ffi::OsString>,
) -> Option<Vec<String>> {
    let mut argv = argv.into_iter();
    let arg0 = argv.next()?;
    let name = std::path::Path::new(&arg0).file_name()?;
    (name == NAME).then(|| argv.map(|a| a.to_string_lossy().into_owned()).collect())
}

/// pkt-gen's getopt string, with the FreeBSD port's `U`.
pub const SPEC: &str = "46a:f:F:Nn:i:Il:d:s:D:S:b:c:o:p:T:w:WvR:UXC:H:rP:zZAhBM:";

/// pkt-gen's defaults.
pub const DEFAULT_SRC: &str = "10.0.0.1";
pub const DEFAULT_DST: &str = "10.1.0.1";
pub const DEFAULT_DST_MAC: &str = "ff:ff:ff:ff:ff:ff";
pub const DEFAULT_SIZE: u16 = 60;
pub const DEFAULT_WAIT_LINK: u64 = 2;
pub const DEFAULT_BURST: usize = 512;
/// `-B`: the 4 bytes of FCS and 20 of preamble and inter-frame gap.
pub const FRAMING_BITS: u64 = 24 * 8;
/// Largest frame without FCS: pktlab's 9018-byte jumbo frame less the FCS.
pub const MAX_SIZE: u16 = 9014;
/// pktlab's own long option, taken out before getopt sees the line.
pub const ALLOW_PUBLIC: &str = "--allow-public";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    Tx,
    Rx,
}

/// Where the frames go or come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Port {
    /// A Linux interface (netmap's `netmap:` prefix and ring suffixes gone).
    Iface(String),
    /// pkt-gen's `-i null`: build the frames and drop them.
    Null,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub function: Function,
    /// `-i` as given, for the `interface is` line.
    pub iface_arg: String,
    pub port: Port,
    /// `-n`: packets in total, split over the threads; 0 is no limit.
    pub count: u64,
    /// `-l`: frame size without FCS; a second `-l` is the minimum size.
    pub size: u16,
    pub min_size: Option<u16>,
    /// `-R`: packets per second of each thread; 0 is as fast as possible.
    pub rate_per_thread: u64,
    pub threads: usize,
    /// `-a`: thread i runs on CPU (a + i) mod `cpus`.
    pub affinity: Option<usize>,
    /// `-c`: CPUs to use, 0 for all (pkt-gen's default is 1).
    pub cpus: usize,
    /// `-b`, when given.
    pub burst: Option<usize>,
    /// `-w`: seconds to wait for the link.
    pub wait_link: u64,
    /// `-W`: the receiver exits after 1 s without traffic.
    pub exit_when_idle: bool,
    /// `-T`: report interval in milliseconds.
    pub interval_ms: u64,
    /// Not `-N`: K/M/G prefixes.
    pub normalize: bool,
    /// `-A`
    pub pps_stats: bool,
    /// `-B`
    pub framing: bool,
    /// `-z` / `-Z`
    pub random_src: bool,
    pub random_dst: bool,
    pub inet6: bool,
    pub src: String,
    pub dst: String,
    pub src_mac: Option<String>,
    pub dst_mac: String,
    pub allow_public: bool,
    pub help: bool,
    /// Options accepted without effect on Linux, as given (`-F 2`).
    pub ignored: Vec<String>,
    /// Operands pkt-gen does not use.
    pub operands: Vec<String>,
}

impl Options {
    /// The frame sizes as pktlab reads them (with FCS): `64`, or every size
    /// of a `-l MAX -l MIN` range with the same weight.
    pub fn size_mix(&self) -> String {
        match self.min_size {
            Some(min) if min < self.size => (min..=self.size)
                .map(|s| (s + 4).to_string())
                .collect::<Vec<_>>()
                .join(","),
            _ => (self.size + 4).to_string(),
        }
    }

    /// The CPU of each thread under `-a`/`-c`, as pkt-gen computes it.
    pub fn thread_cpus(&self, online: usize) -> Vec<usize> {
        let Some(first) = self.affinity else {
            return Vec::new();
        };
        let cpus = if self.cpus == 0 { online } else { self.cpus };
        (0..self.threads).map(|i| (first + i) % cpus).collect()
    }
}

/// Parses pkt-gen's command line (without the program name). `online` is
/// the number of CPUs, for `-c`.
pub fn parse(args: &[String], online: usize) -> Result<Options, PktgenError> {
    let allow_public = args.iter().any(|a| a == ALLOW_PUBLIC);
    // pktlab's habit: --help works everywhere, as -h does for pkt-gen.
    let help = args.iter().any(|a| a == "--help");
    let args: Vec<String> = args
        .iter()
        .filter(|a| *a != ALLOW_PUBLIC && *a != "--help")
        .cloned()
        .collect();
    let parsed = getopt(SPEC, &args).map_err(usage)?;
    let mut o = defaults(allow_public, help, parsed.operands);
    let mut seen = Seen::default();
    for Opt { name, value } in parsed.opts {
        apply(&mut o, &mut seen, name, value.unwrap_or_default(), online)?;
    }
    if o.help {
        return Ok(o);
    }
    let Some(iface) = seen.iface else {
        return Err(usage("missing ifname: give -i IFACE"));
    };
    o.port = port(&iface)?;
    o.iface_arg = iface;
    if let Some(min) = o.min_size {
        if min > o.size {
            return Err(usage(format!(
                "bad pktminsize {min} [16..{}]: the second -l must not exceed the first",
                o.size
            )));
        }
    }
    Ok(o)
}

/// The options before any is given: pkt-gen's defaults.
fn defaults(allow_public: bool, help: bool, operands: Vec<String>) -> Options {
    Options {
        function: Function::Rx,
        iface_arg: String::new(),
        port: Port::Null,
        count: 0,
        size: DEFAULT_SIZE,
        min_size: None,
        rate_per_thread: 0,
        threads: 1,
        affinity: None,
        cpus: 1,
        burst: None,
        wait_link: DEFAULT_WAIT_LINK,
        exit_when_idle: false,
        interval_ms: 1000,
        normalize: true,
        pps_stats: false,
        framing: false,
        random_src: false,
        random_dst: false,
        inet6: false,
        src: DEFAULT_SRC.to_string(),
        dst: DEFAULT_DST.to_string(),
        src_mac: None,
        dst_mac: DEFAULT_DST_MAC.to_string(),
        allow_public,
        help,
        ignored: Vec::new(),
        operands,
    }
}

/// What the options so far said that is kept apart from [`Options`].
#[derive(Default)]
struct Seen {
    /// `-i`.
    iface: Option<String>,
    /// How many `-l` were given.
    sizes: usize,
}

/// Applies option `-name` with its value `v` (empty for a flag).
fn apply(
    o: &mut Options,
    seen: &mut Seen,
    name: char,
    v: String,
    online: usize,
) -> Result<(), PktgenError> {
    match name {
        'h' => o.help = true,
        '4' => o.inet6 = false,
        '6' => o.inet6 = true,
        'N' => o.normalize = false,
        'W' => o.exit_when_idle = true,
        'A' => o.pps_stats = true,
        'B' => o.framing = true,
        'z' => o.random_src = true,
        'Z' => o.random_dst = true,
        // pktlab always computes the UDP checksum in software.
        'U' => {}
        'f' => o.function = function(&v)?,
        'i' => seen.iface = Some(v),
        'n' => o.count = number(name, &v, "a number of packets (0: no limit)")?,
        'l' => {
            let size = number(name, &v, "a frame size without FCS")?;
            if !(16..=u64::from(MAX_SIZE)).contains(&size) {
                return Err(usage(format!(
                    "invalid -l {v}: give a frame size without FCS from 16 to {MAX_SIZE}"
                )));
            }
            // pkt-gen: the first -l is the size, a second one the minimum.
            if seen.sizes == 0 {
                o.size = size as u16;
            } else {
                o.min_size = Some(size as u16);
            }
            seen.sizes += 1;
        }
        'R' => o.rate_per_thread = number(name, &v, "packets per second per thread")?,
        'p' => {
            let n = number(name, &v, "a number of threads")?;
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            pktlab_wire::check_threads(n).map_err(|e| usage(format!("invalid -p {v}: {e}")))?;
            o.threads = n;
        }
        'a' => o.affinity = Some(number(name, &v, "a CPU number")? as usize),
        'c' => {
            let n = number(name, &v, "a number of CPUs (0: all)")? as usize;
            if n > online {
                return Err(usage(format!(
                    "invalid -c {v}: {n} cpus is too high, have only {online} cpus"
                )));
            }
            o.cpus = n;
        }
        'b' => {
            let n = number(name, &v, "a burst size")? as usize;
            if !(1..=4096).contains(&n) {
                return Err(usage(format!("invalid -b {v}: give a burst of 1 to 4096")));
            }
            o.burst = Some(n);
        }
        'w' => o.wait_link = number(name, &v, "seconds to wait for the link")?,
        'T' => {
            let ms = number(name, &v, "a report interval in milliseconds")?;
            if ms < 10 {
                return Err(usage(format!(
                    "invalid -T {v}: give a report interval of at least 10 ms"
                )));
            }
            o.interval_ms = ms;
        }
        's' => o.src = v,
        'd' => o.dst = v,
        'S' => o.src_mac = Some(v),
        'D' => o.dst_mac = v,
        'P' => {
            return Err(usage(
                "-P (replaying a pcap file) is not supported by pktlab's pkt-gen",
            ))
        }
        // Netmap and FreeBSD specifics with no meaning here.
        'F' | 'M' | 'C' | 'H' | 'o' => o.ignored.push(format!("-{name} {v}")),
        'I' | 'r' | 'X' | 'v' => o.ignored.push(format!("-{name}")),
        other => unreachable!("option -{other} is in SPEC but not handled"),
    }
    Ok(())
}

/// `-f`: tx and rx; pkt-gen's other functions are refused.
fn function(name: &str) -> Result<Function, PktgenError> {
    match name {
        "tx" => Ok(Function::Tx),
        "rx" => Ok(Function::Rx),
        "ping" | "pong" | "txseq" | "rxseq" => Err(usage(format!(
            "-f {name} is not supported by pktlab's pkt-gen: use -f tx or -f rx"
        ))),
        other => Err(usage(format!(
            "unrecognised function '{other}': use -f tx or -f rx"
        ))),
    }
}

/// `-i`: `null`, or an interface with netmap's decorations taken off:
/// `netmap:` / `pcap:` prefixes, and the ring selectors (`-N` ring number,
/// `^`, `*`, `@conf`, `/flags`, `{`/`}` pipes). A trailing `-N` stays when an
/// interface of that whole name exists (Linux names may contain `-`).
pub fn port(arg: &str) -> Result<Port, PktgenError> {
    if arg == "null" {
        return Ok(Port::Null);
    }
    if arg.starts_with("vale") || arg.starts_with("tap") {
        return Err(usage(format!(
            "-i {arg}: VALE switches and tap devices are netmap-only; give a Linux interface"
        )));
    }
    let name = arg
        .strip_prefix("netmap:")
        .or_else(|| arg.strip_prefix("pcap:"))
        .unwrap_or(arg);
    let name = match name.find(['^', '*', '@', '/', '{', '}']) {
        Some(at) => &name[..at],
        None => name,
    };
    let name = match name.rsplit_once('-') {
        Some((base, ring))
            if !base.is_empty()
                && !ring.is_empty()
                && ring.bytes().all(|b| b.is_ascii_digit())
                && !iface_exists(name) =>
        {
            base
        }
        _ => name,
    };
    if name.is_empty() {
        return Err(usage(format!("-i {arg}: no interface name")));
    }
    Ok(Port::Iface(name.to_string()))
}

fn iface_exists(name: &str) -> bool {
    std::path::Path::new("/sys/class/net").join(name).exists()
}

/// A decimal number, or one line naming the option and what it wants.
fn number(name: char, value: &str, what: &str) -> Result<u64, PktgenError> {
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    match value.parse::<u64>() {
        Ok(n) if digits => Ok(n),
        _ => Err(usage(format!("invalid -{name} '{value}': give {what}"))),
    }
}

/// pkt-gen's usage, our words.
pub const USAGE: &str = "\
usage: pkt-gen -i IFACE [-f tx|rx] [options]   (pktlab's pkt-gen for Linux)
  -f tx|rx     send or receive (default rx)
  -i IFACE     interface; netmap: prefixes and ring suffixes are ignored; null drops
  -n N         packets in total, split over the threads (0: no limit)
  -l LEN       frame size without FCS (default 60); a second -l is the minimum
  -R PPS       rate of each thread in packets per second (0: as fast as possible)
  -p N         threads (default 1)
  -a CPU       pin thread i to CPU (CPU + i) mod -c
  -c N         CPUs for -a (default 1, 0: all)
  -b N         burst (default 512)
  -w SECS      wait for the link before starting (default 2)
  -W           receiver: exit after 1 s without traffic
  -T MS        report interval in milliseconds (default 1000)
  -N           raw numbers, no K/M/G prefixes
  -A           average and deviation of the rate over 15 reports
  -B           count 24 bytes of framing per packet in the bit rate
  -z / -Z      random source / destination among the ranges
  -4 / -6      IPv4 (default) / IPv6
  -s RANGE     source IP[:PORT][-IP[:PORT]] (default 10.0.0.1:1234)
  -d RANGE     destination, same syntax (default 10.1.0.1:1234)
  -S MAC       source MAC (default the interface's)
  -D MAC       destination MAC (default ff:ff:ff:ff:ff:ff)
  --allow-public  allow destinations outside the benchmark and private ranges
  -F -M -I -H -C -r -o -X -v are accepted and ignored (netmap specifics); -U is always on.
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn called_through_a_pkt_gen_link() {
        let argv = |words: &[&str]| {
            words
                .iter()
                .map(std::ffi::OsString::from)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            args_if_called_as_pkt_gen(argv(&["/usr/local/bin/pkt-gen", "-f", "tx"])),
            Some(vec!["-f".to_string(), "tx".to_string()])
        );
        assert_eq!(args_if_called_as_pkt_gen(argv(&["pkt-gen"])), Some(vec![]));
        assert_eq!(
            args_if_called_as_pkt_gen(argv(&["/usr/bin/pktlab", "gen"])),
            None
        );
        assert_eq!(args_if_called_as_pkt_gen(argv(&[])), None);
    }

    fn parse_line(line: &str) -> Result<Options, PktgenError> {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        parse(&args, 4)
    }

    fn ok(line: &str) -> Options {
        parse_line(line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn err(line: &str) -> String {
        match parse_line(line) {
            Ok(o) => panic!("{line} was accepted: {o:?}"),
            Err(e) => {
                assert!(e.is_usage(), "{line}: not a usage error: {e}");
                e.to_string()
            }
        }
    }

    #[test]
    fn pkt_gen_defaults() {
        let o = ok("-i lo");
        assert_eq!(o.function, Function::Rx);
        assert_eq!(o.port, Port::Iface("lo".into()));
        assert_eq!((o.count, o.size, o.min_size), (0, 60, None));
        assert_eq!((o.rate_per_thread, o.threads, o.cpus), (0, 1, 1));
        assert_eq!((o.affinity, o.burst, o.wait_link), (None, None, 2));
        assert_eq!(
            (o.interval_ms, o.normalize, o.exit_when_idle),
            (1000, true, false)
        );
        assert_eq!((o.src.as_str(), o.dst.as_str()), ("10.0.0.1", "10.1.0.1"));
        assert_eq!(o.dst_mac, "ff:ff:ff:ff:ff:ff");
        assert_eq!(o.src_mac, None);
        assert!(!o.pps_stats && !o.framing && !o.random_src && !o.random_dst && !o.inet6);
        assert!(!o.allow_public && o.ignored.is_empty());
        assert_eq!(o.size_mix(), "64");
    }

    #[test]
    fn every_option_with_its_meaning() {
        let o = ok(
            "-ftx -i netmap:eth0 -n 1000 -l 124 -R 500 -p 2 -a 1 -c 3 -b 64 -w 4 \
                    -W -T 250 -N -A -B -z -Z -6 -s [2001:2::1]:5 -d [2001:2::2] \
                    -S 02:00:00:00:00:01 -D 02:00:00:00:00:02 -U --allow-public",
        );
        assert_eq!(o.function, Function::Tx);
        assert_eq!(o.iface_arg, "netmap:eth0");
        assert_eq!(o.port, Port::Iface("eth0".into()));
        assert_eq!((o.count, o.size, o.rate_per_thread), (1000, 124, 500));
        assert_eq!(o.size_mix(), "128");
        assert_eq!((o.threads, o.affinity, o.cpus), (2, Some(1), 3));
        assert_eq!((o.burst, o.wait_link, o.interval_ms), (Some(64), 4, 250));
        assert!(o.exit_when_idle && !o.normalize && o.pps_stats && o.framing);
        assert!(o.random_src && o.random_dst && o.inet6 && o.allow_public);
        assert_eq!(
            (o.src.as_str(), o.dst.as_str()),
            ("[2001:2::1]:5", "[2001:2::2]")
        );
        assert_eq!(o.src_mac.as_deref(), Some("02:00:00:00:00:01"));
        assert_eq!(o.dst_mac, "02:00:00:00:00:02");
        // -a 1 -c 3: thread i on CPU (1 + i) mod 3.
        assert_eq!(o.thread_cpus(4), vec![1, 2]);
        // -4 after -6 wins, as in getopt order.
        assert!(!ok("-i lo -6 -4").inet6);
    }

    #[test]
    fn affinity_like_pkt_gen() {
        // pkt-gen's -c defaults to 1: every thread on (a + i) mod 1 = 0.
        assert_eq!(ok("-i lo -p 3 -a 2").thread_cpus(4), vec![0, 0, 0]);
        // -c 0 is every online CPU.
        assert_eq!(ok("-i lo -p 3 -a 2 -c 0").thread_cpus(4), vec![2, 3, 0]);
        assert_eq!(ok("-i lo -p 3").thread_cpus(4), Vec::<usize>::new());
    }

    #[test]
    fn help_both_ways() {
        assert!(ok("-h").help);
        assert!(ok("--help").help);
        assert!(ok("-i lo --help").help);
        assert!(!ok("-i lo").help);
    }

    #[test]
    fn second_l_is_the_minimum() {
        let o = ok("-i lo -l 62 -l 60");
        assert_eq!((o.size, o.min_size), (62, Some(60)));
        assert_eq!(o.size_mix(), "64,65,66");
        assert!(err("-i lo -l 60 -l 62").starts_with("bad pktminsize 62"));
    }

    #[test]
    fn interface_decorations() {
        assert_eq!(port("netmap:ix0-3").unwrap(), Port::Iface("ix0".into()));
        assert_eq!(port("netmap:ix0^").unwrap(), Port::Iface("ix0".into()));
        assert_eq!(port("netmap:ix0*").unwrap(), Port::Iface("ix0".into()));
        assert_eq!(
            port("netmap:ix0@conf:rings=4").unwrap(),
            Port::Iface("ix0".into())
        );
        assert_eq!(port("netmap:ix0/R").unwrap(), Port::Iface("ix0".into()));
        assert_eq!(port("pcap:em0").unwrap(), Port::Iface("em0".into()));
        assert_eq!(port("igb2").unwrap(), Port::Iface("igb2".into()));
        assert_eq!(port("veth-a").unwrap(), Port::Iface("veth-a".into()));
        assert_eq!(port("null").unwrap(), Port::Null);
        assert!(port("vale0:1").is_err());
        assert!(port("netmap:").is_err());
    }

    #[test]
    fn netmap_specifics_are_ignored_in_one_list() {
        let o = ok("-i lo -F 2 -M 1500 -I -H 12 -C tx=2 -r -o 16 -X -v");
        assert_eq!(
            o.ignored,
            ["-F 2", "-M 1500", "-I", "-H 12", "-C tx=2", "-r", "-o 16", "-X", "-v"]
        );
    }

    #[test]
    fn bad_values_are_one_line_usage_errors() {
        for (line, start) in [
            ("-i lo -n x", "invalid -n 'x'"),
            ("-i lo -n -5", "invalid -n '-5'"),
            ("-i lo -l 15", "invalid -l 15"),
            ("-i lo -l 9015", "invalid -l 9015"),
            ("-i lo -R 1e6", "invalid -R '1e6'"),
            ("-i lo -p 0", "invalid -p 0"),
            ("-i lo -p 1025", "invalid -p 1025"),
            (
                "-i lo -c 5",
                "invalid -c 5: 5 cpus is too high, have only 4 cpus",
            ),
            ("-i lo -b 0", "invalid -b 0"),
            ("-i lo -b 4097", "invalid -b 4097"),
            ("-i lo -T 9", "invalid -T 9"),
            ("-i lo -w 2s", "invalid -w '2s'"),
            ("-i lo -a x", "invalid -a 'x'"),
            ("-i lo -f ping", "-f ping is not supported"),
            ("-i lo -f bogus", "unrecognised function 'bogus'"),
            (
                "-i lo -P x.pcap",
                "-P (replaying a pcap file) is not supported",
            ),
            ("-i lo -q", "unknown option -q"),
            ("-i lo -n", "option -n needs a value"),
            ("-f tx", "missing ifname"),
        ] {
            let e = err(line);
            assert!(e.starts_with(start), "{line}: {e}");
            assert!(!e.contains('\n'), "{line}: {e}");
        }
    }
}
