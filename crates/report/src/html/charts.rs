//! The report's charts, drawn by plotters into SVG text. Every chart has a
//! title, named axes with units, and a legend when it has more than one
//! series; the page puts a table with the same numbers beside each.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Okabe and Ito's colour-blind safe palette, without its yellow (too pale
/// on white) and black (the reference lines' colour).
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const FONT: &str = "sans-serif";
const GREY: RGBColor = RGBColor(110, 110, 110);

/// A named line or set of points.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A category of a strip chart: every run's value and the figures drawn
/// over them.
#[derive(Clone, Debug)]
pub struct Strip {
    pub name: String,
    pub values: Vec<f64>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The 95 % confidence interval of the mean (None for one run).
    pub ci: Option<(f64, f64)>,
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Runs `draw` on an SVG of `size` and returns the SVG text, ready to be
/// inlined in HTML: no XML namespace (an `http:` address the page must not
/// carry; HTML does not need it) and a role for screen readers.
fn svg(
    size: (u32, u32),
    title: &str,
    draw: impl FnOnce(&Area<'_>) -> Result<(), Box<dyn std::error::Error>>,
) -> String {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|()| draw(&root).map_err(|e| e.to_string()))
            .and_then(|()| root.present().map_err(|e| e.to_string()));
        if let Err(e) = drawn {
            // Only a bug of ours (an empty range) can get here: say so in
            // the chart rather than lose the page.
            drop(root);
            return format!(
                "<p class=\"warn\">Chart “{}” could not be drawn: {}</p>",
                super::escape::html(title),
                super::escape::html(&e)
            );
        }
    }
    buf.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen(
            "<svg ",
            &format!(
                "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" ",
                super::escape::html(title)
            ),
            1,
        )
}

/// `(lo, hi)` padded by 8 % (a flat range gets ±1 or ±5 %), from 0 when
/// `from_zero`.
pub fn padded(lo: f64, hi: f64, from_zero: bool) -> (f64, f64) {
    let lo = if from_zero { lo.min(0.0) } else { lo };
    let span = hi - lo;
    if !span.is_finite() || span <= 0.0 {
        let d = if hi.abs() > 0.0 { hi.abs() * 0.05 } else { 1.0 };
        return (if from_zero { 0.0 } else { lo - d }, hi + d);
    }
    let lo = if from_zero { lo } else { lo - span * 0.08 };
    (lo, hi + span * 0.08)
}

fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        })
}

/// An axis tick as a number: whole numbers with thousands separators
/// (47,500), others with up to three decimals (0.25).
pub fn tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 * v.abs().max(1.0) {
        return crate::linerate::grouped(v);
    }
    let t = format!("{v:.3}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An axis value with an SI suffix: 1.2M, 650k, 12.
pub fn si(v: f64) -> String {
    let a = v.abs();
    let (x, s) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let t = format!("{x:.2}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}{s}")
}

/// Every run of each category as a point (spread sideways so that equal
/// values stay visible), a box from min to max with the median as a thick
/// bar, the 95 % CI of the mean as a whisker beside it, and the line rate
/// as a dashed line when known.
pub fn strip_chart(title: &str, y_desc: &str, strips: &[Strip], line_rate: Option<f64>) -> String {
    let n = strips.len().max(1);
    let width = (160 * n as u32 + 140).clamp(480, 1100);
    svg((width, 380), title, |root| {
        let (lo, mut hi) = bounds(
            strips
                .iter()
                .flat_map(|s| s.values.iter().copied().chain(s.ci.map(|c| c.1))),
        );
        // A line rate far above the runs would squash them into a flat
        // line at the bottom: then it is named in the legend, not drawn.
        let line_rate = line_rate.map(|l| (l, l <= hi * 2.0));
        if let Some((l, true)) = line_rate {
            hi = hi.max(l);
        }
        let (y0, y1) = padded(lo, hi, true);
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(78)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), y0..y1)?;
        let names: Vec<String> = strips.iter().map(|s| s.name.clone()).collect();
        let label = move |x: &f64| -> String {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .max_light_lines(1)
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&label)
            .y_label_formatter(&|v| si(*v))
            .y_desc(y_desc)
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()?;
        for (i, s) in strips.iter().enumerate() {
            let x = i as f64;
            let c = color(i);
            chart.draw_series(std::iter::once(Rectangle::new(
                [(x - 0.28, s.min), (x + 0.12, s.max)],
                c.mix(0.15).filled(),
            )))?;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x - 0.28, s.median), (x + 0.12, s.median)],
                c.stroke_width(3),
            )))?;
            let k = s.values.len().max(1) as f64;
            chart.draw_series(s.values.iter().enumerate().map(|(j, &v)| {
                let dx = if k > 1.0 {
                    -0.22 + 0.28 * j as f64 / (k - 1.0)
                } else {
                    -0.08
                };
                Circle::new((x + dx, v), 4, c.filled())
            }))?;
            if let Some((a, b)) = s.ci {
                chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                    x + 0.22,
                    a,
                    (a + b) / 2.0,
                    b,
                    BLACK.stroke_width(2),
                    10,
                )))?;
            }
        }
        if let Some((l, shown)) = line_rate {
            let (points, label) = if shown {
                (
                    vec![(-0.5, l), (n as f64 - 0.5, l)],
                    "line rate".to_string(),
                )
            } else {
                (
                    Vec::new(),
                    format!("line rate {} pps (above the chart)", si(l)),
                )
            };
            chart
                .draw_series(DashedLineSeries::new(points, 6, 4, BLACK.stroke_width(1)))?
                .label(label)
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.8))
                .border_style(GREY)
                .label_font((FONT, 13))
                .draw()?;
        }
        Ok(())
    })
}

