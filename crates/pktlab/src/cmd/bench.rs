// TEMPORARY placeholder while the workspace is assembled; replaced before any commit that claims bench works.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("bench is not built yet")
}
