//! One trend as an SVG chart (plotters): every run a point over its
//! label, each group's average a line across its labels, and every change
//! marked where it starts (▼ a regression, ▲ a progression). The page
//! says so under each chart ([`LEGEND`]) rather than a legend box that
//! would hide runs.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::page::escape;
use crate::jumpavg::Kind;
use crate::trend::Trend;

const FONT: &str = "sans-serif";
/// Okabe and Ito's colour-blind safe blue, vermillion and bluish green,
/// as `report.html` uses them.
const BLUE: RGBColor = RGBColor(0, 114, 178);
const VERMILLION: RGBColor = RGBColor(213, 94, 0);
const GREEN: RGBColor = RGBColor(0, 158, 115);
const GREY: RGBColor = RGBColor(120, 120, 120);

/// What the marks mean, in the page's words.
pub const LEGEND: &str = "Grey dots: the runs, above their label. Lines: each group's average (blue the first group, vermillion a regression, green a progression). ▼ / ▲ and a dashed line: where a regression / progression starts.";

pub const WIDTH: u32 = 820;
pub const HEIGHT: u32 = 400;

fn kind_color(k: Kind) -> RGBColor {
    match k {
        Kind::Normal => BLUE,
        Kind::Regression => VERMILLION,
        Kind::Progression => GREEN,
    }
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

/// Every how many labels one is written under the axis, so that they
/// do not run into each other.
fn label_step(labels: &[String], width: u32) -> usize {
    let longest = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1)
        .max(1);
    // About 7 px per character at 12 px, and a gap.
    let fits = ((width as usize).saturating_sub(120) / (longest * 7 + 14)).max(1);
    labels.len().div_ceil(fits).max(1)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn draw(root: &Area<'_>, t: &Trend, title: &str) -> Result<(), Box<dyn std::error::Error>> {
    let n = t.points.len();
    let (lo, hi) = t
        .points
        .iter()
        .flat_map(|p| p.values.iter().copied())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    let span = (hi - lo).max(hi.abs() * 0.02).max(1e-9);
    let (y0, y1) = ((lo - span * 0.12).max(0.0), hi + span * 0.12);
    let labels: Vec<String> = t.points.iter().map(|p| p.label.clone()).collect();
    let step = label_step(&labels, WIDTH);
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, 17))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.6f64..(n as f64 - 0.4), y0..y1)?;
    let names = labels.clone();
    let x_label = move |x: &f64| -> String {
        let i = x.round();
        if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize).is_multiple_of(step) {
            names.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .max_light_lines(1)
        .x_labels(n.min(400))
        .x_label_formatter(&x_label)
        .y_label_formatter(&|v| si(*v))
        .y_desc(t.unit)
        .x_desc("label")
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()?;
    // The changes first, under the points: a dashed line where each starts.
    for c in &t.changes {
        let x = c.index as f64 - 0.5;
        let color = kind_color(c.kind);
        chart.draw_series(DashedLineSeries::new(
            vec![(x, y0), (x, y1)],
            5,
            4,
            color.mix(0.6).stroke_width(1),
        ))?;
    }
    chart.draw_series(t.points.iter().enumerate().flat_map(|(i, p)| {
        p.values
            .iter()
            .map(move |&v| Circle::new((i as f64, v), 3, GREY.mix(0.8).filled()))
    }))?;
    for g in &t.groups {
        let color = kind_color(g.kind);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![
                (g.first as f64 - 0.4, g.average),
                (g.last as f64 + 0.4, g.average),
            ],
            color.stroke_width(3),
        )))?;
    }
    for c in &t.changes {
        let color = kind_color(c.kind);
        let up = c.kind == Kind::Progression;
        let size = 7;
        chart.draw_series(std::iter::once(
            EmptyElement::at((c.index as f64, c.after)) + {
                let pts = if up {
                    vec![(0, -size - 6), (-size, 3 - 6), (size, 3 - 6)]
                } else {
                    vec![(0, size + 6), (-size, -3 + 6), (size, -3 + 6)]
                };
                Polygon::new(pts, color.filled())
            },
        ))?;
    }
    Ok(())
}

/// The chart of `t` as SVG text to inline in HTML.
pub fn trend_chart(t: &Trend, title: &str) -> String {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|()| draw(&root, t, title).map_err(|e| e.to_string()))
            .and_then(|()| root.present().map_err(|e| e.to_string()));
        if let Err(e) = drawn {
            drop(root);
            return format!(
                "<p class=\"note\">Chart “{}” could not be drawn: {}</p>",
                escape(title),
                escape(&e)
            );
        }
    }
    buf.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
        .replacen(
            "<svg ",
            &format!(
                "<svg class=\"chart\" role=\"img\" aria-label=\"{}\" ",
                escape(title)
            ),
            1,
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_values() {
        assert_eq!(si(788_610.9), "788.61k");
        assert_eq!(si(1_500_000.0), "1.5M");
        assert_eq!(si(12.0), "12");
    }

    #[test]
    fn labels_thinned_to_fit() {
        let short: Vec<String> = (0..55).map(|i| format!("{}", 293069 + i)).collect();
        // 6 characters: (820 − 120) / 56 = 12 fit, so every 5th of 55.
        assert_eq!(label_step(&short, 820), 5);
        let few: Vec<String> = vec!["a".into(), "b".into()];
        assert_eq!(label_step(&few, 900), 1);
    }
}
