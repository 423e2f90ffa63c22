// TEMPORARY placeholder while the workspace is assembled; replaced before any commit that claims pktgen_log works.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("pktgen_log is not built yet")
}
