//! throughput.png: GB/s against message size (log axis), one line per implementation/backend.
//!
//! IMPLEMENTATION NOTE: plotters renders text through system fonts (its `ttf` feature needs
//! fontconfig and FreeType). To work on a bare Debian machine, plotters is built without it and
//! every label is drawn here, pixel by pixel, from the public-domain 8x8 bitmap font of the
//! `font8x8` crate. plotters does the coordinate mapping and the lines.

use std::path::Path;

use anyhow::{Result, anyhow};
use font8x8::UnicodeFonts;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::report::size_label;
use super::{Op, Record};

const W: u32 = 1100;
const H: u32 = 650;
const COLORS: [RGBColor; 10] = [
    RGBColor(0x99, 0x99, 0x99),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x00, 0x00, 0x00),
];

type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

/// Draws `text` with its top-left corner at (x, y), each font pixel `scale` pixels wide.
fn text(area: &Area, x: i32, y: i32, s: &str, color: &RGBColor, scale: i32) {
    for (n, ch) in s.chars().enumerate() {
        let glyph = font8x8::BASIC_FONTS
            .get(ch)
            .unwrap_or_else(|| font8x8::BASIC_FONTS.get('?').unwrap_or([0; 8]));
        let gx = x + n as i32 * 8 * scale;
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) != 0 {
                    for dy in 0..scale {
                        for dx in 0..scale {
                            let _ = area.draw_pixel(
                                (gx + col * scale + dx, y + row as i32 * scale + dy),
                                color,
                            );
                        }
                    }
                }
            }
        }
    }
}

fn text_width(s: &str, scale: i32) -> i32 {
    s.chars().count() as i32 * 8 * scale
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `n` ticks up to `max`.
fn nice_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    p * if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    }
}

pub fn draw(path: &Path, records: &[Record], op: Op, key_bits: u32) -> Result<()> {
    let rs: Vec<&Record> = records
        .iter()
        .filter(|r| r.op == op && r.key_bits == key_bits && r.size > 0)
        .collect();
    let err = |e: &dyn std::fmt::Display| anyhow!("cannot draw {}: {e}", path.display());
    let root = BitMapBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let black = RGBColor(0, 0, 0);
    let title = format!(
        "aesx bench: {}, GB/s by message size",
        op.case_label(key_bits)
    );
    text(
        &root,
        (W as i32 - text_width(&title, 2)) / 2,
        12,
        &title,
        &black,
        2,
    );
    if rs.is_empty() {
        let msg = format!("no {} results in this run", op.case_label(key_bits));
        text(&root, 80, 300, &msg, &black, 2);
        return root.present().map_err(|e| err(&e));
    }
    let mut sizes: Vec<usize> = rs.iter().map(|r| r.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let (lo, hi) = (sizes[0] as f64 / 1.4, *sizes.last().unwrap() as f64 * 1.4);
    let ymax = rs.iter().map(|r| r.gbps()).fold(0.0, f64::max) * 1.08;
    let ymax = if ymax > 0.0 { ymax } else { 1.0 };

    let mut chart = ChartBuilder::on(&root)
        .margin_top(50)
        .margin_right(30)
        .margin_bottom(10)
        .margin_left(10)
        .set_label_area_size(LabelAreaPosition::Left, 70)
        .set_label_area_size(LabelAreaPosition::Bottom, 50)
        .build_cartesian_2d((lo..hi).log_scale(), 0f64..ymax)
        .map_err(|e| err(&e))?;

    let grid = RGBColor(0xdd, 0xdd, 0xdd);
    let step = nice_step(ymax, 8.0);
    let mut y = 0.0;
    while y <= ymax {
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(lo, y), (hi, y)],
                grid,
            )))
            .map_err(|e| err(&e))?;
        let (px, py) = chart.backend_coord(&(lo, y));
        let l = if step < 1.0 {
            format!("{y:.1}")
        } else {
            format!("{y:.0}")
        };
        text(&root, px - 8 - text_width(&l, 1), py - 4, &l, &black, 1);
        y += step;
    }
    for &s in &sizes {
        let x = s as f64;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x, 0.0), (x, ymax)],
                grid,
            )))
            .map_err(|e| err(&e))?;
        let (px, py) = chart.backend_coord(&(x, 0.0));
        let l = size_label(s).replace(' ', "");
        text(&root, px - text_width(&l, 1) / 2, py + 8, &l, &black, 1);
    }
    // Axes.
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(lo, ymax), (lo, 0.0), (hi, 0.0)],
            black,
        )))
        .map_err(|e| err(&e))?;
    let (_, bottom) = chart.backend_coord(&(lo, 0.0));
    let xl = "message size (log scale)";
    text(
        &root,
        (W as i32 - text_width(xl, 1)) / 2,
        bottom + 28,
        xl,
        &black,
        1,
    );
    text(&root, 8, 36, "GB/s", &black, 2);

    // One line per implementation/backend, legend at the top left of the plot.
    let mut labels: Vec<String> = Vec::new();
    for r in &rs {
        if !labels.contains(&r.label()) {
            labels.push(r.label());
        }
    }
    let (lx, ly) = chart.backend_coord(&(lo, ymax));
    let widest = labels.iter().map(|l| text_width(l, 1)).max().unwrap_or(0);
    root.draw(&Rectangle::new(
        [
            (lx + 8, ly + 6),
            (lx + 56 + widest, ly + 10 + 18 * labels.len() as i32),
        ],
        WHITE.filled(),
    ))
    .map_err(|e| err(&e))?;
    for (i, label) in labels.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut pts: Vec<(f64, f64)> = rs
            .iter()
            .filter(|r| &r.label() == label)
            .map(|r| (r.size as f64, r.gbps()))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
        let y = ly + 12 + i as i32 * 18;
        root.draw(&PathElement::new(
            vec![(lx + 14, y + 4), (lx + 40, y + 4)],
            color.stroke_width(3),
        ))
        .map_err(|e| err(&e))?;
        text(&root, lx + 48, y, label, &black, 1);
    }
    root.present().map_err(|e| err(&e))
}