/// Options of a line chart.
#[derive(Clone, Debug, Default)]
pub struct LineChart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    pub series: Vec<Series>,
    /// Spans of x drawn as grey bands (trimmed warm-up and tail).
    pub shaded: Vec<(f64, f64)>,
    /// A dashed black reference curve (the line rate).
    pub reference: Option<Series>,
    pub log_x: bool,
    /// Dashed series (index into `series`): offered beside forwarded.
    pub dashed: Vec<usize>,
    /// The legend in the upper right corner rather than the lower right.
    pub legend_top: bool,
    /// Colour index of each series (default: its position).
    pub colors: Vec<usize>,
    pub width: u32,
    pub height: u32,
}

/// Draws a [`LineChart`]'s mesh, shaded spans, series, reference and
/// legend on `$chart`, whose y axis runs from `$y0` to `$y1`: the same for
/// a linear and a log x axis (a macro: the two charts have different
/// types).
macro_rules! draw_lines {
    ($chart:ident, $o:ident, $y0:ident, $y1:ident) => {{
        // On a log axis plotters' own ticks crowd (100, 200, ...
        // 900 and 1k twice): the data's x values are labelled below.
        // Seconds are whole: no tick label between two of them.
        let whole = $o
            .series
            .iter()
            .all(|s| s.points.iter().all(|p| p.0.fract() == 0.0));
        let x_label = |v: &f64| {
            if $o.log_x || (whole && v.fract().abs() > 1e-9) {
                String::new()
            } else {
                si(*v)
            }
        };
        $chart
            .configure_mesh()
            .max_light_lines(if $o.log_x { 0 } else { 1 })
            .x_desc($o.x_desc.as_str())
            .y_desc($o.y_desc.as_str())
            .y_label_formatter(&|v| si(*v))
            .x_label_formatter(&x_label)
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        for &(a, b) in &$o.shaded {
            $chart.draw_series(std::iter::once(Rectangle::new(
                [(a, $y0), (b, $y1)],
                RGBColor(200, 200, 200).mix(0.45).filled(),
            )))?;
        }
        for (i, s) in $o.series.iter().enumerate() {
            let c = color($o.colors.get(i).copied().unwrap_or(i));
            let style = c.stroke_width(2);
            let drawn = if $o.dashed.contains(&i) {
                $chart.draw_series(DashedLineSeries::new(s.points.clone(), 5, 4, style))?
            } else {
                $chart.draw_series(LineSeries::new(s.points.clone(), style))?
            };
            drawn.label(s.name.as_str()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
            });
            $chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 2, c.filled())))?;
        }
        if let Some(r) = &$o.reference {
            $chart
                .draw_series(DashedLineSeries::new(
                    r.points.clone(),
                    6,
                    4,
                    BLACK.stroke_width(1),
                ))?
                .label(r.name.as_str())
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
        }
        if $o.series.len() + usize::from($o.reference.is_some()) > 1 {
            $chart
                .configure_series_labels()
                .position(if $o.legend_top {
                    SeriesLabelPosition::UpperRight
                } else {
                    SeriesLabelPosition::LowerRight
                })
                .background_style(WHITE.mix(0.85))
                .border_style(GREY)
                .label_font((FONT, 12))
                .draw()?;
        }
    }};
}

