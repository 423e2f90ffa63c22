//! The campaign and its method seam on a built-in lab of its own: a
//! method that runs two trials at rates it chooses records each in a file
//! of its own as it finishes, hands its results to the sinks after the run
//! and at the end, and a resumed campaign runs nothing it finished.

use std::cell::RefCell;

use pktlab_campaign::campaign::{Campaign, Event, Folder, Spec};
use pktlab_campaign::file::CampaignFile;
use pktlab_campaign::folder::ResultsDir;
use pktlab_campaign::method::{Method, RunContext, RunId};
use pktlab_campaign::plan::Plan;
use pktlab_campaign::sink::{Finished, Sink, Stage};
use pktlab_campaign::CampaignError;
use pktlab_engine::StopSignal;
use pktlab_lab::{netns, LabSpec};
use pktlab_trial::trial::TrialEvent;

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

const RATES: [f64; 2] = [5_000.0, 10_000.0];
const FILE: &str = "two-rates.jsonl";

/// One trial's line in the method's own file.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Line {
    run: String,
    rate: f64,
    sent: u64,
    received: u64,
}

/// Two trials, at 5 and then 10 kpps, each recorded as it finishes.
#[derive(Default)]
struct TwoRates {
    lines: Vec<Line>,
}

impl Method for TwoRates {
    type Run = Vec<Line>;
    type Results = Vec<Line>;

    fn name(&self) -> &'static str {
        "two-rates"
    }

    fn open(&mut self, _: &Plan, folder: &ResultsDir, created: bool) -> Result<(), CampaignError> {
        if !created {
            self.lines = folder.read_lines(FILE)?;
        }
        Ok(())
    }

    fn is_finished(&self, run: &RunId<'_>) -> bool {
        self.lines.iter().filter(|l| l.run == run.label()).count() == RATES.len()
    }

    fn run(
        &mut self,
        run: &RunId<'_>,
        cx: RunContext<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<&Vec<Line>>, CampaignError> {
        for rate in RATES {
            let t = cx.trials.run(run.traffic, Some(rate), on_event)?;
            let line = Line {
                run: run.label(),
                rate,
                sent: t.tx.packets,
                received: t.rx.packets - t.rx.foreign,
            };
            cx.folder.append_line(FILE, &line)?;
            self.lines.push(line);
        }
        (cx.lab_whole)()?;
        Ok(Some(&self.lines))
    }

    fn results(&self) -> &Vec<Line> {
        &self.lines
    }
}

/// A sink that keeps what it was given, and when.
#[derive(Default)]
struct Kept(RefCell<Vec<(Stage, usize)>>);

impl Sink<Vec<Line>> for Kept {
    fn take(&self, f: &Finished<'_, Vec<Line>>) -> Result<(), CampaignError> {
        assert_eq!(f.plan.name, "m");
        assert!(f.env.virtual_lab);
        self.0.borrow_mut().push((f.stage, f.results.len()));
        Ok(())
    }
}

/// A short name for each event, in order.
fn names(events: &[String]) -> Vec<&str> {
    events.iter().map(String::as_str).collect()
}

#[test]
fn a_campaign_runs_a_method_and_hands_its_results_to_its_sinks() {
    let prefix = format!("m{}", std::process::id());
    let _cleanup = Cleanup(prefix.clone());
    let text = format!(
        "name = \"m\"\n[lab]\nprefix = \"{prefix}\"\n[run]\niterations = 1\nduration = \"3s\"\ndrop_trace = \"off\"\n"
    );
    let plan = Plan::from_file(&CampaignFile::parse(&text).unwrap(), 2).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let spec = Spec {
        plan,
        folder: Folder::New(Some(out.clone())),
        saved_text: Some(text.clone()),
        drop_trace: None,
    };
    let mut method = TwoRates::default();
    let campaign = Campaign::open(spec.clone(), &mut method, |_| {}).unwrap();
    let kept = Kept::default();
    let mut events = Vec::new();
    let outcome = campaign
        .run(&mut method, &[&kept], &StopSignal::new(), |e| {
            events.push(match e {
                Event::Applying { .. } => "apply".into(),
                Event::Reverting { .. } => "revert".into(),
                Event::RunStarting(r) => format!("start {}/{}", r.index, r.of),
                Event::Trial(TrialEvent::Started) => "trial".into(),
                Event::RunDone { result, .. } => format!("done {}", result.len()),
                _ => return,
            })
        })
        .unwrap();
    assert_eq!(
        (outcome.ran, outcome.already, outcome.interrupted),
        (1, 0, false)
    );
    assert_eq!(
        names(&events),
        ["apply", "start 1/1", "trial", "trial", "done 2", "revert"]
    );
    assert_eq!(*kept.0.borrow(), [(Stage::AfterRun, 2), (Stage::End, 2)]);
    // Each trial is in the method's file, with the rate it asked for, and
    // the frames it sent arrived (5 and 10 kpps are far below what veth
    // forwards; a loaded machine may still lose a few).
    let lines: Vec<Line> = campaign.folder().read_lines(FILE).unwrap();
    assert_eq!(lines, method.lines);
    for (line, rate) in lines.iter().zip(RATES) {
        assert_eq!(line.rate, rate);
        assert!(line.received <= line.sent, "{line:?}");
        assert!(line.received as f64 >= line.sent as f64 * 0.99, "{line:?}");
        // 3 s at the rate, give or take the pacer's first and last frame.
        let want = rate * 3.0;
        assert!((line.sent as f64 - want).abs() < want * 0.02, "{line:?}");
    }
    // The campaign's own files: the campaign as saved, the environment;
    // a method of its own writes no run file, and no exporter was given.
    assert_eq!(
        std::fs::read_to_string(out.join("campaign.toml")).unwrap(),
        text
    );
    assert!(out.join("env.json").is_file());
    assert!(!out.join("runs").exists());
    assert!(!out.join("ministat.txt").exists());
    drop(campaign);

    // Resumed: the method reads its file back and runs nothing.
    let mut again = TwoRates::default();
    let resumed = Spec {
        folder: Folder::Resume(out.clone()),
        saved_text: None,
        ..spec
    };
    let campaign = Campaign::open(resumed, &mut again, |_| {}).unwrap();
    let mut events = Vec::new();
    let outcome = campaign
        .run(&mut again, &[&kept], &StopSignal::new(), |e| {
            if let Event::Resuming { finished, planned } = e {
                events.push(format!("resuming {finished} of {planned}"));
            }
        })
        .unwrap();
    assert_eq!((outcome.ran, outcome.already), (0, 1));
    assert_eq!(names(&events), ["resuming 1 of 1"]);
    assert_eq!(again.lines, lines);
    drop(campaign);
    pktlab_lab::BuiltinLab::new(LabSpec {
        prefix,
        queues: 1,
        cpus: None,
    })
    .unwrap()
    .down()
    .unwrap();
}
