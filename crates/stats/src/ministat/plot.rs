//! ministat's ASCII-art plot.
//!
//! Every point becomes a symbol in the column of its value; points of a set
//! that fall in the same column stack upwards. The cell holds the OR of the
//! 1-based numbers of the sets that put a point there, so x (1) and + (2) in
//! the same cell show as * (3). Below the points each set gets a bar: `|` at
//! avg - stddev and avg + stddev, `_` in between, `M` at the median and `A`
//! at the average, written in that order so A wins over M.
//!
//! One quirk is reproduced on purpose: the height of the point area is that
//! of the last set drawn, so stacks of earlier sets that are taller than the
//! last set's tallest stack are cut off (FreeBSD's ministat does this).

use super::dataset::symbol;
use crate::descriptive::Sample;

/// The plot of `sets` (each with its 1-based set number) across `width`
/// columns, borders included in the output but not in `width`.
pub(crate) fn draw(sets: &[(usize, &Sample)], width: usize, separate_bars: bool) -> String {
    let width = width.max(2);
    let Some(scale) = Scale::fit(sets.iter().map(|(_, sample)| *sample), width) else {
        return String::new();
    };
    if scale.span == 0.0 {
        return "[no plot, span is zero width]\n".to_string();
    }
    if !scale.span.is_finite() {
        return "[no plot, span is not finite]\n".to_string();
    }

    let bar_rows = if separate_bars { sets.len() } else { 1 };
    let mut canvas = Canvas {
        width,
        rows: Vec::new(),
        bars: vec![None; bar_rows],
    };
    for (position, &(number, sample)) in sets.iter().enumerate() {
        let bar = if separate_bars { position } else { 0 };
        canvas.add_points(&scale, number, sample);
        canvas.add_bar(&scale, bar, sample);
    }
    canvas.render()
}

/// Maps values to columns: `width` columns spread evenly from the smallest
/// to the largest of every set's min, max and avg -/+ stddev, each column
/// centred on its value.
struct Scale {
    span: f64,
    origin: f64,
    step: f64,
    width: usize,
}

impl Scale {
    fn fit<'a>(samples: impl Iterator<Item = &'a Sample>, width: usize) -> Option<Scale> {
        // ministat's starting bounds; NaN never moves them.
        let (mut low, mut high) = (999e99_f64, -999e99_f64);
        let mut any = false;
        for sample in samples {
            any = true;
            let (avg, stddev) = (sample.avg(), sample.stddev());
            let sorted = sample.sorted();
            for value in [
                sorted[0],
                sorted[sorted.len() - 1],
                avg - stddev,
                avg + stddev,
            ] {
                if value < low {
                    low = value;
                }
                if value > high {
                    high = value;
                }
            }
        }
        if !any {
            return None;
        }
        let span = high - low;
        let step = span / (width as f64 - 1.0);
        Some(Scale {
            span,
            origin: low - 0.5 * step,
            step,
            width,
        })
    }

    /// The column of `value`: C's truncating conversion, kept inside the plot
    /// (only NaN or infinite values could fall outside).
    fn column(&self, value: f64) -> usize {
        let position = ((value - self.origin) / self.step).trunc();
        if position.is_nan() || position < 0.0 {
            0
        } else {
            (position as usize).min(self.width - 1)
        }
    }
}

struct Canvas {
    width: usize,
    /// Point rows from the bottom; row 0 is never printed (stack heights start at 1).
    rows: Vec<Vec<u8>>,
    bars: Vec<Option<Vec<u8>>>,
}

impl Canvas {
    fn add_points(&mut self, scale: &Scale, number: usize, sample: &Sample) {
        let columns: Vec<usize> = sample.sorted().iter().map(|&v| scale.column(v)).collect();
        let tallest = columns
            .chunk_by(|a, b| a == b)
            .map(<[usize]>::len)
            .max()
            .unwrap_or(0)
            .max(1);
        // The point area always takes the height this set needs (see the
        // module comment); rows above it are lost, new rows start empty.
        self.rows.resize(tallest + 1, vec![0; self.width]);

        let mut height = 0;
        for (i, &column) in columns.iter().enumerate() {
            height = if i > 0 && columns[i - 1] == column {
                height + 1
            } else {
                1
            };
            self.rows[height][column] |= number as u8;
        }
    }

    fn add_bar(&mut self, scale: &Scale, bar: usize, sample: &Sample) {
        let width = self.width;
        let row = self.bars[bar].get_or_insert_with(|| vec![0; width]);
        let (avg, stddev) = (sample.avg(), sample.stddev());
        if !stddev.is_nan() {
            let left = scale.column(avg - stddev);
            let right = scale.column(avg + stddev);
            row[right] = b'|';
            row[left] = b'|';
            for cell in row.iter_mut().take(right).skip(left + 1) {
                if *cell == 0 {
                    *cell = b'_';
                }
            }
        }
        row[scale.column(sample.median())] = b'M';
        row[scale.column(avg)] = b'A';
    }

    fn render(&self) -> String {
        let border = format!("+{}+\n", "-".repeat(self.width));
        let mut out = border.clone();
        for row in self.rows.iter().skip(1).rev() {
            out.push('|');
            for &cell in row {
                match symbol(usize::from(cell)) {
                    Some(symbol) => out.push(symbol),
                    None => out.push_str(&format!("[{cell:02x}]")),
                }
            }
            out.push_str("|\n");
        }
        for bar in self.bars.iter().flatten() {
            out.push('|');
            out.extend(
                bar.iter()
                    .map(|&b| if b == 0 { ' ' } else { char::from(b) }),
            );
            out.push_str("|\n");
        }
        out.push_str(&border);
        out
    }
}
