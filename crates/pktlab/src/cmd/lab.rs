// TEMPORARY placeholder while the workspace is assembled; replaced before any commit that claims lab works.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("lab is not built yet")
}
