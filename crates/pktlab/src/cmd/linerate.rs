//! `pktlab linerate`: Ethernet line rates, or a measured rate against one.

use pktlab_campaign::plan::RFC2544_SIZES;
use pktlab_report::linerate as out;
use pktlab_wire::size::SizeMix;
use pktlab_wire::units::{self, Rate};

use crate::cmd::common::print_json;
use crate::error::usage;

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
    let speed = units::parse_link_speed(&args.speed)?;
    let link_bps = if args.fdx { speed * 2.0 } else { speed };
    let mixes: Vec<SizeMix> = match &args.size {
        Some(text) => vec![text.parse()?],
        None => RFC2544_SIZES
            .iter()
            .map(|&s| SizeMix::single(s).expect("RFC 2544 sizes are valid"))
            .chain([SizeMix::imix()])
            .collect(),
    };
    let lines: Vec<out::LineRate> = mixes.iter().map(|m| out::line_rate(link_bps, m)).collect();
    let Some(text) = &args.pps else {
        if args.json {
            for l in &lines {
                print_json(&serde_json::json!({"type": "line_rate", "fdx": args.fdx, "line": l}));
            }
        } else {
            print!("{}\n{}", out::title(link_bps, args.fdx), out::table(&lines));
        }
        return Ok(());
    };
    let pps = match units::parse_rate(text)? {
        Rate::Pps(pps) => pps,
        _ => {
            return Err(usage(format!(
                "invalid --pps '{text}': give frames per second, such as 1.2M or 850kpps"
            )))
        }
    };
    if args.size.is_none() {
        return Err(usage(
            "--pps needs the frame size or mix of the measured rate (-l 64, -l imix, ...)",
        ));
    }
    let rate = out::at_rate(link_bps, &mixes[0], pps);
    if args.json {
        print_json(&serde_json::json!({
            "type": "measured_rate",
            "fdx": args.fdx,
            "rate": rate,
            "line": lines[0],
            "line_percent": pps / lines[0].pps * 100.0,
        }));
    } else {
        print!(
            "{}\n{}",
            out::title(link_bps, args.fdx),
            out::measured(&rate, &lines[0])
        );
    }
    Ok(())
}
