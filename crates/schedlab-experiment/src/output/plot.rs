//! SVG plots of a comparison against the (first) sweep key.
//!
//! - [`PlotKind::Ratio`], the default: each variant's ratio of means to the baseline with its
//!   95 % confidence interval as error bars, and the baseline as the line y = 1. Variants that
//!   differ by under a percent lie on each other in absolute units; as ratios they separate.
//! - [`PlotKind::Absolute`]: each variant's mean with ± one standard error.
//!
//! The x axis is logarithmic when the sweep's values grow geometrically (1, 2, 4, 8 ...). The
//! legend sits right of the plot area, never over data; colours are the Okabe-Ito palette
//! (distinguishable with the common colour-vision deficiencies; its yellow is left out as too
//! faint on white), each variant also has its own marker shape, and the y title and the
//! caption say which way is better. A marker is filled where the verdict is a difference
//! (significant and at least the minimum effect) and hollow where it is not; the ratio plot
//! shades the band of ± the minimum effect around 1, inside which no difference counts. A
//! sweep of words (`model=a,b`) is labelled with them. plotters' SVG backend keeps text as
//! `<text>`, so no fonts are embedded.

use super::format::{OutputError, OutputFormat};
use super::table::title;
use crate::report::{CompareReport, Direction};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use schedlab_metrics::Better;

/// An SVG plot (`--plot FILE.svg`; `--absolute` for [`PlotKind::Absolute`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plot {
    /// Which plot.
    pub kind: PlotKind,
}

impl OutputFormat for Plot {
    fn render(&self, report: &CompareReport) -> Result<String, OutputError> {
        to_svg(report, self.kind)
    }
}

/// Which plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotKind {
    /// Ratio to the baseline with confidence-interval error bars.
    Ratio,
    /// The metric itself with ± one standard error.
    Absolute,
}

/// Okabe & Ito (2008), "Color Universal Design": black, blue, vermillion, bluish green,
/// reddish purple, orange, sky blue (yellow left out).
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
];

fn colour(vi: usize) -> RGBColor {
    PALETTE[vi % PALETTE.len()]
}

/// Whether sorted positive values grow geometrically: at least three, every step at least
/// ×1.5 and the whole range at least ×8 (1, 4, 8, 16 yes; 10, 20, 30 no).
pub fn geometric(xs: &[f64]) -> bool {
    let mut v: Vec<f64> = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.len() >= 3
        && v[0] > 0.0
        && v.windows(2).all(|w| w[1] / w[0] >= 1.5)
        && v[v.len() - 1] / v[0] >= 8.0
}

/// One marker per variant, so lines stay apart without colour; filled where the verdict is a
/// difference, hollow (white inside) where it is not.
fn marker<'a, DB: DrawingBackend>(
    vi: usize,
    (x, y): (i32, i32),
    c: RGBColor,
    filled: bool,
) -> DynElement<'a, DB, (i32, i32)> {
    let style = if filled {
        c.filled()
    } else {
        c.stroke_width(2)
    };
    match (vi % 4, filled) {
        (0, _) => Circle::new((x, y), 4, style).into_dyn(),
        (1, _) => Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], style).into_dyn(),
        (2, _) => TriangleMarker::new((x, y), 5, style).into_dyn(),
        (_, true) => Cross::new((x, y), 4, c.stroke_width(2)).into_dyn(),
        // A cross has no inside: hollow, it is drawn thin.
        (_, false) => Cross::new((x, y), 5, c.stroke_width(1)).into_dyn(),
    }
}

/// (x, y, low, high, a difference: filled)
type Pt = (f64, f64, f64, f64, bool);

struct Series {
    name: String,
    vi: usize,
    pts: Vec<Pt>,
}

