//! Artillery's `flow:` items as loadlab steps: requests with their captures and `expect`
//! checks, `think`, and counted `loop`s; anything else is a comment and a report entry.

use super::templates::Rewriter;
use crate::lines::Lines;
use crate::names;
use crate::report::Report;
use crate::yaml::{Entry, Item, Node};
use serde_yaml_ng::Value;

const METHODS: &[&str] = &["get", "post", "put", "patch", "delete", "head", "options"];

pub struct Walker<'a> {
    pub lines: &'a Lines<'a>,
    /// The line the walk has reached (1-based): keys are looked for from here on.
    pub cursor: usize,
    pub rewriter: Rewriter,
    pub requests: usize,
    /// `config.defaults.think.jitter`: the jitter of every think that gives none.
    pub think_jitter: Option<Value>,
    pub auth: super::auth::BasicAuth,
    /// Names whose value comes from the scenario itself (data sets of `config.variables`,
    /// captures met so far): a URL made of one is not read from the environment.
    pub scenario_values: Vec<String>,
}

impl Walker<'_> {
    pub fn steps(&mut self, flow: &[Value], report: &mut Report) -> Vec<Item> {
        let mut out: Vec<Item> = Vec::new();
        // Comments for what was left out, placed above the next step.
        let mut pending: Vec<String> = Vec::new();
        for item in flow {
            let Some(map) = item.as_mapping() else {
                report.unsupported(Some(self.cursor), "a flow item that is not a mapping");
                continue;
            };
            let first = map.keys().next().and_then(Value::as_str).unwrap_or("");
            let line = self.lines.find(first, self.cursor);
            if let Some(l) = line {
                self.cursor = l + 1;
            }
            if let Some(parallel) = item.get("parallel").and_then(Value::as_sequence) {
                let mut inner = self.steps(parallel, report);
                if let Some(first_step) = inner.first_mut() {
                    let note = format!(
                        "decide: Artillery sends these {} request(s) at once (`parallel`{}); a loadlab VU sends them one after another",
                        parallel.len(),
                        paren(line)
                    );
                    pending.push(note);
                    pending.append(&mut first_step.comments);
                    first_step.comments = std::mem::take(&mut pending);
                    report.did(format!(
                        "`parallel`{}: its {} request(s) are sent one after another by a VU",
                        paren(line),
                        parallel.len()
                    ));
                }
                out.append(&mut inner);
                continue;
            }
            let method = METHODS.iter().find(|m| item.get(**m).is_some());
            let converted = if let Some(method) = method {
                self.request_step(method, &item[*method], line, report, &mut pending)
            } else if let Some(t) = item.get("think") {
                let jitter = item.get("jitter").or(self.think_jitter.as_ref());
                match think(t, jitter) {
                    Ok(d) => Some(Item::new(Node::map([("think", Node::raw(d))]))),
                    Err(why) => {
                        report.unsupported(line, why);
                        None
                    }
                }
            } else if let Some(body) = item.get("loop") {
                self.looped(item, body, line, report, &mut pending)
            } else {
                let what = format!("flow item `{first}`: no loadlab equivalent; left out");
                pending.push(format!("not converted{}: {what}", paren(line)));
                report.unsupported(line, what);
                None
            };
            if let Some(mut item) = converted {
                pending.append(&mut item.comments);
                item.comments = std::mem::take(&mut pending);
                out.push(item);
            }
        }
        if let Some(last) = out.last_mut() {
            last.comments.append(&mut pending);
        }
        out
    }

    /// A request item as a step; `None` (reported, noted in `pending`) for a request loadlab
    /// would not send as Artillery does: conditional, using an Artillery variable with no
    /// equivalent, or with a URL that is a variable's value (loadlab wants a path or URL).
    fn request_step(
        &mut self,
        method: &str,
        spec: &Value,
        line: Option<usize>,
        report: &mut Report,
        pending: &mut Vec<String>,
    ) -> Option<Item> {
        let mut left_out = |what: String, decide: bool, report: &mut Report| {
            pending.push(match decide {
                true => format!("decide:{}: {what}", at(line)),
                false => format!("not converted{}: {what}", paren(line)),
            });
            report.unsupported(line, what);
            None
        };
        if let Some(why) = super::guards::condition(spec) {
            return left_out(
                format!("{method}: {why}; the request is left out"),
                true,
                report,
            );
        }
        let uses = self.rewriter.unknown_uses;
        let request = self.request(method, spec, line, report);
        if self.rewriter.unknown_uses != uses {
            // `{{ $loopCount }}`, `{{ $loopElement }}`...: sent as written, it would be
            // refused when the scenario loads.
            self.requests -= 1;
            return left_out(format!(
                "{method}: uses an Artillery variable with no loadlab equivalent (listed below); the request is left out"
            ), false, report);
        }
        if let Some(url) = url_from_variable(&request, method, &self.scenario_values) {
            self.requests -= 1;
            return left_out(format!(
                "{method} `{url}`: the whole URL is a variable's value, and loadlab wants a path starting with `/` (or a URL from `{{{{ env.NAME }}}}`); the request is left out: write its path"
            ), true, report);
        }
        Some(request)
    }

    /// A `loop` as a loadlab loop; `None` (reported, noted in `pending`) when no step of its
    /// body converted, since a loop of no steps does not load.
    fn looped(
        &mut self,
        item: &Value,
        body: &Value,
        line: Option<usize>,
        report: &mut Report,
        pending: &mut Vec<String>,
    ) -> Option<Item> {
        let steps = match body.as_sequence() {
            Some(s) => self.steps(s, report),
            None => Vec::new(),
        };
        if steps.is_empty() {
            let what = "loop: no step of its body converted; left out";
            pending.push(format!("not converted{}: {what}", paren(line)));
            report.unsupported(line, what);
            return None;
        }
        let mut comments = Vec::new();
        for key in item
            .as_mapping()
            .into_iter()
            .flat_map(|m| m.keys())
            .filter_map(Value::as_str)
        {
            if !["loop", "count", "over"].contains(&key) {
                let at = self.lines.find(key, line.unwrap_or(1));
                report.unsupported(at, format!("loop `{key}`: not converted"));
                comments.push(format!("not converted{}: loop `{key}`", paren(at)));
            }
        }
        let over_len = item
            .get("over")
            .and_then(Value::as_sequence)
            .map(|list| list.len() as u64)
            .filter(|n| *n > 0);
        let count = item.get("count").and_then(|c| loop_count(c, &mut comments));
        let count = match count.or(over_len) {
            Some(c) => c,
            None => {
                let why = match (item.get("count"), item.get("over")) {
                    (Some(c), _) => format!(
                        "loop count `{}` is not a number",
                        c.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| serde_yaml_ng::to_string(c)
                                .unwrap_or_default()
                                .trim()
                                .to_string())
                    ),
                    (None, Some(_)) => {
                        "loop `over` a list loadlab cannot read (a variable): loadlab loops a count"
                            .to_string()
                    }
                    (None, None) => "loop without `count` (Artillery loops forever)".to_string(),
                };
                report.unsupported(line, format!("{why}; written with count 1"));
                comments.push(format!("decide: {why}; count 1 written"));
                1
            }
        };
        Some(Item {
            comments,
            value: Node::map([(
                "loop",
                Node::map([
                    ("count", Node::raw(count.to_string())),
                    ("steps", Node::Seq(steps)),
                ]),
            )]),
        })
    }

    fn request(
        &mut self,
        method: &str,
        spec: &Value,
        line: Option<usize>,
        report: &mut Report,
    ) -> Item {
        self.requests += 1;
        let url = spec.get("url").and_then(Value::as_str).unwrap_or("/");
        let mut url = self.rewriter.text(url);
        let mut comments = Vec::new();
        if !["/", "http://", "https://", "{{"]
            .iter()
            .any(|p| url.starts_with(p))
        {
            // Artillery prefixes the target only to a URL starting with `/`; `members/create`
            // is sent as written, which fails: the path was surely meant.
            let what = format!(
                "url `{url}` neither starts with `/` nor is a full URL (Artillery sends it as written, and it fails): written as `/{url}`"
            );
            comments.push(format!("decide:{}: {what}", at(line)));
            report.unsupported(line, what);
            url.insert(0, '/');
        }
        let name = spec
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| names::step_name(method, &url));
        let mut m = vec![
            Entry::new("name", Node::str(name)),
            Entry::new(method, Node::str(url)),
        ];
        if let Some(qs) = spec.get("qs") {
            m.push(Entry::new(
                "query",
                Node::map(text_map(&mut self.rewriter, qs)),
            ));
        }
        let mut headers = self.headers(spec);
        if let Some(auth) = spec.get("auth") {
            let set = headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
            if !set {
                headers.extend(self.auth.header(auth, line, report));
            }
        }
        if !headers.is_empty() {
            m.push(Entry::new("headers", Node::map(headers)));
        }
        m.extend(self.body(spec, line, report));
        let captures = captures(spec, line, report, &mut comments);
        self.scenario_values
            .extend(captures.iter().map(|(name, _)| name.clone()));
        let checks = self.expect(spec.get("expect"), &captures, line, report, &mut comments);
        if !checks.is_empty() {
            m.push(Entry::new("check", Node::Map(checks)));
        }
        if !captures.is_empty() {
            m.push(Entry::new("capture", Node::map(captures)));
        }
        for key in spec
            .as_mapping()
            .into_iter()
            .flat_map(|m| m.keys())
            .filter_map(Value::as_str)
        {
            if ![
                "url",
                "name",
                "qs",
                "headers",
                "cookie",
                "json",
                "body",
                "form",
                "capture",
                "expect",
                "auth",
                "probability",
                "ifTrue",
            ]
            .contains(&key)
            {
                let at = self.lines.find(key, line.unwrap_or(self.cursor));
                report.unsupported(at, format!("{method} `{key}`: not converted"));
                comments.push(format!("not converted{}: `{key}`", paren(at)));
            }
        }
        Item {
            comments,
            value: Node::Map(m),
        }
    }

    /// `headers:`, with `cookie:` pairs joined into one `Cookie` header.
    fn headers(&mut self, spec: &Value) -> Vec<(String, Node)> {
        let mut headers = spec
            .get("headers")
            .map(|h| text_map(&mut self.rewriter, h))
            .unwrap_or_default();
        if let Some(cookies) = spec.get("cookie") {
            let pairs: Vec<String> = text_map(&mut self.rewriter, cookies)
                .into_iter()
                .map(|(k, v)| match v {
                    Node::Str(v) => format!("{k}={v}"),
                    _ => k,
                })
                .collect();
            headers.push(("Cookie".into(), Node::str(pairs.join("; "))));
        }
        headers
    }

    /// The request body: `json`, else `body`, else `form`.
    fn body(&mut self, spec: &Value, line: Option<usize>, report: &mut Report) -> Option<Entry> {
        if let Some(json) = spec.get("json") {
            match serde_json::to_value(json) {
                Ok(v) => Some(Entry::new("json", Node::json(&self.rewriter.json(&v)))),
                Err(_) => {
                    report.unsupported(line, "a `json` body that is not JSON");
                    None
                }
            }
        } else if let Some(body) = spec.get("body").and_then(Value::as_str) {
            Some(Entry::new("body", Node::str(self.rewriter.text(body))))
        } else {
            spec.get("form")
                .map(|form| Entry::new("form", Node::map(text_map(&mut self.rewriter, form))))
        }
    }

    /// The `expect` plugin's checks: statusCode, contentType, hasProperty, equals.
    fn expect(
        &mut self,
        expect: Option<&Value>,
        captures: &[(String, Node)],
        line: Option<usize>,
        report: &mut Report,
        comments: &mut Vec<String>,
    ) -> Vec<Entry> {
        let list = match expect {
            Some(Value::Sequence(s)) => s.clone(),
            Some(Value::Mapping(m)) => m
                .iter()
                .map(|(k, v)| {
                    let mut one = serde_yaml_ng::Mapping::new();
                    one.insert(k.clone(), v.clone());
                    Value::Mapping(one)
                })
                .collect(),
            _ => return Vec::new(),
        };
        let mut expected = super::expect::Expected::default();
        for e in &list {
            let Some((k, v)) = e.as_mapping().and_then(|m| m.iter().next()) else {
                continue;
            };
            let key = k.as_str().unwrap_or("");
            let at = self.lines.find(key, line.unwrap_or(1));
            expected.add(key, v, at, captures, report, comments);
        }
        expected.entries()
    }
}

