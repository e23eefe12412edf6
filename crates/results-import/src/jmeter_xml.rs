//! JMeter's XML results (`.jtl` written with `jmeter.save.saveservice.output_format=xml`):
//! `<httpSample>` and `<sample>` elements whose attributes are the CSV's columns (`ts` start
//! in ms since the epoch, `t` elapsed, `lt` latency, `ct` connect, `s` success, `lb` label,
//! `rc` code, `rm` message, `tn` thread, `by`/`sby` bytes, `na` active threads). Unlike the
//! CSV, samples nest: a Transaction Controller's parent sample, or a page with its redirects
//! and embedded resources, holds the samples it timed. Those inner samples are the requests,
//! grouped under the outer one's label; the outer one is no request. A failing assertion's
//! `failureMessage` says why a sample failed.
//!
//! Read as a stream of events (quick-xml, already in the build through object_store): memory
//! holds the open elements, not the file. A file cut short (a JMeter that was killed) keeps
//! every sample read before the cut, and the cut is reported with its line.

use crate::jmeter::{thread_group, Readings, Sample, Sink};
use crate::problems::Malformed;
use crate::ReadError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use std::io::BufRead;

/// Longest failure message kept for a sample.
const MESSAGE_CHARS: usize = 300;

/// A sample element read: its attributes, where it started, and whether samples nest in it.
#[derive(Default)]
struct Open {
    /// The element's name, to match its end.
    name: Vec<u8>,
    line: u64,
    ts: Option<i64>,
    t: Option<i64>,
    lt: Option<i64>,
    ct: Option<i64>,
    success: bool,
    label: String,
    code: String,
    message: String,
    thread: String,
    by: Option<i64>,
    sby: Option<i64>,
    na: Option<i64>,
    holds_samples: bool,
    /// The first failing assertion's message inside it.
    failure: Option<String>,
}

impl Open {
    fn of(e: &BytesStart, line: u64) -> Open {
        let mut open = Open {
            name: e.name().as_ref().to_vec(),
            line,
            success: true,
            ..Open::default()
        };
        // JMeter writes each attribute once: checking for duplicates cost a fifth of the time.
        for attr in e.attributes().with_checks(false).flatten() {
            // Numbers hold no entity: read from the raw bytes, without an allocation.
            let num = || {
                std::str::from_utf8(&attr.value)
                    .ok()?
                    .trim()
                    .parse::<i64>()
                    .ok()
            };
            let text = || {
                attr.normalized_value(XmlVersion::Implicit1_0)
                    .map(|v| v.into_owned())
                    .unwrap_or_else(|_| String::from_utf8_lossy(&attr.value).into_owned())
            };
            match attr.key.as_ref() {
                b"ts" => open.ts = num(),
                b"t" => open.t = num(),
                b"lt" => open.lt = num(),
                b"ct" => open.ct = num(),
                b"s" => open.success = attr.value.as_ref() != b"false",
                b"lb" => open.label = text(),
                b"rc" => open.code = text(),
                b"rm" => open.message = text(),
                b"tn" => open.thread = text(),
                b"by" => open.by = num(),
                b"sby" => open.sby = num(),
                b"na" => open.na = num(),
                _ => {}
            }
        }
        open
    }
}

/// Where the text of an assertion's child element goes.
#[derive(Default)]
struct Assertion {
    inside: bool,
    failed: bool,
    message: String,
    reading: Option<Field>,
}

#[derive(Clone, Copy, PartialEq)]
enum Field {
    Failure,
    Error,
    Message,
}

/// `<httpSample>` and `<sample>`, or another sampler's result class as XStream names it, told
/// by a sample's attributes.
fn is_sample(e: &BytesStart) -> bool {
    if matches!(e.name().as_ref(), b"httpSample" | b"sample") {
        return true;
    }
    let has = |key: &[u8]| {
        e.attributes()
            .with_checks(false)
            .flatten()
            .any(|a| a.key.as_ref() == key)
    };
    has(b"lb") && has(b"ts")
}

