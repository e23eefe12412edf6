//! Markdown: the same content as the HTML report, with GitHub tables; each chart is an SVG file
//! beside the Markdown, linked as an image.

use crate::doc::{Block, Level, ReportDoc, Table};
use crate::svg::render_svg;
use std::fmt::Write;

/// The Markdown text and the chart files it links to: `(file name, SVG)`, in `charts_dir`.
pub struct Markdown {
    pub text: String,
    pub charts: Vec<(String, String)>,
}

/// Renders `doc`; charts are linked as `charts_dir/<id>.svg` (a path relative to the Markdown file).
pub fn render_markdown(doc: &ReportDoc, charts_dir: &str) -> Markdown {
    let mut s = String::new();
    let mut charts = Vec::new();
    let _ = writeln!(s, "# {}\n", one_line(&doc.title));
    let _ = writeln!(s, "_{}_\n", one_line(&doc.subtitle));
    if !doc.verdicts.is_empty() {
        for v in &doc.verdicts {
            let _ = writeln!(s, "- {} {}", v.level.mark(), one_line(&v.text));
        }
        s.push('\n');
    }
    let toc: Vec<String> = doc
        .sections
        .iter()
        .map(|sec| format!("[{}](#{})", sec.title, sec.id))
        .collect();
    if !toc.is_empty() {
        let _ = writeln!(s, "Contents: {}\n", toc.join(" · "));
    }
    for sec in &doc.sections {
        let _ = writeln!(
            s,
            "<a id=\"{}\"></a>\n\n## {}\n",
            sec.id,
            one_line(&sec.title)
        );
        for b in &sec.blocks {
            match b {
                Block::Heading(t) => {
                    let _ = writeln!(s, "### {}\n", one_line(t));
                }
                Block::Text(t) => {
                    let _ = writeln!(s, "{}\n", t.trim());
                }
                Block::List(items) => {
                    for i in items {
                        let _ = writeln!(s, "- {}", one_line(i));
                    }
                    s.push('\n');
                }
                Block::Notes(notes) => {
                    for v in notes {
                        let _ = writeln!(s, "- {} {}", v.level.mark(), one_line(&v.text));
                    }
                    s.push('\n');
                }
                Block::Facts(facts) => {
                    let mut t = Table::new(&["", ""]);
                    for (k, v) in facts {
                        t.row(vec![format!("**{k}**").into(), v.as_str().into()]);
                    }
                    table(&mut s, &t);
                }
                Block::Table(t) => table(&mut s, t),
                Block::Chart(c) => {
                    let file = format!("{}.svg", c.id);
                    let _ = writeln!(
                        s,
                        "![{}]({}/{})\n",
                        one_line(&c.title).replace(['[', ']'], ""),
                        charts_dir.trim_end_matches('/'),
                        file
                    );
                    if !c.description.is_empty() {
                        let _ = writeln!(s, "_{}_\n", one_line(&c.description));
                    }
                    charts.push((file, render_svg(c)));
                }
            }
        }
    }
    let _ = writeln!(
        s,
        "---\n\n_Written by loadlab {}. The charts are SVG files in `{}/`._",
        doc.tool_version,
        charts_dir.trim_end_matches('/')
    );
    Markdown { text: s, charts }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cell_text(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

fn table(s: &mut String, t: &Table) {
    let header: Vec<String> = t.columns.iter().map(|c| cell_text(&c.title)).collect();
    let _ = writeln!(s, "| {} |", header.join(" | "));
    let align: Vec<&str> = t
        .columns
        .iter()
        .map(|c| if c.numeric { "---:" } else { "---" })
        .collect();
    let _ = writeln!(s, "|{}|", align.join("|"));
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| match c.level {
                Some(Level::Pass) | Some(Level::Fail) | Some(Level::Warn) => {
                    format!(
                        "{} {}",
                        c.level.map(Level::mark).unwrap_or(""),
                        cell_text(&c.text)
                    )
                }
                _ => cell_text(&c.text),
            })
            .collect();
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    s.push('\n');
    if let Some(n) = &t.note {
        let _ = writeln!(s, "_{}_\n", one_line(n));
    }
}
