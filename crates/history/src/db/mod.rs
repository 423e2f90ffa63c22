//! The history database: open (creating and migrating the schema), record
//! a campaign in one transaction, read the runs back. SQLite and
//! PostgreSQL hold the same tables ([`schema`]) and run the same
//! statements ([`sql`]).

pub mod postgres;
pub mod schema;
pub mod sql;
pub mod sqlite;
pub mod target;

use std::collections::HashMap;

use crate::record::{
    CampaignRecord, GoalRecord, LatencyRecord, Recorded, RunRecord, Source, StatefulRecord,
    StoredCampaign, StoredRun,
};
use crate::HistoryError;
use sql::{Col, Conn, Dialect, Value};
pub use target::DbTarget;

/// The key of the PostgreSQL advisory lock that serialises schema
/// changes: two first opens of an empty database create its tables once.
const SCHEMA_LOCK: i64 = 0x706b_746c_6162_6831;

enum Backend {
    Sqlite(rusqlite::Connection),
    Postgres(Box<::postgres::Client>),
}

/// An open history database.
pub struct Database {
    backend: Backend,
    name: String,
}

impl Database {
    /// Opens the database; with `create`, an SQLite file (and its folder)
    /// that does not exist yet is made. The schema is created or migrated
    /// to this pktlab's version; a newer one is refused.
    pub fn open(target: &DbTarget, create: bool) -> Result<Database, HistoryError> {
        let name = target.display();
        let backend = match target {
            DbTarget::Sqlite(path) => {
                if !create && !path.exists() {
                    return Err(HistoryError::db(
                        &name,
                        "does not exist: nothing has been recorded in it (pktlab bench, rfc2544 and rfc9693 record every campaign; pktlab history import adds results folders)",
                    ));
                }
                if create {
                    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                        std::fs::create_dir_all(dir).map_err(|e| {
                            HistoryError::db(
                                &name,
                                format!("cannot create its folder: {}", crate::error::os_text(&e)),
                            )
                        })?;
                    }
                }
                Backend::Sqlite(sqlite::open(path, create).map_err(|e| HistoryError::db(&name, e))?)
            }
            DbTarget::Postgres(url) => Backend::Postgres(Box::new(
                postgres::connect(url).map_err(|e| HistoryError::db(&name, e))?,
            )),
        };
        let mut db = Database { backend, name };
        db.prepare_schema()?;
        Ok(db)
    }

    /// The database as messages name it.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn run<T>(
        &mut self,
        write: bool,
        mut f: impl FnMut(&mut dyn Conn) -> Result<T, String>,
    ) -> Result<T, HistoryError> {
        let out = match &mut self.backend {
            Backend::Sqlite(c) => sqlite::transaction(c, write, &mut f),
            Backend::Postgres(c) => postgres::transaction(c, &mut f),
        };
        out.map_err(|e| HistoryError::db(&self.name, e))
    }

    fn prepare_schema(&mut self) -> Result<(), HistoryError> {
        let newer = |db: &str, theirs: i64| HistoryError::Newer {
            db: db.to_string(),
            theirs,
            ours: schema::VERSION,
        };
        match self.run(false, schema::version)? {
            Some(v) if v == schema::VERSION => return Ok(()),
            Some(v) if v > schema::VERSION => return Err(newer(&self.name, v)),
            _ => {}
        }
        let mut found_newer = None;
        self.run(true, |c| {
            if c.dialect() == Dialect::Postgres {
                c.query(
                    "SELECT pg_advisory_xact_lock(?)",
                    &[SCHEMA_LOCK.into()],
                    &[],
                )?;
            }
            // Again, under the lock: another process may have done it.
            let v = schema::version(c)?;
            match v {
                Some(v) if v == schema::VERSION => return Ok(()),
                Some(v) if v > schema::VERSION => {
                    found_newer = Some(v);
                    return Ok(());
                }
                None if schema::table_count(c)? > 0 => {
                    return Err("not a pktlab history database: it holds other tables".into())
                }
                _ => {}
            }
            schema::migrate(c, v, schema::VERSION)
        })?;
        match found_newer {
            Some(v) => Err(newer(&self.name, v)),
            None => Ok(()),
        }
    }

    /// Records `rec` in one transaction; see [`Database::record_observed`].
    pub fn record(&mut self, rec: &CampaignRecord) -> Result<Recorded, HistoryError> {
        self.record_observed(rec, &mut |_| {})
    }

    /// Records `rec` in one transaction: the campaign if it is new (by its
    /// identity), then each of its runs the history does not hold yet.
    /// `progress` hears the count of runs added so far, inside the
    /// transaction. Nothing of it is visible until it commits, and a
    /// process killed before leaves nothing.
    pub fn record_observed(
        &mut self,
        rec: &CampaignRecord,
        progress: &mut dyn FnMut(usize),
    ) -> Result<Recorded, HistoryError> {
        let now = crate::record::unix_now();
        self.run(true, |c| {
            let (campaign_id, new_campaign, label) = insert_campaign(c, rec, now)?;
            let mut runs_added = 0;
            for run in &rec.runs {
                if insert_run(c, campaign_id, run)? {
                    runs_added += 1;
                    progress(runs_added);
                }
            }
            Ok(Recorded {
                campaign_id,
                new_campaign,
                runs_added,
                label,
            })
        })
    }

    /// Every run, with its campaign's label and time, in recording order.
    pub fn runs(&mut self) -> Result<Vec<StoredRun>, HistoryError> {
        self.run(false, read_runs)
    }

    /// Every campaign, in recording order.
    pub fn campaigns(&mut self) -> Result<Vec<StoredCampaign>, HistoryError> {
        self.run(false, read_campaigns)
    }

    /// Gives `labels` the positions 0, 1, 2, ... in trends (labels not in
    /// the list keep theirs).
    pub fn set_label_order(&mut self, labels: &[String]) -> Result<(), HistoryError> {
        self.run(true, |c| {
            for (i, l) in labels.iter().enumerate() {
                c.execute(
                    "INSERT INTO label_order (label, position) VALUES (?, ?) ON CONFLICT (label) DO UPDATE SET position = excluded.position",
                    &[l.into(), (i as i64).into()],
                )?;
            }
            Ok(())
        })
    }

    /// The positions `set_label_order` gave.
    pub fn label_positions(&mut self) -> Result<HashMap<String, i64>, HistoryError> {
        self.run(false, |c| {
            let rows = c.query(
                "SELECT label, position FROM label_order",
                &[],
                &[Col::Text, Col::Int],
            )?;
            Ok(rows
                .into_iter()
                .filter_map(|r| Some((r[0].text()?, r[1].int()?)))
                .collect())
        })
    }
}

