//! JMeter's CSV results (`.jtl`, `jmeter -n -t plan.jmx -l results.jtl`): one sample a line,
//! with a header naming the columns (JMeter's default order is assumed without one):
//! `timeStamp` (ms since the epoch, the sample's start), `elapsed` (ms), `label`,
//! `responseCode`, `success`, `threadName`, `bytes`, `sentBytes`, `allThreads`, `Latency`
//! (ms to the first byte), `Connect` (ms). A date without a zone in `timeStamp` is read as
//! UTC, and said. The delimiter is the header's (`jmeter.save.saveservice.default_delimiter`:
//! a comma, tab, `;` or `|`).
//!
//! JMeter writes a sample's sub-results (a page's redirect hops `Home-0`, `Home-1`, its
//! embedded resources) as rows right after it, in the same thread and within its time. As
//! the XML reader does with nested samples, those rows are the requests, grouped under the
//! outer sample's label, and the outer row, their sum, is none: a file saved in either
//! format gives the same run.

use crate::csv::split;
use crate::jmeter::{thread_group, Readings, Sample, Sink};
use crate::lines::Lines;
use crate::problems::Malformed;
use crate::ReadError;
use std::collections::{HashMap, VecDeque};
use std::io::BufRead;

const DEFAULT_COLUMNS: &[&str] = &[
    "timeStamp",
    "elapsed",
    "label",
    "responseCode",
    "responseMessage",
    "threadName",
    "dataType",
    "success",
    "failureMessage",
    "bytes",
    "sentBytes",
    "grpThreads",
    "allThreads",
    "URL",
    "Latency",
    "IdleTime",
    "Connect",
];

/// Column positions by name.
struct Columns(HashMap<String, usize>);

impl Columns {
    fn get<'a>(&self, fields: &'a [String], name: &str) -> Option<&'a str> {
        self.0
            .get(name)
            .and_then(|&i| fields.get(i))
            .map(String::as_str)
    }

    fn num(&self, fields: &[String], name: &str) -> Option<i64> {
        self.get(fields, name)?.trim().parse().ok()
    }

    /// `timeStamp` in ms since the epoch, or a date without a zone (read as UTC, and counted).
    fn start_ms(&self, fields: &[String], readings: &mut Readings) -> Option<i64> {
        self.num(fields, "timeStamp").or_else(|| {
            let ms = crate::time::zoneless_ms(self.get(fields, "timeStamp")?)?;
            readings.zoneless_dates += 1;
            Some(ms)
        })
    }
}

/// A row kept until the next of its thread shows whether it held sub-results.
struct Held {
    fields: Vec<String>,
    line: u64,
    start_ms: i64,
    elapsed_ms: i64,
    /// Rows after it were its sub-results: it is no request.
    holds: bool,
}

/// How many rows are kept waiting for their sub-results. JMeter writes a sample's
/// sub-results right after it, but rows of other threads may come between (a handful in real
/// files); a row older than this has all of its.
const HELD_ROWS: usize = 64;

/// The delimiter of a results file, from its first line: the one after a header's first
/// name, else the most frequent of a comma, tab, `;` and `|` (a comma when none is there).
fn delimiter(first_line: &str) -> char {
    const CANDIDATES: [char; 4] = [',', '\t', ';', '|'];
    if let Some(after) = first_line.trim_start().strip_prefix("timeStamp") {
        if let Some(d) = after.chars().next().filter(|c| CANDIDATES.contains(c)) {
            return d;
        }
    }
    CANDIDATES
        .into_iter()
        .map(|d| (first_line.matches(d).count(), d))
        .filter(|&(n, _)| n > 0)
        .max_by_key(|&(n, d)| (n, d == ','))
        .map_or(',', |(_, d)| d)
}

/// The columns of a file, its delimiter, and its header's width (rows narrower were cut).
struct Layout {
    cols: Columns,
    sep: char,
    width: Option<usize>,
}

impl Layout {
    /// The layout a file's first line shows (`fields`: that line split by `sep`), and
    /// whether that line is a header (no sample).
    fn of_first(fields: &[String], sep: char) -> (Layout, bool) {
        let header = fields.iter().any(|f| f == "timeStamp");
        let names: Vec<String> = if header {
            fields.to_vec()
        } else {
            DEFAULT_COLUMNS.iter().map(|s| s.to_string()).collect()
        };
        let width = header.then_some(names.len());
        let cols = Columns(names.into_iter().enumerate().map(|(i, n)| (n, i)).collect());
        (Layout { cols, sep, width }, header)
    }

