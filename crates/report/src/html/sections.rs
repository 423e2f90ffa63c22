//! The sections of a folder's page, each a piece of HTML, each empty when
//! the folder has no data for it. Every chart comes with a table (or a
//! `<details>` with one) of the numbers it draws.

use pktlab_campaign::records::RunRecord as Run;
use pktlab_campaign::summary::{Cell, SweepTable};
use pktlab_stats::Confidence;
use pktlab_trial::trial::GENERATOR_TOLERANCE;

use super::charts::{self, LineChart, Series, Strip};
use super::data::Folder;
use super::escape::html;
use super::numbers::{duration, grouped, pps, utc};

/// A table: header cells and rows, every cell escaped; numeric columns
/// (all but the first `text_cols`) right-aligned.
pub fn table(head: &[&str], rows: &[Vec<String>], text_cols: usize) -> String {
    let mut out = String::from("<div class=\"scroll\"><table>");
    if head.iter().any(|h| !h.is_empty()) {
        out += "<thead><tr>";
        for h in head {
            out += &format!("<th>{}</th>", html(h));
        }
        out += "</tr></thead>";
    }
    out += "<tbody>";
    for r in rows {
        out += "<tr>";
        for (i, c) in r.iter().enumerate() {
            let class = if i >= text_cols { " class=\"num\"" } else { "" };
            out += &format!("<td{class}>{}</td>", html(c));
        }
        out += "</tr>";
    }
    out + "</tbody></table></div>"
}

/// A chart with its numbers beside it (side by side on a wide screen,
/// one under the other on a narrow one or on paper).
pub fn figure(chart: &str, numbers: &str) -> String {
    format!("<div class=\"figure\"><div class=\"plot\">{chart}</div><div class=\"numbers\">{numbers}</div></div>")
}

fn details(summary: &str, body: &str) -> String {
    format!(
        "<details><summary>{}</summary>{body}</details>",
        html(summary)
    )
}

/// The warnings of the band at the top of the page.
pub fn warnings(f: &Folder) -> Vec<String> {
    let mut out = Vec::new();
    if f.virtual_lab() {
        let isolated = f
            .env
            .as_ref()
            .and_then(|e| e.cpu_plan.as_ref())
            .filter(|p| !p.is_shared());
        out.push(match isolated {
            Some(plan) => format!(
                "Virtual lab: the DUT forwards on CPUs of its own (CPU plan {plan}), but it shares this host's memory, caches and kernel with the generator and the receiver. Compare configurations with each other; do not read the figures as a router's capacity."
            ),
            None => "Virtual lab: the generator, the DUT and the receiver share this host's CPUs, so the generator's CPU often does the DUT's and the receiver's work too. Compare configurations with each other; do not read the figures as a router's capacity."
                .to_string(),
        });
    }
    let limited: Vec<String> = f
        .records()
        .iter()
        .filter(|r| r.result.generator_limited())
        .map(|r| {
            format!(
                "{} {} #{}",
                r.header.config, r.header.traffic, r.header.iteration
            )
        })
        .collect();
    if !limited.is_empty() {
        out.push(format!(
            "Generator-limited: the generator offered less than {} % of the requested rate in {} run(s) ({}): those figures are the generator's limit, not the DUT's.",
            (1.0 - GENERATOR_TOLERANCE) * 100.0,
            limited.len(),
            limited.join(", ")
        ));
    }
    if let Some(r) = f.report() {
        let limited: Vec<String> = r
            .throughput
            .iter()
            .filter(|t| t.generator_limited)
            .map(|t| format!("{} {} {} B", t.config, t.traffic, t.size))
            .collect();
        if !limited.is_empty() {
            out.push(format!(
                "Generator-limited RFC 2544 search ({}): the DUT forwards at least the figures shown; the generator could not go higher.",
                limited.join(", ")
            ));
        }
        let tester: Vec<String> = r
            .throughput
            .iter()
            .filter(|t| t.tester_limited)
            .map(|t| format!("{} {} {} B", t.config, t.traffic, t.size))
            .collect();
        if !tester.is_empty() {
            out.push(format!(
                "Tester-limited RFC 2544 search ({}): most of the loss at a lower bound was the tester's (generator, receiver), not the DUT's; the DUT forwards at least the figures shown.",
                tester.join(", ")
            ));
        }
    }
    out
}

