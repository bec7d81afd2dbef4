//! SVG plot of a comparison: the metric against the (first) sweep key, one line per variant,
//! error bars of ± one standard error. plotters' SVG backend keeps text as `<text>`, so no
//! fonts are needed.

use crate::report::CompareReport;
use plotters::prelude::*;

/// Renders the report as an SVG document.
pub fn to_svg(report: &CompareReport, title: &str) -> Result<String, String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let key = report
            .points
            .first()
            .and_then(|p| p.params.keys().next().cloned());
        // X positions: the sweep value when numeric, else its index.
        let xs: Vec<f64> = report
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                key.as_ref()
                    .and_then(|k| p.params.get(k))
                    .and_then(|v| {
                        v.trim_end_matches(|c: char| c.is_alphabetic())
                            .parse::<f64>()
                            .ok()
                    })
                    .unwrap_or(i as f64)
            })
            .collect();
        let mut ymin = f64::INFINITY;
        let mut ymax = f64::NEG_INFINITY;
        for p in &report.points {
            for v in &p.variants {
                if v.mean.is_finite() {
                    ymin = ymin.min(v.mean - v.stderr);
                    ymax = ymax.max(v.mean + v.stderr);
                }
            }
        }
        if !ymin.is_finite() {
            ymin = 0.0;
            ymax = 1.0;
        }
        let pad = ((ymax - ymin) * 0.1).max(ymax.abs() * 0.05).max(1e-9);
        let (xmin, xmax) = xs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        let (xmin, xmax) = if xmin < xmax {
            (xmin, xmax)
        } else {
            (xmin - 1.0, xmin + 1.0)
        };
        let xpad = (xmax - xmin) * 0.05;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (xmin - xpad)..(xmax + xpad),
                (ymin - pad).min(0.0f64.max(ymin - pad))..(ymax + pad),
            )
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(key.clone().unwrap_or_else(|| "point".into()))
            .y_desc(format!("{} [{}]", report.metric.name, report.metric.unit))
            .draw()
            .map_err(|e| e.to_string())?;
        let nv = report.points.first().map_or(0, |p| p.variants.len());
        for vi in 0..nv {
            let color = Palette99::pick(vi).to_rgba();
            let pts: Vec<(f64, f64, f64)> = report
                .points
                .iter()
                .zip(&xs)
                .filter_map(|(p, &x)| p.variants.get(vi).map(|v| (x, v.mean, v.stderr)))
                .filter(|(_, m, _)| m.is_finite())
                .collect();
            let name = report.points[0].variants[vi].variant.clone();
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|&(x, y, _)| (x, y)),
                    color.stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(pts.iter().map(|&(x, y, e)| {
                    ErrorBar::new_vertical(x, y - e, y, y + e, color.filled(), 8)
                }))
                .map_err(|e| e.to_string())?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}