pub fn line_chart(o: &LineChart) -> String {
    let (w, h) = (
        if o.width == 0 { 640 } else { o.width },
        if o.height == 0 { 320 } else { o.height },
    );
    svg((w, h), &o.title, |root| {
        let all = || {
            o.series
                .iter()
                .chain(o.reference.iter())
                .flat_map(|s| s.points.iter().copied())
        };
        let (x0, x1) = bounds(
            all()
                .map(|p| p.0)
                .chain(o.shaded.iter().flat_map(|s| [s.0, s.1])),
        );
        let (ylo, yhi) = bounds(all().map(|p| p.1));
        let (y0, y1) = padded(ylo, yhi, true);
        let mut b = ChartBuilder::on(root);
        b.caption(&o.title, (FONT, 16))
            .margin(10)
            .margin_right(30)
            .margin_right(30)
            .x_label_area_size(38)
            .y_label_area_size(72);
        if o.log_x {
            let (x0, x1) = (x0 * 0.85, x1 * 1.15);
            let mut chart = b.build_cartesian_2d((x0..x1).log_scale(), y0..y1)?;
            draw_lines!(chart, o, y0, y1);
            let mut xs: Vec<f64> = o
                .series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.0))
                .collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            let style = TextStyle::from((FONT, 12).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top));
            let mut last: Option<i32> = None;
            for x in xs {
                let (px, py) = chart.backend_coord(&(x, y0));
                let label = format!("{x}");
                // Skip a label that would touch the previous one.
                let half = 4 * label.len() as i32;
                if last.is_some_and(|l| px - half < l + 6) {
                    continue;
                }
                root.draw(&Text::new(label, (px, py + 6), style.clone()))?;
                last = Some(px + half);
            }
        } else {
            let (x0, x1) = if x1 > x0 {
                (x0, x1)
            } else {
                (x0 - 1.0, x1 + 1.0)
            };
            let mut chart = b.build_cartesian_2d(x0..x1, y0..y1)?;
            draw_lines!(chart, o, y0, y1);
        }
        Ok(())
    })
}

/// Points coloured by group (a search trace: each trial's load against
/// time, coloured by its classification).
pub fn scatter(title: &str, x_desc: &str, y_desc: &str, groups: &[Series]) -> String {
    svg((640, 320), title, |root| {
        let (x0, x1) = bounds(groups.iter().flat_map(|g| g.points.iter().map(|p| p.0)));
        let (ylo, yhi) = bounds(groups.iter().flat_map(|g| g.points.iter().map(|p| p.1)));
        let (x0, x1) = padded(x0, x1, false);
        let (y0, y1) = padded(ylo, yhi, true);
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 16))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(38)
            .y_label_area_size(72)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| si(*v))
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        for (i, g) in groups.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(g.points.iter().map(|&p| Circle::new(p, 4, c.filled())))?
                .label(g.name.as_str())
                .legend(move |(x, y)| Circle::new((x + 8, y), 4, c.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(GREY)
            .label_font((FONT, 12))
            .draw()?;
        Ok(())
    })
}

/// Stacked bars per category (per-CPU load: user, system, softirq, idle).
pub fn stacked_bars(title: &str, y_desc: &str, categories: &[String], layers: &[Series]) -> String {
    let n = categories.len().max(1);
    let width = (70 * n as u32 + 220).clamp(420, 1000);
    svg((width, 320), title, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 16))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(38)
            .y_label_area_size(56)
            .right_y_label_area_size(0)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5) + 1.6, 0f64..100f64)?;
        let names = categories.to_vec();
        let label = move |x: &f64| -> String {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .max_light_lines(1)
            .disable_x_mesh()
            .x_labels(n + 2)
            .x_label_formatter(&label)
            .y_desc(y_desc)
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        let mut base = vec![0.0; n];
        for (li, layer) in layers.iter().enumerate() {
            let c = color(li);
            let bars: Vec<Rectangle<(f64, f64)>> = layer
                .points
                .iter()
                .map(|&(x, v)| {
                    let i = x as usize;
                    let lo = base[i];
                    base[i] += v;
                    Rectangle::new([(x - 0.35, lo), (x + 0.35, lo + v)], c.filled())
                })
                .collect();
            chart
                .draw_series(bars)?
                .label(layer.name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(GREY)
            .label_font((FONT, 12))
            .draw()?;
        Ok(())
    })
}

/// A goal's (lower bound, conditional throughput, upper bound) per
/// category, NaN where it has none.
pub type GoalBounds = (String, Vec<(f64, f64, f64)>);

