//! A campaign as the command line gives it: a campaign file, or flags
//! alone, with flags over the file's settings; or the campaign saved in a
//! results folder to resume. Made into the file to run and the text to
//! save as `campaign.toml`.

use std::path::{Path, PathBuf};

use pktlab_lab::dut::BUILTIN_NAMES;

use crate::file::{CampaignFile, ConfigSection, SweepSection, SweepValue, TrafficSection};
use crate::folder::CAMPAIGN_FILE;
use crate::plan::RFC2544_SIZES;
use crate::CampaignError;

/// The command line's say over a campaign. A setting given (Some) wins
/// over the campaign file's.
#[derive(Clone, Debug, Default)]
pub struct Flags {
    /// `-f`: the campaign file.
    pub file: Option<PathBuf>,
    /// `--resume`: the results folder whose campaign to carry on.
    pub resume: Option<PathBuf>,
    pub name: Option<String>,
    pub configs: Option<String>,
    pub iterations: Option<usize>,
    pub duration: Option<String>,
    pub warmup: Option<String>,
    pub tail: Option<String>,
    pub order: Option<String>,
    pub seed: Option<u64>,
    pub traffic: Option<String>,
    pub size: Option<String>,
    pub sizes: Option<String>,
    pub rate: Option<String>,
    pub link_speed: Option<String>,
    pub threads: Option<usize>,
    pub prefix: Option<String>,
    pub dut_cpus: Option<String>,
    pub io: Option<String>,
    pub drop_trace: Option<String>,
    /// `--sweep KNOB=V1,V2,...`: replaces the campaign file's sweeps.
    pub sweep: Option<String>,
    /// `--bidir`: every traffic both ways.
    pub bidir: bool,
    /// The command as typed (`pktlab bench -N 3`), for the comment at the
    /// top of a campaign saved from flags.
    pub command_line: String,
    /// The subcommand (`bench`, `rfc2544`, `rfc9693`): a campaign of flags
    /// alone is named after it unless `--name` says otherwise.
    pub command: String,
}

fn usage(msg: String) -> CampaignError {
    CampaignError::Usage(msg)
}

impl Flags {
    /// The campaign to run, and the text to save as `campaign.toml` (none
    /// on resume: it is there already).
    pub fn campaign_file(&self) -> Result<(CampaignFile, Option<String>), CampaignError> {
        if let Some(dir) = &self.resume {
            return Ok((self.saved_campaign(dir)?, None));
        }
        let (mut file, original) = match &self.file {
            Some(path) => read_campaign_file(path)?,
            None => (self.flags_alone()?, None),
        };
        let overridden = self.apply(&mut file);
        let text = match (&self.file, original) {
            (Some(_), Some(text)) if overridden.is_empty() => text,
            (Some(path), None) if overridden.is_empty() => format!(
                "# {} with [lab] ssh_config made absolute\n{}",
                path.display(),
                file.to_toml()
            ),
            (Some(path), _) => format!(
                "# {} with {}\n{}",
                path.display(),
                overridden.join(" "),
                file.to_toml()
            ),
            (None, _) => format!("# {}\n{}", self.command_line, file.to_toml()),
        };
        Ok((file, Some(text)))
    }

