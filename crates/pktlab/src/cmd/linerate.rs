//! `pktlab linerate`: Ethernet line rates, or a measured rate against one.

use pktlab_report::linerate as out;

use crate::cmd::common;

/// Line rates of a link: frames per second for each RFC 2544 frame size
/// and Simple IMIX, with L1 (on the wire), L2 (frames with FCS) and IP bits
/// per second. With --pps, convert a measured rate of -l frames instead.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Link speed: 1G, 10G, 25Gbps, 100M, ...
    #[arg(value_name = "SPEED")]
    pub speed: String,
    /// Full duplex: count both directions (doubles every rate)
    #[arg(long = "fdx")]
    pub fdx: bool,
    /// A measured rate in frames per second (1.2M, 850k, ...) to convert
    #[arg(long = "pps", value_name = "RATE")]
    pub pps: Option<String>,
    /// Frame size or mix, as for gen -l [default: the RFC 2544 sizes and imix]
    #[arg(short = 'l', long = "size", value_name = "SIZE")]
    pub size: Option<String>,
    /// One JSON object per line instead of text
    #[arg(long = "json")]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let text = out::command_text(
        &args.speed,
        args.fdx,
        args.size.as_deref(),
        args.pps.as_deref(),
        args.json,
    )?;
    common::write_stdout(&text)
}