/// A think as loadlab writes it: `2s`, or with Artillery's `jitter` of a percentage a
/// uniform range around it (`2s` ± 10% → `1.8s..2.2s`).
fn think(t: &Value, jitter: Option<&Value>) -> Result<String, String> {
    let shown = |v: &Value| {
        v.as_str().map(str::to_string).unwrap_or_else(|| {
            serde_yaml_ng::to_string(v)
                .unwrap_or_default()
                .trim()
                .to_string()
        })
    };
    let secs = super::duration_secs(t)
        .ok_or_else(|| format!("think `{}`: not a number of seconds; left out", shown(t)))?;
    let Some(j) = jitter else {
        return Ok(format!("{}s", crate::scaffold::fmt_num(secs)));
    };
    let share = j
        .as_str()
        .and_then(|p| p.trim().strip_suffix('%'))
        .and_then(|p| p.trim().parse::<f64>().ok())
        .filter(|p| (0.0..=100.0).contains(p))
        .ok_or_else(|| {
            format!(
                "think jitter `{}`: only a percentage converts (e.g. 20%); left out",
                shown(j)
            )
        })?;
    let (low, high) = (secs * (1.0 - share / 100.0), secs * (1.0 + share / 100.0));
    let ms = |s: f64| crate::scaffold::fmt_num((s * 1000.0).round());
    Ok(format!("{}ms..{}ms", ms(low), ms(high)))
}