/// The ministat verdict of `config` against the first configuration.
pub fn verdict(f: &Folder, config: &str, traffic: &str) -> String {
    let Some(s) = f.summary() else {
        return "not compared".into();
    };
    if s.configs.first().map(String::as_str) == Some(config) {
        return "baseline".into();
    }
    let Some(c) = s
        .comparisons
        .iter()
        .find(|c| c.config == config && c.traffic == traffic)
    else {
        return "not compared".into();
    };
    match &c.comparison {
        None => "not enough runs (ministat needs two of each)".into(),
        Some(k) if k.significant => format!(
            "{} % ± {} % at {} %",
            signed(k.percent, 1),
            grouped(k.percent_error, 1),
            k.confidence
        ),
        Some(k) => format!("no difference proven at {} %", k.confidence),
    }
}

fn signed(v: f64, decimals: usize) -> String {
    let t = grouped(v, decimals);
    if v > 0.0 && !t.starts_with('−') {
        format!("+{t}")
    } else {
        t
    }
}

/// The summary of a fixed-rate campaign: its runs, the lab and host, and
/// each configuration's median against the baseline.
pub fn summary(f: &Folder) -> String {
    let Some(s) = f.summary() else {
        return String::new();
    };
    let mut out = String::from("<section id=\"summary\"><h2>Summary</h2>");
    let mut facts: Vec<Vec<String>> = vec![
        vec!["Campaign".into(), s.name.clone()],
        vec![
            "Runs".into(),
            format!(
                "{} of {} finished{}",
                s.runs_finished,
                s.runs_planned,
                if s.complete { "" } else { " (incomplete)" }
            ),
        ],
        vec![
            "Each run".into(),
            format!(
                "{} s, warm-up {} s and tail {} s left out",
                s.duration_s, s.warmup_samples, s.tail_samples
            ),
        ],
    ];
    facts.extend(lab_facts(f));
    let started = f.records().iter().map(|r| r.header.started_at).min();
    let finished = f
        .records()
        .iter()
        .filter_map(|r| r.result.finished_at)
        .max();
    if let (Some(a), Some(b)) = (started, finished) {
        facts.push(vec!["When".into(), format!("{} to {}", utc(a), utc(b))]);
        facts.push(vec!["Took".into(), duration(b.saturating_sub(a))]);
    }
    facts.extend(link_fact(f));
    out += &table(&["", ""], &facts, 2);
    // Traffic both ways: the median is the total's, and a column says
    // each direction's.
    let both_ways = s.cells.iter().any(|c| !c.directions.is_empty());
    let rows: Vec<Vec<String>> = s
        .cells
        .iter()
        .filter(|c| !c.values.is_empty())
        .map(|c| {
            let mut row = vec![
                c.config.clone(),
                c.traffic.clone(),
                c.values.len().to_string(),
                c.forwarded.map_or("–".into(), |x| pps(x.median)),
            ];
            if both_ways {
                row.push(each_way(&c.directions));
            }
            row.push(verdict(f, &c.config, &c.traffic));
            row
        })
        .collect();
    if !rows.is_empty() {
        out += "<h3>Forwarded packets per second, per configuration</h3>";
        let mut headers = vec!["Configuration", "Traffic", "Runs", "Median pps"];
        if both_ways {
            headers.push("Each way, median pps");
        }
        headers.push("Against the baseline (ministat)");
        out += &table(&headers, &rows, 2);
    }
    out + "</section>"
}