/// The campaign's id, whether it is new, and its label in the history.
fn insert_campaign(
    c: &mut dyn Conn,
    rec: &CampaignRecord,
    now: i64,
) -> Result<(i64, bool, String), String> {
    let inserted = c.query(
        "INSERT INTO campaigns (identity, source, name, label, started_at, recorded_at, host, kernel, kernel_build, os, cpu_model, cpus, dut, dut_uname, virtual_lab, pktlab_version, results_dir)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (identity) DO NOTHING RETURNING id",
        &[
            (&rec.identity).into(),
            rec.source.as_str().into(),
            (&rec.name).into(),
            (&rec.label).into(),
            rec.started_at.into(),
            now.into(),
            (&rec.host).into(),
            (&rec.kernel).into(),
            (&rec.kernel_build).into(),
            (&rec.os).into(),
            (&rec.cpu_model).into(),
            rec.cpus.into(),
            (&rec.dut).into(),
            (&rec.dut_uname).into(),
            rec.virtual_lab.into(),
            (&rec.pktlab_version).into(),
            (&rec.results_dir).into(),
        ],
        &[Col::Int],
    )?;
    if let Some(id) = inserted.first().and_then(|r| r[0].int()) {
        return Ok((id, true, rec.label.clone()));
    }
    let found = c.query(
        "SELECT id, label FROM campaigns WHERE identity = ?",
        &[(&rec.identity).into()],
        &[Col::Int, Col::Text],
    )?;
    let row = found
        .first()
        .ok_or("a campaign neither inserted nor found")?;
    Ok((
        row[0].int().unwrap_or(0),
        false,
        row[1].text().unwrap_or_default(),
    ))
}

