//! The speed limit of XDP live frames on an interface, for `bench/xdpgen`:
//! the `xdp_probe` program redirects the 64-byte template as it is (every
//! frame the same, nothing counted), from one pinned thread per CPU, for a
//! number of seconds. Run it inside the interface's namespace, as root:
//!
//!   xdpgen_probe IFACE DST_MAC SECONDS CPU[,CPU...]
//!
//! Build: `cargo build --release -p pktlab-io --example xdpgen_probe`.

use std::time::{Duration, Instant};

use pktlab_io::xdpgen::{Program, XdpGen, XdpGenConfig};
use pktlab_wire::{Family, FlowOrder, FlowSet, FrameSpec, MacAddr};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: xdpgen_probe IFACE DST_MAC SECONDS CPU[,CPU...]");
        std::process::exit(2);
    }
    let usage = |what: &str| -> ! {
        eprintln!("xdpgen_probe: invalid {what}");
        std::process::exit(2)
    };
    let iface = &args[1];
    let dst: MacAddr = args[2].parse().unwrap_or_else(|_| usage("destination MAC"));
    let secs: f64 = args[3].parse().unwrap_or_else(|_| usage("duration"));
    let cpus: Vec<usize> = args[4]
        .split(',')
        .map(|c| c.parse().unwrap_or_else(|_| usage("CPU list")))
        .collect();
    let src = pktlab_io::iface::lookup(iface).unwrap_or_else(|e| {
        eprintln!("xdpgen_probe: {e}");
        std::process::exit(1)
    });
    let spec = FrameSpec {
        src_mac: MacAddr(src.mac),
        dst_mac: dst,
        vlan: None,
        ttl: 64,
        flows: FlowSet::lab(Family::Inet4),
        order: FlowOrder::Sequential,
        sizes: "64".parse().expect("a size"),
        ports: pktlab_wire::PortMode::Ranges,
    };
    let cfg = XdpGenConfig {
        cpus: cpus.clone(),
        program: Program::Probe,
        ..Default::default()
    };
    let gen = XdpGen::open(&spec, iface, &cfg).unwrap_or_else(|e| {
        eprintln!("xdpgen_probe: {e}");
        std::process::exit(1)
    });
    let end = Instant::now() + Duration::from_secs_f64(secs);
    std::thread::scope(|s| {
        for &cpu in &cpus {
            let gen = &gen;
            s.spawn(move || {
                // SAFETY: a zeroed cpu_set_t is a valid empty set.
                unsafe {
                    let mut set: libc::cpu_set_t = std::mem::zeroed();
                    libc::CPU_SET(cpu, &mut set);
                    libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
                }
                while Instant::now() < end {
                    if let Err(e) = gen.run(16384) {
                        eprintln!("xdpgen_probe: {e}");
                        std::process::exit(1);
                    }
                }
            });
        }
    });
}