    /// A row's start and elapsed time (ms), or why it cannot be a sample (`malformed`).
    fn timing(
        &self,
        fields: &[String],
        n: u64,
        readings: &mut Readings,
        malformed: &mut Malformed,
    ) -> Option<(i64, i64)> {
        if let Some(w) = self.width.filter(|&w| fields.len() < w) {
            malformed.add(n, || {
                format!(
                    "{} fields where the header names {w}: a row cut short",
                    fields.len()
                )
            });
            return None;
        }
        let timing = (
            self.cols.start_ms(fields, readings),
            self.cols.num(fields, "elapsed"),
        );
        let (Some(start_ms), Some(elapsed_ms)) = timing else {
            malformed.add(n, || {
                "no timeStamp (ms since the epoch, or a date like 2019/12/05 12:37:24.250) and numeric elapsed (ms)".to_string()
            });
            return None;
        };
        Some((start_ms, elapsed_ms))
    }
}

/// Reads JMeter's CSV results, giving each sample to `sink`.
pub fn read_csv<R: BufRead>(
    input: R,
    malformed: &mut Malformed,
    sink: &mut dyn Sink,
) -> Result<Readings, ReadError> {
    let mut lines = Lines::new(input);
    let mut fields = Vec::new();
    let mut layout: Option<Layout> = None;
    let mut readings = Readings::default();
    let mut held: VecDeque<Held> = VecDeque::new();
    while let Some((n, line)) = lines.next_line()? {
        let line = line.trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            continue;
        }
        if layout.is_none() && line.trim_start().starts_with('<') {
            return Err(ReadError::Bad(
                "this is JMeter's XML format (jmeter.save.saveservice.output_format=xml): import it as jmeter-xml".into(),
            ));
        }
        let sep = layout.as_ref().map_or_else(|| delimiter(line), |l| l.sep);
        split(line, sep, &mut fields);
        if layout.is_none() {
            let (first, header) = Layout::of_first(&fields, sep);
            layout = Some(first);
            if header {
                continue;
            }
        }
        let layout = layout.as_ref().expect("set above");
        let Some((start_ms, elapsed_ms)) = layout.timing(&fields, n, &mut readings, malformed)
        else {
            continue;
        };
        sink.row(n, start_ms);
        let row = Held {
            fields: std::mem::take(&mut fields),
            line: n,
            start_ms,
            elapsed_ms,
            holds: false,
        };
        hold(&layout.cols, &mut held, row, &mut readings, sink)?;
    }
    if let Some(layout) = &layout {
        for row in held {
            emit(&layout.cols, row, sink)?;
        }
    }
    Ok(readings)
}

/// Takes in a timed row: a sub-result of the row its thread holds is a request now (in the
/// outer row's group); any other row is held until its thread's next shows whether it held
/// sub-results, and the row it replaces (or the oldest, past `HELD_ROWS`) is given out.
fn hold(
    cols: &Columns,
    held: &mut VecDeque<Held>,
    row: Held,
    readings: &mut Readings,
    sink: &mut dyn Sink,
) -> Result<(), ReadError> {
    // The column looked up once a row, not once a held row.
    let thread_col = cols.0.get("threadName").copied();
    let thread = field(&row.fields, thread_col);
    let same_thread = held
        .iter()
        .rposition(|h| field(&h.fields, thread_col) == thread);
    if let Some(i) = same_thread {
        let outer = &mut held[i];
        if is_sub_result(cols, outer, &row.fields, row.start_ms, row.elapsed_ms) {
            if !outer.holds {
                outer.holds = true;
                readings.holders += 1;
            }
            let group = cols.get(&outer.fields, "label").unwrap_or("");
            let at = (row.line, row.start_ms, row.elapsed_ms);
            return sink.sample(&sample(cols, &row.fields, at, Some(group)));
        }
        // The thread's next sample: its previous one has all its sub-results.
        let previous = held.remove(i).expect("found above");
        emit(cols, previous, sink)?;
    }
    held.push_back(row);
    if held.len() > HELD_ROWS {
        let oldest = held.pop_front().expect("more than one");
        emit(cols, oldest, sink)?;
    }
    Ok(())
}

/// The field at column `i`, if the row has it.
fn field(fields: &[String], i: Option<usize>) -> Option<&str> {
    fields.get(i?).map(String::as_str)
}

/// Gives `row` to `sink`, unless it held sub-results (they were the requests).
fn emit(cols: &Columns, row: Held, sink: &mut dyn Sink) -> Result<(), ReadError> {
    if row.holds {
        return Ok(());
    }
    let at = (row.line, row.start_ms, row.elapsed_ms);
    sink.sample(&sample(cols, &row.fields, at, None))
}