    /// The campaign saved in `dir`; no flag may reshape it.
    fn saved_campaign(&self, dir: &Path) -> Result<CampaignFile, CampaignError> {
        let shaping = [
            ("--name", self.name.is_some()),
            ("--configs", self.configs.is_some()),
            ("-N", self.iterations.is_some()),
            ("--duration", self.duration.is_some()),
            ("--warmup", self.warmup.is_some()),
            ("--tail", self.tail.is_some()),
            ("--order", self.order.is_some()),
            ("--seed", self.seed.is_some()),
            ("--traffic", self.traffic.is_some()),
            ("--size", self.size.is_some()),
            ("--sizes", self.sizes.is_some()),
            ("--rate", self.rate.is_some()),
            ("--link-speed", self.link_speed.is_some()),
            ("--threads", self.threads.is_some()),
            ("--prefix", self.prefix.is_some()),
            ("--dut-cpus", self.dut_cpus.is_some()),
            ("--io", self.io.is_some()),
            ("--sweep", self.sweep.is_some()),
            ("--bidir", self.bidir),
        ];
        if let Some((flag, _)) = shaping.iter().find(|(_, set)| *set) {
            return Err(usage(format!(
                "{flag} cannot be used with --resume: the campaign is the one saved in {}",
                dir.display()
            )));
        }
        let path = dir.join(CAMPAIGN_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            usage(format!(
                "cannot resume {}: {} ({})",
                dir.display(),
                pktlab_io::os_message(&e),
                path.display()
            ))
        })?;
        CampaignFile::parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))
    }

    /// The flags' settings written into `file`; says each one
    /// (`--duration 3s`).
    fn apply(&self, file: &mut CampaignFile) -> Vec<String> {
        let mut overridden = Vec::new();
        let mut set = |flag: &str, value: &Option<String>, slot: &mut Option<String>| {
            if let Some(v) = value {
                *slot = Some(v.clone());
                overridden.push(format!("{flag} {v}"));
            }
        };
        set("--name", &self.name, &mut file.name);
        set("--duration", &self.duration, &mut file.run.duration);
        set("--warmup", &self.warmup, &mut file.run.warmup);
        set("--tail", &self.tail, &mut file.run.tail);
        set("--order", &self.order, &mut file.run.order);
        set("--link-speed", &self.link_speed, &mut file.lab.link_speed);
        set("--prefix", &self.prefix, &mut file.lab.prefix);
        set("--dut-cpus", &self.dut_cpus, &mut file.lab.dut_cpus);
        set("--io", &self.io, &mut file.run.io);
        // Saved with the campaign, so that --resume traces as the run began.
        set("--drop-trace", &self.drop_trace, &mut file.run.drop_trace);
        if let Some(n) = self.iterations {
            file.run.iterations = Some(n);
            overridden.push(format!("-N {n}"));
        }
        if let Some(s) = self.seed {
            file.run.seed = Some(s);
            overridden.push(format!("--seed {s}"));
        }
        if let Some(text) = &self.sweep {
            file.sweep = vec![sweep_section(text)];
            overridden.push(format!("--sweep {text}"));
        }
        if self.bidir {
            if file.traffic.is_empty() {
                // The default traffic, written out to be sent both ways.
                file.traffic.push(TrafficSection {
                    name: "inet4".into(),
                    ..TrafficSection::default()
                });
            }
            for t in &mut file.traffic {
                t.direction = Some("both".into());
            }
            overridden.push("--bidir".into());
        }
        overridden
    }

    /// The campaign the flags alone describe.
    fn flags_alone(&self) -> Result<CampaignFile, CampaignError> {
        let mut file = CampaignFile {
            name: (!self.command.is_empty()).then(|| self.command.clone()),
            ..CampaignFile::default()
        };
        let sizes = self.size_list()?;
        for name in self.traffic.as_deref().unwrap_or("inet4").split(',') {
            let name = name.trim();
            if name != "inet4" && name != "inet6" {
                return Err(usage(format!(
                    "unknown traffic profile '{name}': use inet4, inet6 or inet4,inet6 (other profiles go in a campaign file)"
                )));
            }
            file.traffic.push(TrafficSection {
                name: name.to_string(),
                size: self.size.clone(),
                sizes: sizes.clone(),
                rate: self.rate.clone(),
                threads: self.threads,
                ..TrafficSection::default()
            });
        }
        if let Some(list) = &self.configs {
            let names: Vec<&str> = if list.trim() == "all" {
                BUILTIN_NAMES.to_vec()
            } else {
                list.split(',').map(str::trim).collect()
            };
            for name in names {
                file.config.push(ConfigSection {
                    name: name.to_string(),
                    ..ConfigSection::default()
                });
            }
        }
        Ok(file)
    }

    /// `--sizes 64,512,1518` or `rfc2544`.
    fn size_list(&self) -> Result<Option<Vec<u16>>, CampaignError> {
        Ok(match self.sizes.as_deref() {
            None => None,
            Some("rfc2544") => Some(RFC2544_SIZES.to_vec()),
            Some(list) => Some(
                list.split(',')
                    .map(|s| {
                        s.trim().parse::<u16>().map_err(|_| {
                            usage(format!(
                                "invalid size '{s}' in --sizes: give frame sizes like 64,512,1518, or rfc2544"
                            ))
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

/// `--sweep KNOB=V1,V2,...` as a `[[sweep]]`; the plan checks the knob and
/// the values (`pktlab_lab::sweep`), so a bad one reads the same from a
/// flag and from a file.
fn sweep_section(text: &str) -> SweepSection {
    let (knob, values) = text.split_once('=').unwrap_or((text, ""));
    SweepSection {
        knob: Some(knob.trim().to_string()),
        values: values
            .split(',')
            .map(|v| match v.trim().parse::<u64>() {
                Ok(n) => SweepValue::Number(n),
                Err(_) => SweepValue::Word(v.trim().to_string()),
            })
            .collect(),
        ..SweepSection::default()
    }
}

/// A campaign file and its text; None for the text when its `[lab]
/// ssh_config` was made absolute (the text is then printed again).
fn read_campaign_file(path: &Path) -> Result<(CampaignFile, Option<String>), CampaignError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        usage(format!(
            "cannot read campaign file {}: {}",
            path.display(),
            pktlab_io::os_message(&e)
        ))
    })?;
    let mut file =
        CampaignFile::parse(&text).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    // Saved with the campaign and read again on --resume from elsewhere:
    // the path is made absolute now.
    match resolve_ssh_config(&mut file, path)? {
        true => Ok((file, None)),
        false => Ok((file, Some(text))),
    }
}

/// Makes `[lab] ssh_config` absolute, against the campaign file's folder;
/// true when it changed. A missing file is a usage error.
pub fn resolve_ssh_config(file: &mut CampaignFile, campaign: &Path) -> Result<bool, CampaignError> {
    let Some(cfg) = file.lab.ssh_config.clone() else {
        return Ok(false);
    };
    let base = campaign.parent().unwrap_or(Path::new("."));
    let joined = base.join(&cfg);
    let abs = std::fs::canonicalize(&joined).map_err(|e| {
        usage(format!(
            "[lab] ssh_config {}: {}",
            joined.display(),
            pktlab_io::os_message(&e)
        ))
    })?;
    let abs = abs.display().to_string();
    file.lab.ssh_config = Some(abs.clone());
    Ok(abs != cfg)
}

/// A campaign file for `pktlab lab check`: read, its ssh configuration
/// made absolute.
pub fn campaign_file_at(path: &Path) -> Result<CampaignFile, CampaignError> {
    read_campaign_file(path).map(|(file, _)| file)
}
