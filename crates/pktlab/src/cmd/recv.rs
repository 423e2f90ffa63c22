// TEMPORARY placeholder while the workspace is assembled; replaced before any commit that claims recv works.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("recv is not built yet")
}