/// The sweep key, each point's x, and the points' labels when some value is not a number
/// (a sweep of words is drawn at 1, 2, 3 ... and labelled with the words).
fn x_values(report: &CompareReport) -> (String, Vec<f64>, Option<Vec<String>>) {
    let key = report
        .points
        .first()
        .and_then(|p| p.params.keys().next().cloned());
    let value = |p: &crate::report::PointStats| {
        key.as_ref()
            .and_then(|k| p.params.get(k))
            .cloned()
            .unwrap_or_default()
    };
    let number = |v: &str| {
        v.trim_end_matches(|c: char| c.is_alphabetic())
            .parse::<f64>()
            .ok()
    };
    let words = key.is_some() && report.points.iter().any(|p| number(&value(p)).is_none());
    let xs = report
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            number(&value(p))
                .filter(|_| !words)
                .unwrap_or(i as f64 + 1.0)
        })
        .collect();
    let labels = words.then(|| report.points.iter().map(value).collect());
    (key.unwrap_or_else(|| "point".into()), xs, labels)
}

fn series(report: &CompareReport, kind: PlotKind, xs: &[f64]) -> Vec<Series> {
    let nv = report.points.first().map_or(0, |p| p.variants.len());
    let first = if kind == PlotKind::Ratio { 1 } else { 0 };
    (first..nv)
        .map(|vi| Series {
            name: report.points[0].variants[vi].variant.clone(),
            vi,
            pts: report
                .points
                .iter()
                .zip(xs)
                .filter_map(|(p, &x)| {
                    let v = p.variants.get(vi)?;
                    // The baseline is the reference: drawn filled.
                    let clear = vi == 0
                        || v.verdict.as_ref().is_some_and(|d| {
                            matches!(d.direction, Direction::Better | Direction::Worse)
                        });
                    let (y, lo, hi) = match kind {
                        PlotKind::Ratio => (v.ratio, v.ci_low, v.ci_high),
                        PlotKind::Absolute => (v.mean, v.mean - v.stderr, v.mean + v.stderr),
                    };
                    // An unbounded or missing interval draws no bar, not a bar to infinity.
                    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
                        (lo, hi)
                    } else {
                        (y, y)
                    };
                    y.is_finite().then_some((x, y, lo, hi, clear))
                })
                .collect(),
        })
        .collect()
}

/// Renders the report as an SVG document.
pub(crate) fn to_svg(report: &CompareReport, kind: PlotKind) -> Result<String, OutputError> {
    let (key, xs, words) = x_values(report);
    let all = series(report, kind, &xs);
    let (mut ymin, mut ymax) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in &all {
        for &(_, y, lo, hi, _) in &s.pts {
            ymin = ymin.min(lo.min(y));
            ymax = ymax.max(hi.max(y));
        }
    }
    let band = report.min_effect();
    if kind == PlotKind::Ratio {
        ymin = ymin.min(1.0 - band);
        ymax = ymax.max(1.0 + band);
    }
    if !ymin.is_finite() {
        (ymin, ymax) = (0.0, 2.0);
    }
    let pad = ((ymax - ymin) * 0.08).max(ymax.abs() * 0.005).max(1e-9);
    let (ylo, yhi) = (ymin - pad, ymax + pad);
    let (xmin, xmax) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let log_x = words.is_none() && geometric(&xs);
    let direction = match report.metric.better {
        Better::Higher => "higher is better ↑",
        Better::Lower => "lower is better ↓",
    };
    let unit = if report.metric.unit.is_empty() {
        String::new()
    } else {
        format!(" [{}]", report.metric.unit)
    };
    let baseline = report
        .points
        .first()
        .and_then(|p| p.variants.first())
        .map_or(String::new(), |v| v.variant.clone());
    let y_desc = match kind {
        PlotKind::Ratio => format!("{} / {baseline} ({direction})", report.metric.name),
        PlotKind::Absolute => format!("{}{unit} ({direction})", report.metric.name),
    };
    let bars = match kind {
        PlotKind::Ratio => "error bars: 95% confidence interval of the ratio",
        PlotKind::Absolute => "error bars: ± one standard error",
    };
    let caption = format!("{}; {direction}; {bars}", title(report));
    let x_desc = if log_x {
        format!("{key} (log scale)")
    } else {
        key
    };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (1000, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let (plot_area, legend_area) = root.split_horizontally(720);
        let mut b = ChartBuilder::on(&plot_area);
        b.caption(caption, ("sans-serif", 14))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(75);
        // A geometric sweep is drawn at ln(x) on a linear axis, labelled at the swept values
        // (plotters' own log axis labels every decade step, which crowds 8, 9, 10).
        let tx = |x: f64| if log_x { x.ln() } else { x };
        let (x0, x1) = (tx(xmin), tx(xmax));
        // Variants sit a little apart at each x so their error bars do not hide each other.
        let dodge = (x1 - x0).max(1.0) * 0.01;
        let mid = (all.len() as f64 - 1.0) / 2.0;
        let pts: Vec<Line> = all
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let off = (i as f64 - mid) * dodge;
                let p = s
                    .pts
                    .iter()
                    .map(|&(x, y, lo, hi, clear)| (tx(x) + off, y, lo, hi, clear))
                    .collect();
                (s.name.clone(), s.vi, p)
            })
            .collect();
        let xpad = ((x1 - x0) * 0.06).max(if log_x { 0.1 } else { 0.5 });
        let chart = b
            .build_cartesian_2d(x0 - xpad..x1 + xpad, ylo..yhi)
            .map_err(draw_error)?;
        let ticks: Option<Vec<(f64, String)>> = match &words {
            Some(w) => Some(xs.iter().copied().zip(w.iter().cloned()).collect()),
            None => log_x.then(|| {
                let mut v: Vec<f64> = xs.clone();
                v.sort_by(f64::total_cmp);
                v.dedup();
                v.into_iter().map(|x| (x.ln(), format!("{x}"))).collect()
            }),
        };
        let yfmt = axis_decimals(ylo, yhi);
        draw(
            chart,
            &plot_area,
            &pts,
            (kind, band),
            (&x_desc, &y_desc),
            (x0 - xpad, x1 + xpad),
            ticks.as_deref(),
            yfmt,
        )?;
        legend(&legend_area, &all, kind, &baseline, band)?;
        root.present().map_err(draw_error)?;
    }
    Ok(buf)
}