/// Inserts a run and its goals and latencies; false when the campaign
/// has it already.
fn insert_run(c: &mut dyn Conn, campaign_id: i64, run: &RunRecord) -> Result<bool, String> {
    let inserted = c.query(
        "INSERT INTO runs (campaign_id, config, traffic, size, iteration, started_at, forwarded_pps, offered_pps, loss_ratio)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (campaign_id, config, traffic, size, iteration) DO NOTHING RETURNING id",
        &[
            campaign_id.into(),
            (&run.config).into(),
            (&run.traffic).into(),
            (&run.size).into(),
            run.iteration.into(),
            run.started_at.into(),
            run.forwarded_pps.into(),
            run.offered_pps.into(),
            run.loss_ratio.into(),
        ],
        &[Col::Int],
    )?;
    let Some(run_id) = inserted.first().and_then(|r| r[0].int()) else {
        return Ok(false);
    };
    for g in &run.goals {
        c.execute(
            "INSERT INTO goals (run_id, loss_ratio, exceed_ratio, lower_pps, upper_pps, conditional_pps, hit_max, generator_limited, complete)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                run_id.into(),
                g.loss_ratio.into(),
                g.exceed_ratio.into(),
                g.lower_pps.into(),
                g.upper_pps.into(),
                g.conditional_pps.into(),
                g.hit_max.into(),
                g.generator_limited.into(),
                g.complete.into(),
            ],
        )?;
    }
    for l in &run.latencies {
        c.execute(
            "INSERT INTO latencies (run_id, load_fraction, load_pps, offered_pps, frames, lost, min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                run_id.into(),
                l.load_fraction.into(),
                l.load_pps.into(),
                l.offered_pps.into(),
                l.frames.into(),
                l.lost.into(),
                l.min_ns.into(),
                l.p50_ns.into(),
                l.p90_ns.into(),
                l.p99_ns.into(),
                l.p999_ns.into(),
                l.max_ns.into(),
            ],
        )?;
    }
    for r in &run.stateful {
        insert_stateful(c, run_id, r)?;
    }
    Ok(true)
}

fn insert_stateful(c: &mut dyn Conn, run_id: i64, r: &StatefulRecord) -> Result<(), String> {
    c.execute(
        "INSERT INTO stateful_results (run_id, test, unit, value, upper, connections, dut_limit, hit_max, generator_limited, complete)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        &[
            run_id.into(),
            (&r.test).into(),
            (&r.unit).into(),
            r.value.into(),
            r.upper.into(),
            r.connections.into(),
            r.dut_limit.into(),
            r.hit_max.into(),
            r.generator_limited.into(),
            r.complete.into(),
        ],
    )?;
    Ok(())
}

/// Each run's stateful results, into the runs `out` (`at`: run id → index).
fn read_stateful(
    c: &mut dyn Conn,
    out: &mut [StoredRun],
    at: &HashMap<i64, usize>,
) -> Result<(), String> {
    use Col::{Int, Real, Text};
    let rows = c.query(
        "SELECT run_id, test, unit, value, upper, connections, dut_limit, hit_max, generator_limited, complete
         FROM stateful_results ORDER BY run_id, test",
        &[],
        &[Int, Text, Text, Real, Real, Int, Int, Int, Int, Int],
    )?;
    for r in rows {
        if let Some(&i) = r[0].int().and_then(|id| at.get(&id)) {
            out[i].run.stateful.push(StatefulRecord {
                test: r[1].text().unwrap_or_default(),
                unit: r[2].text().unwrap_or_default(),
                value: r[3].real(),
                upper: r[4].real(),
                connections: r[5].int(),
                dut_limit: r[6].int(),
                hit_max: r[7].int() == Some(1),
                generator_limited: r[8].int() == Some(1),
                complete: r[9].int() == Some(1),
            });
        }
    }
    Ok(())
}

fn source_of(v: &Value) -> Result<Source, String> {
    let t = v.text().unwrap_or_default();
    Source::parse(&t).ok_or_else(|| format!("unknown source '{t}' in campaigns"))
}