/// A bound pair per category drawn as an error bar with its conditional
/// throughput as a point: NDR and PDR per size.
pub fn bounds_chart(
    title: &str,
    y_desc: &str,
    categories: &[String],
    goals: &[GoalBounds],
) -> String {
    let n = categories.len().max(1);
    let width = (120 * n as u32 + 200).clamp(480, 1000);
    svg((width, 340), title, |root| {
        let (lo, hi) = bounds(
            goals
                .iter()
                .flat_map(|g| g.1.iter().flat_map(|t| [t.0, t.2])),
        );
        let (y0, y1) = padded(lo, hi, true);
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 16))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(38)
            .y_label_area_size(72)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), y0..y1)?;
        let names = categories.to_vec();
        let label = move |x: &f64| -> String {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .max_light_lines(1)
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&label)
            .y_label_formatter(&|v| si(*v))
            .y_desc(y_desc)
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        let k = goals.len().max(1) as f64;
        for (gi, (name, per)) in goals.iter().enumerate() {
            let c = color(gi);
            let dx = (gi as f64 - (k - 1.0) / 2.0) * 0.18;
            chart
                .draw_series(per.iter().enumerate().filter(|(_, t)| t.0.is_finite()).map(
                    |(i, &(l, m, u))| {
                        // No upper bound (the generator's limit): a bar of
                        // no height at the lower bound.
                        let u = if u.is_finite() { u } else { l };
                        let m = if m.is_finite() { m } else { l };
                        ErrorBar::new_vertical(i as f64 + dx, l, m, u, c.stroke_width(2), 12)
                    },
                ))?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                });
            chart.draw_series(
                per.iter()
                    .enumerate()
                    .filter(|(_, t)| t.1.is_finite())
                    .map(|(i, &(_, m, _))| Circle::new((i as f64 + dx, m), 4, c.filled())),
            )?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(GREY)
            .label_font((FONT, 12))
            .draw()?;
        Ok(())
    })
}

/// `log10(1 / (1 - p))` for a percentile `p` in percent: HDR's x axis.
pub fn hdr_x(p: f64) -> f64 {
    (1.0 / (1.0 - p / 100.0)).log10()
}

/// Latency percentile curves as FD.io CSIT draws HDR histograms: x is the
/// percentile on a log scale of 1/(1−p), y the latency.
pub fn hdr_chart(title: &str, series: &[Series]) -> String {
    svg((640, 320), title, |root| {
        let (ylo, yhi) = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.1)));
        let (y0, y1) = padded(ylo, yhi, true);
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, 16))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(38)
            .y_label_area_size(72)
            .build_cartesian_2d(0f64..4.3, y0..y1)?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .x_labels(5)
            .x_label_formatter(&|x| {
                let p = 100.0 * (1.0 - 10f64.powf(-x));
                format!("{}%", (p * 100.0).round() / 100.0)
            })
            .y_label_formatter(&|v| si(*v))
            .x_desc("percentile (log scale of 1/(1−p))")
            .y_desc("latency (µs)")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let c = color(i);
            let pts: Vec<(f64, f64)> = s.points.iter().map(|&(p, v)| (hdr_x(p), v)).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(s.name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                });
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(GREY)
            .label_font((FONT, 12))
            .draw()?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_labels() {
        assert_eq!(si(1_250_000.0), "1.25M");
        assert_eq!(si(650_000.0), "650k");
        assert_eq!(si(12.0), "12");
        assert_eq!(si(0.5), "0.5");
        assert_eq!(si(0.0), "0");
    }

    #[test]
    fn ticks_as_numbers() {
        assert_eq!(tick(47_500.0), "47,500");
        assert_eq!(tick(1_000_000.0), "1,000,000");
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.125), "0.125");
        assert_eq!(tick(-1500.0), "-1,500");
    }

    #[test]
    fn scatter_ticks_have_no_decimals() {
        let g = Series {
            name: "validated".into(),
            points: vec![(40_000.0, 0.0), (55_000.0, 3.0)],
        };
        let svg = scatter("t", "rate", "failed", &[g]);
        assert!(!svg.contains("47500.0"), "{svg}");
        assert!(
            svg.contains("\n44,000\n") && svg.contains("\n50,000\n"),
            "{svg}"
        );
    }

    #[test]
    fn hdr_axis() {
        assert!((hdr_x(90.0) - 1.0).abs() < 1e-12);
        assert!((hdr_x(99.9) - 3.0).abs() < 1e-9);
        assert!((hdr_x(50.0) - 2f64.log10()).abs() < 1e-12);
    }

    #[test]
    fn padding() {
        assert_eq!(padded(100.0, 200.0, true), (0.0, 216.0));
        assert_eq!(padded(100.0, 200.0, false), (92.0, 208.0));
        assert_eq!(padded(50.0, 50.0, true), (0.0, 54.0));
        assert_eq!(padded(50.0, 50.0, false), (47.5, 52.5));
        assert_eq!(padded(0.0, 0.0, true), (0.0, 1.0));
    }
}
