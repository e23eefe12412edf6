//! The layout of the end-of-run summary: `label ......: value` lines and aligned tables, so
//! every part of the summary lines up the same way.

use crate::Style;
use std::io::{self, Write};

/// Width of the dotted label column (`latency ...........: `).
const LABEL_WIDTH: usize = 19;

fn label(text: &str) -> String {
    format!("{:.<LABEL_WIDTH$}: ", format!("{text} "))
}

/// A `label ......: value` line of the summary.
pub(crate) fn kv(out: &mut dyn Write, name: &str, value: &str) -> io::Result<()> {
    writeln!(out, "  {}{value}", label(name))
}

#[derive(Clone, Copy)]
pub(crate) enum Align {
    Left,
    Right,
}

/// An aligned table indented under a section title; the header row is bold when colour is on.
pub(crate) fn table(
    out: &mut dyn Write,
    style: Style,
    columns: &[(&str, Align)],
    rows: &[Vec<String>],
) -> io::Result<()> {
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, (h, _))| {
            rows.iter()
                .map(|row| row[i].chars().count())
                .chain([h.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(columns)
            .zip(&widths)
            .map(|((cell, (_, align)), &w)| match align {
                Align::Left => format!("{cell:<w$}"),
                Align::Right => format!("{cell:>w$}"),
            })
            .collect();
        format!("  {}", padded.join("  ").trim_end())
    };
    let head = line(columns.iter().map(|(h, _)| *h).collect());
    writeln!(out, "{}", style.bold(&head))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}