/// `forward 17,912.4 · reverse 17,801.0`: each direction's median
/// forwarded pps; `one way` for a cell of traffic one way.
fn each_way(directions: &[pktlab_campaign::summary::CellDirection]) -> String {
    if directions.is_empty() {
        return "one way".into();
    }
    directions
        .iter()
        .map(|d| {
            format!(
                "{} {}",
                d.name,
                d.forwarded.map_or("–".into(), |x| pps(x.median))
            )
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The campaign, lab and host of a search folder, after its answer.
pub fn search_summary(f: &Folder) -> String {
    let Some(s) = &f.searches else {
        return String::new();
    };
    let mut facts: Vec<Vec<String>> = vec![
        vec!["Campaign".into(), f.name.clone()],
        vec![
            "Searches".into(),
            format!("{}, {} trials", s.report.throughput.len(), s.trials.len()),
        ],
    ];
    facts.extend(lab_facts(f));
    let started = s.trials.iter().map(|t| t.started_at).min();
    let last = s.trials.iter().map(|t| t.started_at).max();
    if let (Some(a), Some(b)) = (started, last) {
        facts.push(vec![
            "When".into(),
            format!("{} to {} (the last trial's start)", utc(a), utc(b)),
        ]);
    }
    facts.extend(link_fact(f));
    format!(
        "<section id=\"summary\"><h2>Campaign and lab</h2>{}</section>",
        table(&["", ""], &facts, 2)
    )
}

/// The lab, host, NICs and link of a folder, one row each.
fn lab_facts(f: &Folder) -> Vec<Vec<String>> {
    let mut facts = Vec::new();
    if let Some(e) = &f.env {
        facts.push(vec!["Lab".into(), e.lab.clone()]);
        facts.push(vec![
            "Host".into(),
            format!(
                "{} ({})",
                e.host.hostname,
                e.host.os.clone().unwrap_or_default()
            ),
        ]);
        facts.push(vec![
            "Kernel".into(),
            format!("{} {}", e.host.kernel, e.host.kernel_build),
        ]);
        facts.push(vec![
            "CPU".into(),
            format!(
                "{} × {}",
                e.host.cpus,
                e.host
                    .cpu_model
                    .clone()
                    .unwrap_or_else(|| "unknown model".into())
            ),
        ]);
        let nics: Vec<String> = e
            .nics
            .iter()
            .map(|n| {
                format!(
                    "{}{} ({})",
                    n.ns.as_ref().map(|ns| format!("{ns}/")).unwrap_or_default(),
                    n.iface,
                    n.driver.clone().unwrap_or_else(|| "driver unknown".into())
                )
            })
            .collect();
        facts.push(vec!["NICs".into(), nics.join(", ")]);
        if let Some(d) = &e.dut_uname {
            facts.push(vec!["DUT".into(), d.clone()]);
        }
        facts.push(vec!["pktlab".into(), e.pktlab_version.clone()]);
    }
    facts
}

/// The link speed, when the campaign gives it.
fn link_fact(f: &Folder) -> Option<Vec<String>> {
    f.link_bps().map(|l| {
        vec![
            "Link speed".into(),
            format!("{} Gbit/s", grouped(l / 1e9, 3)),
        ]
    })
}

/// The 95 % confidence interval of the mean of `values` (Student's t of
/// ministat's table), None for fewer than two values.
pub fn mean_ci(values: &[f64]) -> Option<(f64, f64)> {
    let s = pktlab_stats::summarize(values)?;
    if s.n < 2 || !s.stddev.is_finite() {
        return None;
    }
    let half = Confidence::P95.critical_t(s.n - 1) * s.stddev / (s.n as f64).sqrt();
    Some((s.avg - half, s.avg + half))
}

fn strip_of(c: &Cell) -> Option<Strip> {
    let s = c.forwarded?;
    Some(Strip {
        name: c.config.clone(),
        values: c.values.clone(),
        median: s.median,
        min: s.min,
        max: s.max,
        ci: mean_ci(&c.values),
    })
}

pub fn configurations(f: &Folder) -> String {
    let Some(summary) = f.summary() else {
        return String::new();
    };
    let mut out = String::new();
    for traffic in &summary.traffics {
        let cells: Vec<&Cell> = summary
            .cells
            .iter()
            .filter(|c| &c.traffic == traffic && !c.values.is_empty())
            .collect();
        if cells.is_empty() {
            continue;
        }
        let strips: Vec<Strip> = cells.iter().filter_map(|c| strip_of(c)).collect();
        let line_rate = f
            .link_bps()
            .zip(f.mean_size(traffic))
            .map(|(l, size)| pktlab_wire::rate::line_rate_pps_mean(l, size));
        let chart = charts::strip_chart(
            &format!("Forwarded pps per run, traffic {traffic}"),
            "forwarded packets per second",
            &strips,
            line_rate,
        );
        let rows: Vec<Vec<String>> = cells
            .iter()
            .map(|c| {
                let s = c.forwarded.expect("cells with values have a summary");
                let ci = mean_ci(&c.values)
                    .map_or("–".into(), |(a, b)| format!("{} to {}", pps(a), pps(b)));
                vec![
                    c.config.clone(),
                    c.values.len().to_string(),
                    pps(s.min),
                    pps(s.median),
                    pps(s.avg),
                    pps(s.max),
                    if s.stddev.is_finite() {
                        pps(s.stddev)
                    } else {
                        "–".into()
                    },
                    ci,
                    c.values
                        .iter()
                        .map(|v| pps(*v))
                        .collect::<Vec<_>>()
                        .join("; "),
                ]
            })
            .collect();
        let mut numbers = table(
            &[
                "Configuration",
                "Runs",
                "Min",
                "Median",
                "Avg",
                "Max",
                "Stddev",
                "95 % CI of the mean",
                "Every run",
            ],
            &rows,
            1,
        );
        if let Some(l) = line_rate {
            numbers += &format!("<p>Line rate: {} pps.</p>", pps(l));
        }
        let owned: Vec<Cell> = cells.iter().map(|c| (*c).clone()).collect();
        let ministat = crate::tables::ministat::text_for(std::slice::from_ref(traffic), &owned);
        numbers += &format!("<pre class=\"ministat\">{}</pre>", html(&ministat));
        out += &format!("<h3>Traffic {}</h3>", html(traffic));
        out += &figure(&chart, &numbers);
    }
    if out.is_empty() {
        return out;
    }
    format!("<section id=\"configurations\"><h2>Configurations compared</h2><p>Each point is one run; the shaded box spans min to max, the thick bar is the median, the black whisker the 95 % confidence interval of the mean.</p>{out}</section>")
}

/// The kept span of a run's seconds: `(first, last)` kept second, 1-based.
fn kept(run: &Run, n: usize) -> (usize, usize) {
    let s = &run.header.settings;
    (s.trim_head + 1, n.saturating_sub(s.trim_tail))
}

/// A run's lines over time: forwarded, offered and their difference,
/// and each direction's forwarded rate of a run both ways.
fn run_series(run: &Run, missing: &[f64]) -> Vec<Series> {
    let at = |v: &[f64]| -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .map(|(i, &x)| ((i + 1) as f64, x))
            .collect()
    };
    let r = &run.result;
    let mut series = vec![
        Series {
            name: "forwarded".into(),
            points: at(&r.rx_samples),
        },
        Series {
            name: "offered".into(),
            points: at(&r.tx_samples),
        },
        Series {
            name: "not forwarded".into(),
            points: at(missing),
        },
    ];
    for d in &r.directions {
        series.push(Series {
            name: format!("forwarded {}", d.name),
            points: at(&d.rx_samples),
        });
    }
    series
}

pub fn runs_over_time(f: &Folder) -> String {
    let Some(summary) = f.summary() else {
        return String::new();
    };
    let mut out = String::new();
    for cell in summary.cells.iter().filter(|c| !c.values.is_empty()) {
        let runs: Vec<&Run> = f.runs_of(&cell.config, &cell.traffic).collect();
        if runs.iter().all(|r| r.result.rx_samples.is_empty()) {
            continue;
        }
        out += &format!(
            "<h3>{} · {}</h3><div class=\"grid\">",
            html(&cell.config),
            html(&cell.traffic)
        );
        for run in runs {
            let rx = &run.result.rx_samples;
            let tx = &run.result.tx_samples;
            if rx.is_empty() {
                continue;
            }
            let n = rx.len().max(tx.len());
            let (first, last) = kept(run, n);
            let mut shaded = Vec::new();
            if first > 1 {
                shaded.push((0.5, first as f64 - 0.5));
            }
            if last < n {
                shaded.push((last as f64 + 0.5, n as f64 + 0.5));
            }
            let missing: Vec<f64> = (0..n)
                .map(|i| {
                    (tx.get(i).copied().unwrap_or(0.0) - rx.get(i).copied().unwrap_or(0.0)).max(0.0)
                })
                .collect();
            let title = format!(
                "{} {} run {}",
                run.header.config, run.header.traffic, run.header.iteration
            );
            let chart = charts::line_chart(&LineChart {
                title: title.clone(),
                x_desc: "second".into(),
                y_desc: "packets per second".into(),
                series: run_series(run, &missing),
                shaded,
                dashed: vec![1],
                width: 460,
                height: 280,
                ..LineChart::default()
            });
            let rows: Vec<Vec<String>> = (0..n)
                .map(|i| {
                    let t = i + 1;
                    vec![
                        t.to_string(),
                        rx.get(i).map_or("–".into(), |v| pps(*v)),
                        tx.get(i).map_or("–".into(), |v| pps(*v)),
                        pps(missing[i]),
                        if t < first {
                            "warm-up (left out)".into()
                        } else if t > last {
                            "tail (left out)".into()
                        } else {
                            "kept".into()
                        },
                    ]
                })
                .collect();
            let numbers = details(
                &format!("Values of run {}", run.header.iteration),
                &table(
                    &[
                        "Second",
                        "Forwarded pps",
                        "Offered pps",
                        "Not forwarded",
                        "",
                    ],
                    &rows,
                    0,
                ),
            );
            out += &format!("<div class=\"cell\">{chart}{numbers}</div>");
        }
        out += "</div>";
    }
    if out.is_empty() {
        return out;
    }
    format!("<section id=\"runs\"><h2>Runs over time</h2><p>The receiver's (forwarded) and the generator's (offered) count per second; grey bands are the warm-up and tail left out of the run's value.</p>{out}</section>")
}

/// The DUT's side of a second: the load and interrupts read on the DUT's
/// own host when it is another one (over ssh), with that host's name;
/// else this host's, where the built-in lab and local DUTs run.
fn dut_second(
    s: &pktlab_loss::monitor::Second,
) -> (
    &[pktlab_lab::cpuload::CpuLoad],
    &[pktlab_lab::interrupts::IrqDelta],
    Option<&str>,
) {
    match s
        .hosts
        .iter()
        .find(|h| h.role.split('+').any(|r| r == "dut"))
    {
        Some(h) => (&h.cpus, &h.interrupts, Some(&h.host)),
        None => (&s.cpus, &s.interrupts, None),
    }
}

/// Mean per-CPU load of a cell's runs: (cpu, user, system, softirq, irq+steal, idle).
pub fn cpu_means(runs: &[&Run]) -> Vec<(usize, [f64; 5])> {
    let mut acc: std::collections::BTreeMap<usize, ([f64; 5], usize)> = Default::default();
    for r in runs {
        for s in &r.seconds {
            for c in dut_second(s).0 {
                let e = acc.entry(c.cpu).or_insert(([0.0; 5], 0));
                for (k, v) in [c.user, c.system, c.softirq, c.irq + c.steal, c.idle]
                    .iter()
                    .enumerate()
                {
                    e.0[k] += v;
                }
                e.1 += 1;
            }
        }
    }
    acc.into_iter()
        .map(|(cpu, (sum, n))| (cpu, sum.map(|v| v / n as f64)))
        .collect()
}

pub fn dut_load(f: &Folder) -> String {
    let Some(summary) = f.summary() else {
        return String::new();
    };
    let mut out = String::new();
    for cell in summary.cells.iter().filter(|c| !c.values.is_empty()) {
        let runs: Vec<&Run> = f.runs_of(&cell.config, &cell.traffic).collect();
        let means = cpu_means(&runs);
        if means.is_empty() {
            continue;
        }
        let names = ["user", "system", "softirq", "irq + steal", "idle"];
        let cats: Vec<String> = means.iter().map(|(c, _)| format!("cpu{c}")).collect();
        let layers: Vec<Series> = names
            .iter()
            .enumerate()
            .map(|(k, n)| Series {
                name: n.to_string(),
                points: means
                    .iter()
                    .enumerate()
                    .map(|(i, (_, m))| (i as f64, m[k]))
                    .collect(),
            })
            .collect();
        let chart = charts::stacked_bars(
            &format!("CPU load, {} {}", cell.config, cell.traffic),
            "% of the CPU's time",
            &cats,
            &layers,
        );
        let rows: Vec<Vec<String>> = means
            .iter()
            .map(|(c, m)| {
                let mut r = vec![format!("cpu{c}")];
                r.extend(m.iter().map(|v| grouped(*v, 1)));
                r
            })
            .collect();
        let mut numbers = table(
            &[
                "CPU",
                "user %",
                "system %",
                "softirq %",
                "irq + steal %",
                "idle %",
            ],
            &rows,
            1,
        );
        let mut irqs: std::collections::BTreeMap<(String, String), u64> = Default::default();
        for r in &runs {
            for s in &r.seconds {
                for i in dut_second(s).1 {
                    *irqs.entry((i.iface.clone(), i.name.clone())).or_default() += i.total;
                }
            }
        }
        if !irqs.is_empty() {
            let rows: Vec<Vec<String>> = irqs
                .into_iter()
                .map(|((iface, name), total)| vec![iface, name, grouped(total as f64, 0)])
                .collect();
            numbers += &table(&["Interface", "Interrupt", "Total over the runs"], &rows, 2);
        } else if let Some(why) = runs.iter().find_map(|r| r.header.interrupts.clone()) {
            numbers += &format!("<p>Interrupts not recorded: {}</p>", html(&why));
        }
        let host = runs
            .iter()
            .flat_map(|r| r.seconds.iter())
            .find_map(|s| dut_second(s).2);
        let on = host.map_or(String::new(), |h| format!(" · read on {}", html(h)));
        out += &format!(
            "<h3>{} · {}{on}</h3>",
            html(&cell.config),
            html(&cell.traffic)
        );
        out += &figure(&chart, &numbers);
    }
    if out.is_empty() {
        return out;
    }
    format!("<section id=\"load\"><h2>DUT load</h2><p>Mean per-CPU load over every second of the runs.</p>{out}</section>")
}

fn sweep_figure(t: &SweepTable) -> String {
    let pts = |f: &dyn Fn(&pktlab_campaign::summary::SweepRow) -> f64| -> Vec<(f64, f64)> {
        t.rows.iter().map(|r| (r.size as f64, f(r))).collect()
    };
    // The line rate as a curve: 40 sizes spread evenly on the log axis
    // between the smallest and the largest size.
    let (lo, hi) = (
        t.rows.iter().map(|r| r.size).min().unwrap_or(64),
        t.rows.iter().map(|r| r.size).max().unwrap_or(64),
    );
    let sizes: Vec<u16> = (0..=40)
        .map(|i| (lo as f64 * (hi as f64 / lo as f64).powf(i as f64 / 40.0)).round() as u16)
        .collect();
    let line = |scale: &dyn Fn(f64, u16) -> f64| {
        t.link_bps.map(|l| Series {
            name: "line rate".into(),
            points: sizes.iter().map(|&s| (s as f64, scale(l, s))).collect(),
        })
    };
    let pps_chart = charts::line_chart(&LineChart {
        title: format!("Size sweep {} · {}: packets", t.config, t.traffic),
        x_desc: "frame size (bytes, log scale)".into(),
        y_desc: "packets per second".into(),
        series: vec![
            Series {
                name: "forwarded".into(),
                points: pts(&|r| r.forwarded_kpps * 1e3),
            },
            Series {
                name: "offered".into(),
                points: pts(&|r| r.offered_kpps * 1e3),
            },
        ],
        reference: line(&|l, s| pktlab_wire::rate::line_rate_pps(l, s)),
        log_x: true,
        legend_top: true,
        dashed: vec![1],
        ..LineChart::default()
    });
    let bps_chart = charts::line_chart(&LineChart {
        title: format!("Size sweep {} · {}: L1 bits", t.config, t.traffic),
        x_desc: "frame size (bytes, log scale)".into(),
        y_desc: "L1 Mbit/s".into(),
        series: vec![
            Series {
                name: "forwarded".into(),
                points: pts(&|r| r.forwarded_l1_mbps),
            },
            Series {
                name: "offered".into(),
                points: pts(&|r| r.offered_l1_mbps),
            },
        ],
        reference: line(&|l, _| l / 1e6),
        log_x: true,
        dashed: vec![1],
        ..LineChart::default()
    });
    let mut head = vec![
        "Size",
        "Runs",
        "Offered Kpps",
        "Forwarded Kpps",
        "Offered L1 Mbps",
        "Forwarded L1 Mbps",
    ];
    if t.link_bps.is_some() {
        head.push("Line rate Kpps");
    }
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            let mut v = vec![
                r.size.to_string(),
                r.runs.to_string(),
                grouped(r.offered_kpps, 2),
                grouped(r.forwarded_kpps, 2),
                grouped(r.offered_l1_mbps, 2),
                grouped(r.forwarded_l1_mbps, 2),
            ];
            if let Some(l) = r.line_rate_kpps {
                v.push(grouped(l, 2));
            }
            v
        })
        .collect();
    figure(&format!("{pps_chart}{bps_chart}"), &table(&head, &rows, 0))
}

