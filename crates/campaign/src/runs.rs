//! The fixed-rate method (BSDRP's bench-lab): each run is one trial at its
//! traffic profile's own rate, whose value is the run's. Its files: one
//! run file per finished run (`runs/`, [`crate::folder`]), one `.pps` file
//! per configuration and traffic profile (BSDRP's format), and
//! `summary.json` ([`CampaignSummary`]).

use pktlab_trial::trial::TrialEvent;

use crate::folder::{unix_now, ResultsDir};
use crate::method::{Method, RunContext, RunId};
use crate::plan::Plan;
use crate::records::{RunHeader, RunRecord, RunResult};
use crate::summary::{pps_name, pps_text, CampaignSummary};
use crate::CampaignError;

/// A fixed-rate campaign's results: every finished run, and what they add
/// up to.
#[derive(Clone, Debug, PartialEq)]
pub struct Runs {
    /// Sorted by configuration, traffic and iteration.
    pub records: Vec<RunRecord>,
    pub summary: CampaignSummary,
}

impl Runs {
    /// `records` summed up for `plan`.
    pub fn of(plan: &Plan, mut records: Vec<RunRecord>) -> Runs {
        records.sort_by_key(|r| run_order(&r.header));
        Runs {
            summary: CampaignSummary::new(plan, &records),
            records,
        }
    }

    /// The finished runs of folder `dir`.
    pub fn read(plan: &Plan, dir: &ResultsDir) -> Result<Runs, CampaignError> {
        Ok(Runs::of(plan, dir.runs()?))
    }

    /// Writes the `.pps` file of every cell with a finished run, and
    /// `summary.json`.
    pub fn write_summaries(&self, dir: &ResultsDir) -> Result<(), CampaignError> {
        for cell in self.summary.cells.iter().filter(|c| !c.values.is_empty()) {
            dir.write(
                &pps_name(&cell.config, &cell.traffic),
                pps_text(&cell.values).as_bytes(),
            )?;
        }
        self.summary.write(dir)
    }

    fn add(&mut self, plan: &Plan, record: RunRecord) {
        let mut records = std::mem::take(&mut self.records);
        records.push(record);
        *self = Runs::of(plan, records);
    }
}

fn run_order(h: &RunHeader) -> (String, String, usize) {
    (h.config.clone(), h.traffic.clone(), h.iteration)
}

/// One trial at the traffic profile's own rate per run.
#[derive(Clone, Debug, Default)]
pub struct FixedRate {
    runs: Option<Runs>,
}

impl FixedRate {
    pub fn new() -> FixedRate {
        FixedRate::default()
    }

    fn runs(&self) -> &Runs {
        self.runs
            .as_ref()
            .expect("the campaign opens its method first")
    }
}

impl Method for FixedRate {
    type Run = RunRecord;
    type Results = Runs;

    fn name(&self) -> &'static str {
        "fixed-rate"
    }

    fn open(&mut self, plan: &Plan, folder: &ResultsDir, _: bool) -> Result<(), CampaignError> {
        folder.make_runs_dir()?;
        let runs = Runs::read(plan, folder)?;
        // Written again from the run files: a `.pps` file edited by hand,
        // or left by a run whose file was moved away, is made right.
        runs.write_summaries(folder)?;
        self.runs = Some(runs);
        Ok(())
    }

    fn is_finished(&self, run: &RunId<'_>) -> bool {
        self.runs().records.iter().any(|r| {
            let h = &r.header;
            run.is(&h.config, &h.traffic, h.iteration)
        })
    }

    fn run(
        &mut self,
        run: &RunId<'_>,
        cx: RunContext<'_>,
        on_event: &mut dyn FnMut(TrialEvent),
    ) -> Result<Option<&RunRecord>, CampaignError> {
        let trial = cx.trials.run(run.traffic, run.traffic.rate_pps, on_event);
        if cx.trials.stop.is_set() {
            return Ok(None); // Cut short: its figures are partial.
        }
        let (result, seconds) = RunResult::of(trial?, unix_now());
        (cx.lab_whole)()?;
        let record = RunRecord {
            header: RunHeader {
                generator: Some(result.tx.backend.clone()),
                ..cx.header
            },
            seconds,
            result,
        };
        cx.folder.write_run(&record)?;
        let runs = self.runs.as_mut().expect("opened");
        runs.add(cx.plan, record);
        runs.write_summaries(cx.folder)?;
        Ok(self.runs().records.iter().find(|r| {
            let h = &r.header;
            run.is(&h.config, &h.traffic, h.iteration)
        }))
    }

    fn results(&self) -> &Runs {
        self.runs()
    }
}