/// A variant's name, index and points.
type Line = (String, usize, Vec<Pt>);
type Pts = [Line];

/// Decimals of y tick labels for a range: enough to tell ticks a tenth of it apart.
fn axis_decimals(lo: f64, hi: f64) -> usize {
    let step = (hi - lo) / 10.0;
    if !(step.is_finite() && step > 0.0) {
        return 2;
    }
    (-(step.log10().floor()) as i64).clamp(0, 6) as usize
}

#[allow(clippy::too_many_arguments)]
fn draw<'a>(
    mut chart: ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    area: &DrawingArea<SVGBackend<'a>, Shift>,
    all: &Pts,
    (kind, band): (PlotKind, f64),
    (x_desc, y_desc): (&str, &str),
    (x0, x1): (f64, f64),
    ticks: Option<&[(f64, String)]>,
    ydec: usize,
) -> Result<(), OutputError> {
    let yfmt = move |v: &f64| format!("{v:.ydec$}");
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .y_label_formatter(&yfmt)
        .light_line_style(WHITE);
    if ticks.is_some() {
        mesh.disable_x_mesh().x_labels(0);
    }
    mesh.draw().map_err(draw_error)?;
    if let Some(ticks) = ticks {
        let (ylo, yhi) = {
            let r = chart.y_range();
            (r.start, r.end)
        };
        for (x, label) in ticks {
            chart
                .draw_series(LineSeries::new(
                    [(*x, ylo), (*x, yhi)],
                    RGBColor(0xdd, 0xdd, 0xdd).stroke_width(1),
                ))
                .map_err(draw_error)?;
            let (px, py) = chart.backend_coord(&(*x, ylo));
            let style = ("sans-serif", 12).into_font().color(&BLACK).pos(
                plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Top,
                ),
            );
            area.draw(&Text::new(label.clone(), (px, py + 6), style))
                .map_err(draw_error)?;
        }
    }
    if kind == PlotKind::Ratio {
        // Inside the band no difference counts, significant or not.
        chart
            .draw_series([Rectangle::new(
                [(x0, 1.0 - band), (x1, 1.0 + band)],
                RGBColor(0xee, 0xee, 0xee).filled(),
            )])
            .map_err(draw_error)?;
        chart
            .draw_series(DashedLineSeries::new(
                [(x0, 1.0), (x1, 1.0)],
                6,
                4,
                colour(0).stroke_width(1),
            ))
            .map_err(draw_error)?;
    }
    for (_, vi, pts) in all {
        let c = colour(*vi);
        chart
            .draw_series(LineSeries::new(
                pts.iter().map(|&(x, y, _, _, _)| (x, y)),
                c.stroke_width(2),
            ))
            .map_err(draw_error)?;
        // Bars by hand: plotters' ErrorBar draws a circle of its own over the marker.
        for &(x, _, lo, hi, _) in pts.iter().filter(|p| p.2 < p.3) {
            chart
                .draw_series(LineSeries::new([(x, lo), (x, hi)], c.stroke_width(2)))
                .map_err(draw_error)?;
            chart
                .draw_series([lo, hi].into_iter().map(|y| {
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(-5, 0), (5, 0)], c.stroke_width(2))
                }))
                .map_err(draw_error)?;
        }
        let vi = *vi;
        chart
            .draw_series(pts.iter().map(|&(x, y, _, _, clear)| {
                EmptyElement::at((x, y)) + marker::<SVGBackend>(vi, (0, 0), c, clear)
            }))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// The legend, in its own area right of the plot.