pub fn size_sweep(f: &Folder) -> String {
    let Some(summary) = f.summary().filter(|s| !s.sweeps.is_empty()) else {
        return String::new();
    };
    let mut out = String::from("<section id=\"sweep\"><h2>Size sweep</h2><p>Medians of the runs; L1 adds 20 bytes of preamble and gap per frame.</p>");
    for t in &summary.sweeps {
        out += &format!("<h3>{} · {}</h3>", html(&t.config), html(&t.traffic));
        out += &sweep_figure(t);
    }
    out + "</section>"
}

pub fn interfaces(f: &Folder) -> String {
    let Some(summary) = f.summary() else {
        return String::new();
    };
    let mut out = String::new();
    for cell in summary.cells.iter().filter(|c| !c.values.is_empty()) {
        // (role, ns, iface) → [rx, tx, rx_err, tx_err, rx_drop, tx_drop, rx_missed]
        let mut acc: Vec<((String, String), [u64; 7])> = Vec::new();
        for r in f.runs_of(&cell.config, &cell.traffic) {
            for s in &r.seconds {
                for i in &s.ifaces {
                    let key = (
                        i.role.clone(),
                        format!(
                            "{}{}",
                            i.ns.as_ref().map(|n| format!("{n}/")).unwrap_or_default(),
                            i.iface
                        ),
                    );
                    let c = &i.counters;
                    let v = [
                        c.rx_packets,
                        c.tx_packets,
                        c.rx_errors,
                        c.tx_errors,
                        c.rx_dropped,
                        c.tx_dropped,
                        c.rx_missed_errors,
                    ];
                    match acc.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, sum)) => sum.iter_mut().zip(v).for_each(|(a, b)| *a += b),
                        None => acc.push((key, v)),
                    }
                }
            }
        }
        if acc.is_empty() {
            continue;
        }
        let rows: Vec<Vec<String>> = acc
            .into_iter()
            .map(|((role, name), v)| {
                let mut r = vec![role, name];
                r.extend(v.iter().map(|x| grouped(*x as f64, 0)));
                r
            })
            .collect();
        out += &format!("<h3>{} · {}</h3>", html(&cell.config), html(&cell.traffic));
        out += &table(
            &[
                "Role",
                "Interface",
                "RX packets",
                "TX packets",
                "RX errors",
                "TX errors",
                "RX drops (idrops)",
                "TX drops (odrops)",
                "RX missed",
            ],
            &rows,
            2,
        );
    }
    if out.is_empty() {
        return out;
    }
    format!("<section id=\"interfaces\"><h2>Interfaces</h2><p>Every lab interface's counters summed over the seconds of the runs.</p>{out}</section>")
}

