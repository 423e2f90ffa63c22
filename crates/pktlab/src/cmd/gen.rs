// TEMPORARY placeholder while the workspace is assembled; replaced before any commit that claims gen works.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("gen is not built yet")
}