/// Whether the row in `fields` is a sub-result of `outer`: the same thread, and a label
/// `<outer>-<n>` (a redirect hop) or a time within the outer sample's (an embedded resource;
/// a thread's next sample starts after its last one ended).
fn is_sub_result(
    cols: &Columns,
    outer: &Held,
    fields: &[String],
    start_ms: i64,
    elapsed_ms: i64,
) -> bool {
    if cols.get(fields, "threadName") != cols.get(&outer.fields, "threadName") {
        return false;
    }
    let outer_label = cols.get(&outer.fields, "label").unwrap_or("");
    let label = cols.get(fields, "label").unwrap_or("");
    let hop = label
        .strip_prefix(outer_label)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if hop {
        return true;
    }
    // A Transaction Controller's own row comes after the samples it timed, spanning them: it
    // is no sub-result, whatever its time. Nor is a row of exactly the outer one's span.
    let transaction = ["responseMessage", "failureMessage"]
        .iter()
        .any(|name| crate::jmeter::is_transaction(cols.get(fields, name).unwrap_or("")));
    let outer_end = outer.start_ms + outer.elapsed_ms;
    let end = start_ms + elapsed_ms;
    !transaction
        && start_ms >= outer.start_ms
        && start_ms < outer_end
        && end <= outer_end
        && (start_ms, end) != (outer.start_ms, outer_end)
}

/// The sample of a row at (line, start, elapsed); `group` replaces the thread group for a
/// sub-result.
fn sample<'a>(
    cols: &Columns,
    fields: &'a [String],
    (line, start_ms, elapsed_ms): (u64, i64, i64),
    group: Option<&'a str>,
) -> Sample<'a> {
    Sample {
        line,
        start_ms,
        elapsed_ms,
        label: cols.get(fields, "label").unwrap_or(""),
        thread: cols.get(fields, "threadName").unwrap_or(""),
        group: group.unwrap_or_else(|| thread_group(cols.get(fields, "threadName").unwrap_or(""))),
        code: cols.get(fields, "responseCode").unwrap_or(""),
        success: cols.get(fields, "success") != Some("false"),
        message: cols
            .get(fields, "failureMessage")
            .filter(|m| !m.is_empty())
            .or(cols.get(fields, "responseMessage"))
            .unwrap_or(""),
        latency_ms: cols.num(fields, "Latency"),
        connect_ms: cols.num(fields, "Connect"),
        bytes: cols.num(fields, "bytes"),
        sent_bytes: cols.num(fields, "sentBytes"),
        all_threads: cols.num(fields, "allThreads"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jmeter::Sample;

    #[test]
    fn the_delimiter_is_the_headers() {
        for (line, want) in [
            ("timeStamp,elapsed,label", ','),
            ("timeStamp\telapsed\tlabel,with comma", '\t'),
            ("timeStamp;elapsed;label", ';'),
            ("timeStamp|elapsed|label", '|'),
            ("1598601512396;994;Home;200", ';'),
            ("1598601512396,994,Home,200", ','),
            ("no delimiter at all", ','),
        ] {
            assert_eq!(delimiter(line), want, "{line}");
        }
    }

    /// (label, group) of each sample a file gives.
    struct Seen(Vec<(String, String)>);

    impl Sink for Seen {
        fn sample(&mut self, s: &Sample) -> Result<(), ReadError> {
            self.0.push((s.label.to_string(), s.group.to_string()));
            Ok(())
        }
    }

    /// Sub-result rows are the requests, grouped under their page, even with another thread's
    /// row between; an embedded resource (its own label, inside the page's time) too; a
    /// Transaction Controller's row after its samples, and a cut last row, are not.
    #[test]
    fn sub_results_are_the_requests_and_their_page_is_none() {
        let file =
            "timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,failureMessage
1000,500,Home,200,OK,TG 1-1,true,
1000,100,Home-0,302,Found,TG 1-1,true,
1000,500,Other,200,OK,TG 1-2,true,
1100,400,Home-1,200,OK,TG 1-1,true,
2000,300,Page,200,OK,TG 1-1,true,
2010,50,https://h/style.css,200,OK,TG 1-1,true,
2400,10,Plain,200,OK,TG 1-1,true,
2400,10,TC,200,Number of samples in transaction : 1,TG 1-1,true,
2500,10,Cut,20
";
        let mut malformed = Malformed::default();
        let mut seen = Seen(Vec::new());
        let readings = read_csv(file.as_bytes(), &mut malformed, &mut seen).unwrap();
        // In any order: a row waits for the next of its thread.
        let mut pairs: Vec<(&str, &str)> = seen
            .0
            .iter()
            .map(|(l, g)| (l.as_str(), g.as_str()))
            .collect();
        pairs.sort();
        assert_eq!(
            pairs,
            [
                ("Home-0", "Home"),
                ("Home-1", "Home"),
                ("Other", "TG"),
                ("Plain", "TG"),
                ("TC", "TG"),
                ("https://h/style.css", "Page"),
            ]
        );
        assert_eq!(readings.holders, 2);
        assert_eq!(malformed.count, 1, "the cut row");
    }
}