pub fn missing(f: &Folder) -> String {
    if f.missing.is_empty() {
        return String::new();
    }
    let items: String = f
        .missing
        .iter()
        .map(|m| format!("<li>{}</li>", html(m)))
        .collect();
    format!("<section id=\"missing\" class=\"missing\"><h2>Not in this folder</h2><ul>{items}</ul></section>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_s_median_in_one_cell() {
        use pktlab_campaign::summary::CellDirection;
        let way = |name: &str, values: Vec<f64>| CellDirection {
            name: name.into(),
            forwarded: pktlab_stats::summarize(&values),
            max_loss_ratio: 0.0,
            values,
        };
        // Medians by hand: 18,000 of (17,000, 18,000, 19,500); 17,500.5
        // of (17,000, 18,001).
        assert_eq!(
            each_way(&[
                way("forward", vec![19_500.0, 17_000.0, 18_000.0]),
                way("reverse", vec![17_000.0, 18_001.0]),
            ]),
            "forward 18,000.0 · reverse 17,500.5"
        );
        assert_eq!(each_way(&[]), "one way");
    }

    #[test]
    fn confidence_interval_by_hand() {
        // 100, 102, 104: mean 102, s = 2, t(2 df, 95 %) = 4.303:
        // 102 ± 4.303 × 2 / √3 = 102 ± 4.96867.
        let (a, b) = mean_ci(&[100.0, 102.0, 104.0]).unwrap();
        assert!((a - 97.031_33).abs() < 1e-3, "{a}");
        assert!((b - 106.968_67).abs() < 1e-3, "{b}");
        assert_eq!(mean_ci(&[5.0]), None);
    }

    fn load(cpu: usize, softirq: f64) -> pktlab_lab::cpuload::CpuLoad {
        pktlab_lab::cpuload::CpuLoad {
            cpu,
            user: 0.0,
            system: 0.0,
            irq: 0.0,
            softirq,
            steal: 0.0,
            idle: 100.0 - softirq,
        }
    }

    /// A DUT reached over ssh is shown with its own host's CPUs and
    /// interrupts, named; other hosts' loads (a remote generator) are not
    /// the DUT's; without a DUT host, this host's own.
    #[test]
    fn the_dut_load_is_read_on_the_dut_s_host() {
        use pktlab_loss::monitor::{HostLoad, Second};
        let irq = |name: &str| pktlab_lab::interrupts::IrqDelta {
            iface: "d0".into(),
            irq: "30".into(),
            name: name.into(),
            total: 7,
            per_cpu: vec![7],
        };
        let host = |name: &str, role: &str, softirq: f64| HostLoad {
            host: name.into(),
            role: role.into(),
            cpus: vec![load(0, softirq)],
            interrupts: vec![irq(name)],
        };
        let mut s = Second {
            t: 1,
            seconds: 1.0,
            ifaces: Vec::new(),
            cpus: vec![load(0, 1.0), load(1, 2.0)],
            interrupts: vec![irq("here")],
            hosts: vec![host("root@gen2", "gen", 5.0)],
        };
        let (cpus, irqs, on) = dut_second(&s);
        assert_eq!((cpus.len(), irqs[0].name.as_str(), on), (2, "here", None));
        s.hosts.push(host("root@dut", "rcv+dut", 40.0));
        let (cpus, irqs, on) = dut_second(&s);
        assert_eq!(cpus, [load(0, 40.0)]);
        assert_eq!((irqs[0].name.as_str(), on), ("root@dut", Some("root@dut")));
    }

    #[test]
    fn tables_escape_their_cells() {
        let t = table(&["a<b"], &[vec!["x&\"y\"".into(), "1".into()]], 1);
        assert!(t.contains("<th>a&lt;b</th>"));
        assert!(t.contains("<td>x&amp;&quot;y&quot;</td><td class=\"num\">1</td>"));
    }
}