fn legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    all: &[Series],
    kind: PlotKind,
    baseline: &str,
    band: f64,
) -> Result<(), OutputError> {
    let style = ("sans-serif", 13).into_font().color(&BLACK);
    let mut y = 60;
    let mut line = |text: String, vi: Option<usize>, dashed: bool| -> Result<(), OutputError> {
        if let Some(vi) = vi {
            let c = colour(vi);
            if dashed {
                area.draw(&PathElement::new(vec![(8, y), (16, y)], c.stroke_width(1)))
                    .and_then(|_| {
                        area.draw(&PathElement::new(vec![(22, y), (30, y)], c.stroke_width(1)))
                    })
                    .map_err(draw_error)?;
            } else {
                area.draw(&PathElement::new(vec![(8, y), (30, y)], c.stroke_width(2)))
                    .map_err(draw_error)?;
                area.draw(&(EmptyElement::at((19, y)) + marker::<SVGBackend>(vi, (0, 0), c, true)))
                    .map_err(draw_error)?;
            }
        }
        // Long variant names wrap at their commas.
        let mut rest = text.as_str();
        loop {
            let cut = if rest.chars().count() > 32 {
                rest[..32.min(rest.len())]
                    .rfind(',')
                    .map(|i| i + 1)
                    .unwrap_or(rest.len().min(32))
            } else {
                rest.len()
            };
            area.draw(&Text::new(
                rest[..cut].to_string(),
                (38, y - 7),
                style.clone(),
            ))
            .map_err(draw_error)?;
            rest = &rest[cut..];
            y += 18;
            if rest.is_empty() {
                break;
            }
        }
        y += 6;
        Ok(())
    };
    if kind == PlotKind::Ratio {
        line(format!("{baseline} (baseline = 1)"), Some(0), true)?;
    }
    for s in all {
        line(s.name.clone(), Some(s.vi), false)?;
    }
    // Each note fits the legend's 32 columns.
    line("filled marker: a difference".into(), None, false)?;
    line("hollow marker: no difference".into(), None, false)?;
    if kind == PlotKind::Ratio {
        line(
            format!("grey band: ±{} % (min. effect)", (band * 1e4).round() / 1e2),
            None,
            false,
        )?;
    }
    Ok(())
}

/// plotters' error (generic over the backend) as an [`OutputError::Draw`].
fn draw_error(e: impl std::fmt::Display) -> OutputError {
    OutputError::Draw(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubling_sweeps_are_geometric_and_even_steps_are_not() {
        assert!(geometric(&[1.0, 4.0, 8.0, 16.0]));
        assert!(geometric(&[20.0, 80.0, 160.0]));
        assert!(!geometric(&[10.0, 20.0, 30.0]));
        assert!(!geometric(&[1.0, 2.0]));
        assert!(!geometric(&[0.0, 4.0, 8.0, 16.0]));
    }
}
