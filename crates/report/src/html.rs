//! One self-contained HTML file: inline CSS, inline SVG, no script, no external URL.
//! A Content-Security-Policy forbids every fetch, so the file behaves the same offline.

use crate::doc::{Block, Cell, ReportDoc, Table};
use crate::svg::{escape, render_svg};
use std::fmt::Write;

const CSS: &str = r#"
:root { --fg:#1f2328; --muted:#57606a; --line:#d0d7de; --bg:#ffffff; --soft:#f6f8fa;
  --pass:#1a7f37; --fail:#cf222e; --warn:#9a6700; --info:#0969da; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 28px 28px 48px; }
p, .verdicts, .notes, dl.facts { max-width: 980px; }
h1 { font-size: 26px; margin: 0 0 4px; line-height: 1.25; }
h2 { font-size: 20px; margin: 36px 0 12px; padding-bottom: 6px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 8px; }
p { margin: 8px 0; }
code { font: 13px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--soft);
  padding: 1px 4px; border-radius: 4px; }
.subtitle { color: var(--muted); margin: 0 0 18px; }
.verdicts { list-style: none; margin: 0; padding: 14px 18px; border: 1px solid var(--line);
  border-radius: 8px; background: var(--soft); }
.verdicts li, .notes li { margin: 4px 0; padding-left: 26px; position: relative; }
.verdicts li::before, .notes li::before { position: absolute; left: 0; font-weight: 700; width: 20px; text-align: center; }
li.pass::before { content: "✓"; color: var(--pass); }
li.fail::before { content: "✗"; color: var(--fail); }
li.warn::before { content: "!"; color: var(--warn); }
li.info::before { content: "i"; color: var(--info); font-style: italic; }
.verdicts li.fail, .notes li.fail { color: var(--fail); }
.notes { list-style: none; padding: 0; margin: 8px 0; }
nav.toc { margin: 18px 0 0; color: var(--muted); font-size: 14px; }
nav.toc a { color: var(--info); text-decoration: none; margin-right: 14px; white-space: nowrap; }
.table-wrap { overflow-x: auto; margin: 10px 0; }
table { border-collapse: collapse; font-size: 13.5px; min-width: 50%; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; vertical-align: bottom; }
th.num { text-align: right; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.pass { color: var(--pass); font-weight: 600; }
td.fail { color: var(--fail); font-weight: 600; }
td.warn { color: var(--warn); font-weight: 600; }
.table-note, figcaption { color: var(--muted); font-size: 13px; margin: 4px 0 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; margin: 10px 0; font-size: 14px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
figure { margin: 16px 0; }
figure svg { width: 100%; height: auto; max-width: 760px; display: block; border: 1px solid var(--line); border-radius: 6px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; border-top: 1px solid var(--line); padding-top: 10px; }
@media print {
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  table { font-size: 8.5pt; }
  th, td { padding: 3px 4px; overflow-wrap: anywhere; }
  td.num { white-space: normal; }
  .table-wrap { overflow: visible; }
  nav.toc { display: none; }
  h2 { break-after: avoid; }
  figure, table, .verdicts { break-inside: avoid; }
  figure svg { border: none; }
  a { color: inherit; }
}
"#;

/// Inline markup: HTML-escaped, `code` spans and **bold** kept.
pub(crate) fn inline(text: &str) -> String {
    let escaped = escape(text);
    let mut out = String::with_capacity(escaped.len());
    let mut code = false;
    let mut bold = false;
    let mut rest = escaped.as_str();
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            out.push_str(if code { "</code>" } else { "<code>" });
            code = !code;
            rest = &rest[1..];
        } else if !code && rest.starts_with("**") {
            out.push_str(if bold { "</strong>" } else { "<strong>" });
            bold = !bold;
            rest = &rest[2..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if code {
        out.push_str("</code>");
    }
    if bold {
        out.push_str("</strong>");
    }
    out
}

/// Renders the whole report as one HTML document.
pub fn render_html(doc: &ReportDoc) -> String {
    let mut s = String::new();
    s.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    s.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n");
    let _ = writeln!(
        s,
        "<meta name=\"generator\" content=\"loadlab {}\">",
        escape(&doc.tool_version)
    );
    let _ = writeln!(s, "<title>{}</title>", escape(&doc.title));
    let _ = writeln!(s, "<style>{CSS}</style>\n</head>\n<body>\n<main>");
    let _ = writeln!(
        s,
        "<header>\n<h1>{}</h1>\n<p class=\"subtitle\">{}</p>",
        inline(&doc.title),
        inline(&doc.subtitle)
    );
    if !doc.verdicts.is_empty() {
        s.push_str("<ul class=\"verdicts\" id=\"verdict\">\n");
        for v in &doc.verdicts {
            let _ = writeln!(
                s,
                "<li class=\"{}\">{}</li>",
                v.level.css(),
                inline(&v.text)
            );
        }
        s.push_str("</ul>\n");
    }
    s.push_str("<nav class=\"toc\">");
    for sec in &doc.sections {
        let _ = write!(
            s,
            "<a href=\"#{}\">{}</a>",
            escape(&sec.id),
            escape(&sec.title)
        );
    }
    s.push_str("</nav>\n</header>\n");
    for sec in &doc.sections {
        let _ = writeln!(
            s,
            "<section id=\"{}\">\n<h2>{}</h2>",
            escape(&sec.id),
            inline(&sec.title)
        );
        for b in &sec.blocks {
            block(&mut s, b);
        }
        s.push_str("</section>\n");
    }
    let _ = writeln!(
        s,
        "<footer>Written by loadlab {}. This file is self-contained: no scripts, no fonts, no network requests; the charts are inline SVG.</footer>",
        escape(&doc.tool_version)
    );
    s.push_str("</main>\n</body>\n</html>\n");
    s
}

fn block(s: &mut String, b: &Block) {
    match b {
        Block::Heading(t) => {
            let _ = writeln!(s, "<h3>{}</h3>", inline(t));
        }
        Block::Text(t) => {
            let _ = writeln!(s, "<p>{}</p>", inline(t));
        }
        Block::List(items) => {
            s.push_str("<ul>\n");
            for i in items {
                let _ = writeln!(s, "<li>{}</li>", inline(i));
            }
            s.push_str("</ul>\n");
        }
        Block::Notes(notes) => {
            s.push_str("<ul class=\"notes\">\n");
            for v in notes {
                let _ = writeln!(
                    s,
                    "<li class=\"{}\">{}</li>",
                    v.level.css(),
                    inline(&v.text)
                );
            }
            s.push_str("</ul>\n");
        }
        Block::Facts(facts) => {
            s.push_str("<dl class=\"facts\">\n");
            for (k, v) in facts {
                let _ = writeln!(s, "<dt>{}</dt><dd>{}</dd>", inline(k), inline(v));
            }
            s.push_str("</dl>\n");
        }
        Block::Table(t) => table(s, t),
        Block::Chart(c) => {
            let _ = writeln!(
                s,
                "<figure id=\"chart-{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>",
                escape(&c.id),
                render_svg(c),
                inline(&c.description)
            );
        }
    }
}

fn table(s: &mut String, t: &Table) {
    s.push_str("<div class=\"table-wrap\"><table>\n<thead><tr>");
    for c in &t.columns {
        let class = if c.numeric { " class=\"num\"" } else { "" };
        let _ = write!(s, "<th{class}>{}</th>", inline(&c.title));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        s.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let numeric = t.columns.get(i).is_some_and(|c| c.numeric);
            cell_html(s, cell, numeric);
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    if let Some(n) = &t.note {
        let _ = writeln!(s, "<p class=\"table-note\">{}</p>", inline(n));
    }
}

fn cell_html(s: &mut String, cell: &Cell, numeric: bool) {
    let mut classes = Vec::new();
    if numeric {
        classes.push("num");
    }
    if let Some(l) = cell.level {
        classes.push(l.css());
    }
    if classes.is_empty() {
        let _ = write!(s, "<td>{}</td>", inline(&cell.text));
    } else {
        let _ = write!(
            s,
            "<td class=\"{}\">{}</td>",
            classes.join(" "),
            inline(&cell.text)
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn inline_markup() {
        assert_eq!(
            super::inline("a `x<y` **b** & c"),
            "a <code>x&lt;y</code> <strong>b</strong> &amp; c"
        );
    }
}
