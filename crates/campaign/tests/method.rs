//! The method seam on a built-in lab of its own: a method that runs two
//! trials at rates it chooses has each one recorded under `trials/` as it
//! finishes, and the trial it returns becomes the run file.

use pktlab_campaign::file::CampaignFile;
use pktlab_campaign::method::{Method, Recorder, TrialDone};
use pktlab_campaign::plan::Campaign;
use pktlab_campaign::records::{RunFigures, RunHeader, Typed};
use pktlab_campaign::results::{ResultsDir, TRIALS_DIR};
use pktlab_campaign::runner::{run_campaign, CampaignEvent};
use pktlab_campaign::CampaignError;
use pktlab_engine::StopSignal;
use pktlab_lab::{netns, LabSpec};
use pktlab_trial::target::Target;
use pktlab_trial::traffic::Traffic;
use pktlab_trial::trial::{TrialEvent, TrialResult, Trials};

/// Deletes the lab's namespaces however the test ends.
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let p = format!("{}-", self.0);
        for n in netns::list().unwrap_or_default() {
            if n.starts_with(&p) {
                let _ = std::process::Command::new("ip")
                    .args(["netns", "del", &n])
                    .status();
            }
        }
    }
}

/// Two trials, at 5 and then 10 kpps; the second values the run.
struct TwoRates;

const RATES: [f64; 2] = [5_000.0, 10_000.0];

impl Method for TwoRates {
    fn name(&self) -> &'static str {
        "two-rates"
    }

    fn run(
        &self,
        trials: &Trials<'_>,
        traffic: &Traffic,
        record: &mut Recorder<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<TrialResult>, CampaignError> {
        let mut last = None;
        for (i, rate) in RATES.into_iter().enumerate() {
            let t = trials.run(traffic, Some(rate), on_event)?;
            record(TrialDone {
                index: i + 1,
                result: &t,
            })?;
            last = Some(t);
        }
        Ok(last)
    }
}

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn a_two_trial_method_records_each_trial() {
    let prefix = format!("m{}", std::process::id());
    let _cleanup = Cleanup(prefix.clone());
    let text = format!(
        "name = \"m\"\n[lab]\nprefix = \"{prefix}\"\n[run]\niterations = 1\nduration = \"3s\"\n"
    );
    let campaign = Campaign::from_file(&CampaignFile::parse(&text).unwrap(), 2).unwrap();
    // The campaign's own lab: its CPU plan, with GRO on d0 for its
    // default generator (XDP live frames).
    let (target, _) = Target::builtin(campaign.lab.builtin_spec().unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = ResultsDir::create(&tmp.path().join("out")).unwrap();
    let mut started = 0;
    let outcome = run_campaign(
        &campaign,
        &target,
        &dir,
        &TwoRates,
        &[],
        &StopSignal::new(),
        &pktlab_loss::tracer::Tracer::off(),
        |e| {
            if let CampaignEvent::Trial(TrialEvent::Started) = e {
                started += 1;
            }
        },
    )
    .unwrap();
    assert_eq!((outcome.ran, outcome.interrupted), (1, false));
    assert_eq!(started, 2);

    // Each trial has its file, with the rate the method asked for, and
    // every frame it sent arrived (5 and 10 kpps are far below what veth
    // forwards).
    let trials = dir.path.join(TRIALS_DIR);
    let mut names: Vec<String> = std::fs::read_dir(&trials)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["forwarding.inet4.1.1.jsonl", "forwarding.inet4.1.2.jsonl"]
    );
    for (name, rate) in names.iter().zip(RATES) {
        let l = lines(&trials.join(name));
        let h: Typed<RunHeader> = serde_json::from_str(&l[0]).unwrap();
        assert_eq!((h.record.io.name(), h.record.iteration), ("xdp", 1));
        assert_eq!(h.record.generator.as_deref(), Some("xdp (live frames)"));
        let r: Typed<RunFigures> = serde_json::from_str(l.last().unwrap()).unwrap();
        assert_eq!(r.record.requested_pps, Some(rate), "{name}");
        assert_eq!(r.record.lost, 0, "{name}");
        assert!(
            r.record.forwarded_pps > 0.0 && r.record.forwarded_pps < rate * 1.02,
            "{name}: {}",
            r.record.forwarded_pps
        );
        let v: serde_json::Value = serde_json::from_str(l.last().unwrap()).unwrap();
        assert_eq!(v["tx"]["packets"], v["rx"]["packets"], "{name}");
    }
    // The run file is the trial the method returned: the second.
    let figures = |l: &[String]| {
        let mut r: Typed<RunFigures> = serde_json::from_str(l.last().unwrap()).unwrap();
        r.record.finished_at = None; // Stamped when each file is written.
        r.record
    };
    let run = figures(&lines(&dir.run_file("forwarding", "inet4", 1)));
    assert_eq!(run, figures(&lines(&trials.join(&names[1]))));
    assert_eq!(run.requested_pps, Some(RATES[1]));
    let runs = dir.runs().unwrap();
    assert_eq!(runs.len(), 1);
    // No exporter was given: the folder holds the data only.
    assert!(!dir.path.join("ministat.txt").exists());
    assert!(dir.path.join("forwarding.inet4.pps").exists());
    pktlab_lab::BuiltinLab::new(LabSpec {
        prefix,
        queues: 1,
        cpus: None,
    })
    .unwrap()
    .down()
    .unwrap();
}