/// A mapping's scalar values as text (templates rewritten); other values are left out.
fn text_map(rw: &mut Rewriter, v: &Value) -> Vec<(String, Node)> {
    v.as_mapping()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some((k.as_str()?.to_string(), Node::str(rw.text(&text))))
        })
        .collect()
}

/// `capture:` (one or a list): json, header and regexp captures convert; the others are
/// reported and noted in `comments`, as are keys of a capture that do not convert.
fn captures(
    spec: &Value,
    line: Option<usize>,
    report: &mut Report,
    comments: &mut Vec<String>,
) -> Vec<(String, Node)> {
    let mut captures = Vec::new();
    let list = match spec.get("capture") {
        Some(Value::Sequence(s)) => s.clone(),
        Some(c @ Value::Mapping(_)) => vec![c.clone()],
        _ => Vec::new(),
    };
    for c in &list {
        let Some(var) = c.get("as").and_then(Value::as_str) else {
            report.unsupported(line, "a capture without `as`; left out");
            continue;
        };
        let source = if let Some(p) = c.get("json").and_then(Value::as_str) {
            Node::str(p)
        } else if let Some(h) = c.get("header").and_then(Value::as_str) {
            Node::map([("header", Node::str(h))])
        } else if let Some(r) = c.get("regexp").and_then(Value::as_str) {
            let group = c.get("group").and_then(Value::as_u64).unwrap_or(0);
            Node::map([
                ("regex", Node::str(r)),
                ("group", Node::raw(group.to_string())),
            ])
        } else {
            report.unsupported(
                line,
                format!("capture `{var}`: only json, header and regexp captures convert"),
            );
            comments.push(format!("not converted: capture `{var}` (xpath/selector)"));
            continue;
        };
        for key in c
            .as_mapping()
            .into_iter()
            .flat_map(|m| m.keys())
            .filter_map(Value::as_str)
        {
            if !["as", "json", "header", "regexp", "group"].contains(&key) {
                report.unsupported(
                    line,
                    format!("capture `{var}`: `{key}` is not converted (a loadlab capture that misses stops the iteration)"),
                );
            }
        }
        captures.push((var.to_string(), source));
    }
    captures
}