/// Reads JMeter's XML results, giving each request's sample to `sink`.
pub fn read<R: BufRead>(
    input: R,
    malformed: &mut Malformed,
    sink: &mut dyn Sink,
) -> Result<Readings, ReadError> {
    let mut reader = Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut line = 1u64;
    let mut open: Vec<Open> = Vec::new();
    let mut assertion = Assertion::default();
    let mut readings = Readings::default();
    // `<testResults>` opened and not closed yet: a file that ends so was cut between samples.
    let mut root_open = false;
    loop {
        buf.clear();
        let at = line;
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                malformed.add(at, || {
                    format!("not well-formed XML ({e}): the samples before this line are imported, none after it")
                });
                break;
            }
        };
        match event {
            Event::Start(e) if is_sample(&e) => {
                if let Some(outer) = open.last_mut() {
                    outer.holds_samples = true;
                }
                let sample = Open::of(&e, at);
                if let Some(ts) = sample.ts {
                    sink.row(at, ts);
                }
                open.push(sample);
            }
            Event::Empty(e) if is_sample(&e) => {
                if let Some(outer) = open.last_mut() {
                    outer.holds_samples = true;
                }
                let sample = Open::of(&e, at);
                if let Some(ts) = sample.ts {
                    sink.row(at, ts);
                }
                record(&sample, &open, sink, malformed)?;
            }
            Event::End(e) if open.last().is_some_and(|o| o.name == e.name().as_ref()) => {
                if let Some(sample) = open.pop() {
                    if sample.holds_samples {
                        readings.holders += 1;
                    } else {
                        record(&sample, &open, sink, malformed)?;
                    }
                }
            }
            Event::Start(e) => {
                let name = e.name();
                if root_open && open.is_empty() && readings.unknown.is_none() {
                    let name = String::from_utf8_lossy(name.as_ref()).into_owned();
                    readings.unknown = Some((at, name));
                }
                root_open |= name.as_ref() == b"testResults";
                assertion.start(e.name().as_ref())
            }
            Event::End(e) => {
                root_open &= e.name().as_ref() != b"testResults";
                assertion.end(e.name().as_ref(), open.last_mut())
            }
            Event::Text(t) => assertion.text(&t.decode().unwrap_or_default()),
            Event::CData(t) => assertion.text(&String::from_utf8_lossy(&t)),
            Event::Eof => {
                if root_open {
                    readings.unclosed = Some(line);
                }
                break;
            }
            _ => {}
        }
        line += buf.iter().filter(|&&b| b == b'\n').count() as u64;
    }
    // Cut short: what was open when the file ended was read whole up to its start tag.
    while let Some(sample) = open.pop() {
        if !sample.holds_samples {
            record(&sample, &open, sink, malformed)?;
        }
    }
    Ok(readings)
}

/// A sample that holds none: a request, grouped under the sample it is inside (else its
/// thread group).
fn record(
    o: &Open,
    outer: &[Open],
    sink: &mut dyn Sink,
    malformed: &mut Malformed,
) -> Result<(), ReadError> {
    let (Some(start_ms), Some(elapsed_ms)) = (o.ts, o.t) else {
        malformed.add(o.line, || {
            "a sample without numeric `ts` (ms since the epoch) and `t` (ms): save them (jmeter.save.saveservice.timestamp and .time, on by default)".to_string()
        });
        return Ok(());
    };
    let group = match outer.last() {
        Some(inside) => inside.label.as_str(),
        None => thread_group(&o.thread),
    };
    let sample = Sample {
        line: o.line,
        start_ms,
        elapsed_ms,
        label: &o.label,
        thread: &o.thread,
        group,
        code: &o.code,
        success: o.success,
        message: o.failure.as_deref().unwrap_or(&o.message),
        latency_ms: o.lt,
        connect_ms: o.ct,
        bytes: o.by,
        sent_bytes: o.sby,
        all_threads: o.na,
    };
    sink.sample(&sample)
}

impl Assertion {
    fn start(&mut self, name: &[u8]) {
        match name {
            b"assertionResult" => {
                *self = Assertion {
                    inside: true,
                    ..Assertion::default()
                }
            }
            b"failure" if self.inside => self.reading = Some(Field::Failure),
            b"error" if self.inside => self.reading = Some(Field::Error),
            b"failureMessage" if self.inside => self.reading = Some(Field::Message),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        match self.reading {
            Some(Field::Failure | Field::Error) => self.failed |= text.trim() == "true",
            Some(Field::Message) if self.message.chars().count() < MESSAGE_CHARS => {
                self.message.extend(text.chars().take(MESSAGE_CHARS));
            }
            _ => {}
        }
    }

    /// At `</assertionResult>`, a failed assertion's message becomes its sample's reason.
    fn end(&mut self, name: &[u8], sample: Option<&mut Open>) {
        if name != b"assertionResult" {
            self.reading = None;
            return;
        }
        if let Some(sample) = sample {
            let message = self.message.trim();
            if self.failed && !message.is_empty() && sample.failure.is_none() {
                sample.failure = Some(message.to_string());
            }
        }
        *self = Assertion::default();
    }
}
