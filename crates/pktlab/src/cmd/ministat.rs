// TEMPORARY placeholder while the workspace is assembled; replaced before any commit that claims ministat works.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("ministat is not built yet")
}