/// ` line N` for a comment, or nothing when the source line is not known.
pub fn at(line: Option<usize>) -> String {
    line.map(|l| format!(" line {l}")).unwrap_or_default()
}

/// The URL of a request step when it starts with a value of the scenario (`{{ url }}` from a
/// data set or a capture): loadlab cannot tell its origin when the file loads. A name set by
/// a processor is read from the environment later (`variables.rs`), which loadlab accepts.
fn url_from_variable(step: &Item, method: &str, scenario_values: &[String]) -> Option<String> {
    let Node::Map(entries) = &step.value else {
        return None;
    };
    let url = entries.iter().find(|e| e.key == method)?;
    let Node::Str(url) = &url.value else {
        return None;
    };
    let inner = url.strip_prefix("{{")?;
    let expr = inner[..inner.find("}}")?].trim();
    let from_scenario = expr.contains('.') && !expr.starts_with("env.")
        || scenario_values.iter().any(|v| v == expr);
    from_scenario.then(|| url.clone())
}

/// ` (line N)` for a comment, or nothing when the source line is not known.
pub fn paren(line: Option<usize>) -> String {
    line.map(|l| format!(" (line {l})")).unwrap_or_default()
}

/// A loop's `count` as Artillery reads it (`parseLoopCount`): a number, a numeric string
/// (`"5"`), or a range `"9-12"`, which counts from 9 while below 12 — 3 times, noted in
/// `comments`. `None` for anything else (a template, a negative count: forever).
fn loop_count(count: &Value, comments: &mut Vec<String>) -> Option<u64> {
    if let Some(n) = count.as_u64() {
        return Some(n);
    }
    let text = count.as_str()?.trim();
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    let (from, to) = text.split_once('-')?;
    let (from, to) = (
        from.trim().parse::<u64>().ok()?,
        to.trim().parse::<u64>().ok()?,
    );
    let n = to.checked_sub(from)?;
    comments.push(format!(
        "Artillery's count `{text}` loops from {from} while below {to}: {n} times"
    ));
    Some(n)
}