fn read_runs(c: &mut dyn Conn) -> Result<Vec<StoredRun>, String> {
    use Col::{Int, Real, Text};
    let rows = c.query(
        "SELECT c.id, c.label, c.source, c.started_at, r.id, r.config, r.traffic, r.size, r.iteration, r.started_at, r.forwarded_pps, r.offered_pps, r.loss_ratio
         FROM runs r JOIN campaigns c ON c.id = r.campaign_id ORDER BY c.id, r.id",
        &[],
        &[Int, Text, Text, Int, Int, Text, Text, Text, Int, Int, Real, Real, Real],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    let mut at: HashMap<i64, usize> = HashMap::new();
    for r in rows {
        at.insert(r[4].int().unwrap_or(0), out.len());
        out.push(StoredRun {
            campaign_id: r[0].int().unwrap_or(0),
            label: r[1].text().unwrap_or_default(),
            source: source_of(&r[2])?,
            campaign_started_at: r[3].int(),
            run: RunRecord {
                config: r[5].text().unwrap_or_default(),
                traffic: r[6].text().unwrap_or_default(),
                size: r[7].text().unwrap_or_default(),
                iteration: r[8].int().unwrap_or(0),
                started_at: r[9].int(),
                forwarded_pps: r[10].real(),
                offered_pps: r[11].real(),
                loss_ratio: r[12].real(),
                goals: Vec::new(),
                latencies: Vec::new(),
                stateful: Vec::new(),
            },
        });
    }
    let goals = c.query(
        "SELECT run_id, loss_ratio, exceed_ratio, lower_pps, upper_pps, conditional_pps, hit_max, generator_limited, complete
         FROM goals ORDER BY run_id, loss_ratio, exceed_ratio",
        &[],
        &[Int, Real, Real, Real, Real, Real, Int, Int, Int],
    )?;
    for g in goals {
        if let Some(&i) = g[0].int().and_then(|id| at.get(&id)) {
            out[i].run.goals.push(GoalRecord {
                loss_ratio: g[1].real().unwrap_or(0.0),
                exceed_ratio: g[2].real().unwrap_or(0.0),
                lower_pps: g[3].real(),
                upper_pps: g[4].real(),
                conditional_pps: g[5].real(),
                hit_max: g[6].int() == Some(1),
                generator_limited: g[7].int() == Some(1),
                complete: g[8].int() == Some(1),
            });
        }
    }
    let lat = c.query(
        "SELECT run_id, load_fraction, load_pps, offered_pps, frames, lost, min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns
         FROM latencies ORDER BY run_id, load_fraction",
        &[],
        &[Int, Real, Real, Real, Int, Int, Int, Int, Int, Int, Int, Int],
    )?;
    for l in lat {
        if let Some(&i) = l[0].int().and_then(|id| at.get(&id)) {
            let n = |k: usize| l[k].int().unwrap_or(0);
            out[i].run.latencies.push(LatencyRecord {
                load_fraction: l[1].real().unwrap_or(0.0),
                load_pps: l[2].real().unwrap_or(0.0),
                offered_pps: l[3].real().unwrap_or(0.0),
                frames: n(4),
                lost: n(5),
                min_ns: n(6),
                p50_ns: n(7),
                p90_ns: n(8),
                p99_ns: n(9),
                p999_ns: n(10),
                max_ns: n(11),
            });
        }
    }
    read_stateful(c, &mut out, &at)?;
    Ok(out)
}

fn read_campaigns(c: &mut dyn Conn) -> Result<Vec<StoredCampaign>, String> {
    use Col::{Int, Text};
    let rows = c.query(
        "SELECT c.id, c.source, c.name, c.label, c.started_at, c.recorded_at, c.host, c.kernel, c.dut, c.pktlab_version, c.results_dir,
                (SELECT COUNT(*) FROM runs r WHERE r.campaign_id = c.id)
         FROM campaigns c ORDER BY c.id",
        &[],
        &[Int, Text, Text, Text, Int, Int, Text, Text, Text, Text, Text, Int],
    )?;
    rows.into_iter()
        .map(|r| {
            Ok(StoredCampaign {
                id: r[0].int().unwrap_or(0),
                source: source_of(&r[1])?,
                name: r[2].text().unwrap_or_default(),
                label: r[3].text().unwrap_or_default(),
                started_at: r[4].int(),
                recorded_at: r[5].int().unwrap_or(0),
                host: r[6].text(),
                kernel: r[7].text(),
                dut: r[8].text(),
                pktlab_version: r[9].text(),
                results_dir: r[10].text().unwrap_or_default(),
                runs: r[11].int().unwrap_or(0),
            })
        })
        .collect()
}
