//! Builds a [`PreparedScenario`] from a scenario: walks its flows' steps, finds the origins
//! and compiles each request (target, headers, body) into a program, rendered once when it
//! holds no template.

use super::*;

pub(super) struct Builder<'a> {
    pub(super) scenario: &'a Scenario,
    pub(super) names: Names<'a>,
    pub(super) origins: Vec<Origin>,
    pub(super) requests: Vec<PreparedRequest>,
    pub(super) sessions: Vec<PreparedWs>,
    pub(super) steps: Vec<StepInfo>,
    pub(super) once_blocks: u8,
    pub(super) capture_names: &'a [String],
}

impl PreparedScenario {
    pub fn new(scenario: &Scenario) -> Result<Self, PrepareError> {
        let capture_names = scenario.capture_names();
        let mut b = Builder {
            scenario,
            names: Names {
                data: &scenario.data,
                captures: &capture_names,
                available: None,
            },
            origins: Vec::new(),
            requests: Vec::new(),
            sessions: Vec::new(),
            steps: Vec::new(),
            once_blocks: 0,
            capture_names: &capture_names,
        };
        let mut flows = Vec::new();
        for flow in &scenario.flows {
            let mut ops = Vec::new();
            b.steps_into(&flow.steps, &mut ops)?;
            flows.push(PreparedFlow {
                name: flow.name.clone(),
                weight: flow.weight,
                steps: ops,
            });
        }
        let n = scenario.data.len();
        Ok(Self {
            origins: b.origins,
            requests: b.requests,
            sessions: b.sessions,
            flows,
            steps: b.steps,
            connections: scenario.connections,
            data: PreparedData {
                sets: Arc::new(scenario.data.clone()),
                cursors: Arc::new((0..n).map(|_| AtomicU64::new(0)).collect()),
                offset: 0,
                stride: 1,
            },
        })
    }
}

impl Builder<'_> {
    fn steps_into(&mut self, steps: &[Step], ops: &mut Vec<FlowStep>) -> Result<(), PrepareError> {
        for step in steps {
            match step {
                Step::Think(t) => ops.push(FlowStep::Think(*t)),
                Step::Loop { count, steps } => {
                    let start = ops.len() as u32;
                    ops.push(FlowStep::Loop { count: *count });
                    self.steps_into(steps, ops)?;
                    ops.push(FlowStep::LoopEnd { start });
                }
                Step::Once(steps) => {
                    if self.once_blocks >= 64 {
                        return Err(PrepareError::TooManyOnce);
                    }
                    let id = self.once_blocks;
                    self.once_blocks += 1;
                    let at = ops.len();
                    ops.push(FlowStep::Once { id, end: 0 });
                    self.steps_into(steps, ops)?;
                    let end = ops.len() as u32;
                    ops.push(FlowStep::OnceEnd { id });
                    ops[at] = FlowStep::Once { id, end };
                }
                Step::Request(r) => {
                    let index = self.request(r)?;
                    ops.push(FlowStep::Request(index));
                }
                Step::Ws(w) => {
                    let index = self.ws(w, self.sessions.len())?;
                    ops.push(FlowStep::Ws(index));
                }
            }
        }
        Ok(())
    }

    /// Compiles request step `r` (its origin found or added, its request rendered once when
    /// it is static) and returns its index.
    fn request(&mut self, r: &RequestStep) -> Result<u16, PrepareError> {
        let scenario = self.scenario;
        let template_err = |message: String| PrepareError::Template {
            step: r.name.clone(),
            message,
        };
        let url = self.absolute_url(r)?;
        let (tls, host, port, target) = split_templated_url(&url)?;
        let origin = self.origin_index(
            tls,
            host,
            port,
            r.http_version.unwrap_or(scenario.http.version),
        );
        let index = u16::try_from(self.requests.len()).map_err(|_| PrepareError::TooManySteps)?;
        // A request's step in the record (sessions and their expectations take steps too).
        let step = u16::try_from(self.steps.len()).map_err(|_| PrepareError::TooManySteps)?;
        let timeout = r.timeout.unwrap_or(scenario.defaults.timeout);
        let mut call = grpc::prepared_call(r)?;
        let mut headers = header_fields(r, &scenario.defaults.headers, &url);
        if call.is_some() {
            headers.push(grpc::timeout_header(timeout));
        }
        let program = build_program(r, &target, &headers, &self.names).map_err(template_err)?;
        let (fixed, program) = if program.has_vars() {
            (None, Some(program))
        } else {
            let mut parts = program
                .render_first_iteration(0, &scenario.data)
                .map_err(|e| template_err(e.describe()))?;
            if let Some(call) = &mut call {
                grpc::encode_fixed(r, call, &mut parts)?;
            }
            (Some(parts), None)
        };
        let data_sets = program.as_ref().map_or_else(Vec::new, data_sets_read);
        let captures = self.captures(&r.captures).map_err(template_err)?;
        let keep_headers = r.captures.iter().any(|c| !c.source.needs_body())
            || r.checks.iter().any(|c| matches!(c, Check::Header { .. }));
        // A gRPC call's JSON form is decoded from its body (kept).
        let keep_body = r.captures.iter().any(|c| c.source.needs_body())
            || r.checks.iter().any(Check::needs_body);
        let parse_json = r
            .captures
            .iter()
            .any(|c| matches!(c.source, CaptureSource::JsonPath(_)))
            || r.checks.iter().any(|c| matches!(c, Check::Json { .. }));
        // A stream's body passes through the stream reader (which applies the JSON
        // captures and checks to its events), never parsed whole.
        let stream = crate::stream::PreparedStream::of(r, &scenario.thresholds);
        let (keep_body, parse_json) = match stream {
            Some(_) => (true, false),
            None => (keep_body, parse_json),
        };
        self.requests.push(PreparedRequest {
            step,
            origin: origin as u16,
            method: r.method,
            fixed_size: fixed.as_ref().map_or(0, RequestParts::wire_size),
            fixed,
            program,
            close: scenario.connections == ConnectionPolicy::None,
            timeout,
            max_body: scenario.defaults.max_body,
            captures,
            status_checked: r.checks.iter().any(|c| matches!(c, Check::Status(_))),
            checks: r.checks.clone(),
            keep_headers,
            keep_body,
            parse_json,
            data_sets,
            server_header: ServerHeader::of(&scenario.defaults.server_latency),
            trace: scenario.defaults.trace,
            grpc: grpc::shared(call),
            stream,
        });
        self.push_step(StepInfo {
            name: r.name.clone(),
            group: r.group.clone(),
            tags: r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            checks: r.checks.iter().map(Check::describe).collect(),
        })?;
        Ok(index)
    }

    /// Adds a step to the record's list and returns its index.
    pub(super) fn push_step(&mut self, info: StepInfo) -> Result<u16, PrepareError> {
        let step = u16::try_from(self.steps.len()).map_err(|_| PrepareError::TooManySteps)?;
        self.steps.push(info);
        Ok(step)
    }

    /// The step's URL, a relative path joined to the scenario's target.
    fn absolute_url(&self, r: &RequestStep) -> Result<String, PrepareError> {
        if !r.url.starts_with('/') {
            return Ok(r.url.clone());
        }
        self.joined_to_target(&r.name, &r.url)
    }

    /// `path` joined to the scenario's target; step `step` names it when there is none.
    pub(super) fn joined_to_target(&self, step: &str, path: &str) -> Result<String, PrepareError> {
        let base = self
            .scenario
            .target
            .as_ref()
            .ok_or_else(|| PrepareError::NoTarget {
                step: step.to_string(),
                path: path.to_string(),
            })?;
        Ok(format!("{}{}", base.trim_end_matches('/'), path))
    }

    /// The index of the origin (scheme, host, port, HTTP version), added when it is new.
    fn origin_index(&mut self, tls: bool, host: String, port: u16, version: HttpVersion) -> usize {
        if let Some(i) = self
            .origins
            .iter()
            .position(|o| o.key() == (tls, host.as_str(), port, version))
        {
            return i;
        }
        let http = &self.scenario.http;
        self.origins.push(Origin {
            tls,
            host_header: host_header(&host, port, tls),
            host,
            port,
            version,
            shared: http.connections.map(|connections| SharedConnections {
                connections,
                max_streams: http.max_streams,
            }),
        });
        self.origins.len() - 1
    }

    /// Captures, each bound to its slot among the VU's captured values.
    pub(super) fn captures(&self, list: &[Capture]) -> Result<Vec<PreparedCapture>, String> {
        list.iter()
            .map(|c| {
                let var = self
                    .capture_names
                    .iter()
                    .position(|n| *n == c.name)
                    .unwrap_or(0) as u16;
                let source = match &c.source {
                    CaptureSource::JsonPath(p) => CaptureKind::JsonPath(p.clone()),
                    CaptureSource::Header(h) => CaptureKind::Header(h.clone()),
                    CaptureSource::Regex { pattern, group } => CaptureKind::Regex(
                        regex::Regex::new(pattern).map_err(|e| e.to_string())?,
                        *group,
                    ),
                };
                Ok(PreparedCapture {
                    name: c.name.clone(),
                    var,
                    source,
                })
            })
            .collect()
    }
}

/// The step's header fields over the scenario's defaults (a step's field replaces a default
/// of the same name), with the URL's credentials for the origin they were written for only
/// (as curl: an explicit `Authorization` header wins).
fn header_fields(
    r: &RequestStep,
    defaults: &[(String, String)],
    url: &str,
) -> Vec<(String, String)> {
    let mut headers = defaults.to_vec();
    for (k, v) in &r.headers {
        headers.retain(|(hk, _)| !hk.eq_ignore_ascii_case(k));
        headers.push((k.clone(), v.clone()));
    }
    if let Some(auth) = &r.auth {
        let for_here =
            loadlab_scenario::credentials::origin_of(url).as_deref() == Some(auth.origin());
        if for_here
            && !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        {
            headers.push(("Authorization".into(), auth.authorization()));
        }
    }
    headers
}

/// The data sets a templated request reads, in the order it first reads them.
pub(super) fn data_sets_read(program: &Program) -> Vec<u16> {
    let mut sets: Vec<u16> = Vec::new();
    for piece in program.pieces() {
        if let Piece::Var(Var::Data { set, .. }, _) = piece {
            if !sets.contains(set) {
                sets.push(*set);
            }
        }
    }
    sets
}

/// Splits a URL whose path may hold templates (the host may not: checked at load time).
pub(super) fn split_templated_url(url: &str) -> Result<(bool, String, u16, String), PrepareError> {
    let scheme_end = url.find("://").map(|i| i + 3).unwrap_or(0);
    let path_at = url[scheme_end..]
        .find(['/', '?'])
        .map(|i| i + scheme_end)
        .unwrap_or(url.len());
    let (tls, host, port, _) = split_url(&url[..path_at]).map_err(PrepareError::BadUrl)?;
    let target = if path_at == url.len() {
        "/".to_string()
    } else if url[path_at..].starts_with('?') {
        format!("/{}", &url[path_at..])
    } else {
        url[path_at..].to_string()
    };
    Ok((tls, host, port, target))
}

/// The request as a program: target, header fields and body, templates compiled. `Host` is
/// the transport's (from the origin) unless the scenario sets it; the version's framing
/// (`Content-Length`, `Connection`) is the transport's too.
fn build_program(
    r: &RequestStep,
    target: &str,
    headers: &[(String, String)],
    names: &Names,
) -> Result<Program, String> {
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut t = Pieces::default();
    t.target(&crate::render::template(target, names)?);
    let mut sep = if target.contains('?') { b'&' } else { b'?' };
    for (k, v) in &r.query {
        t.lit(&[sep]);
        sep = b'&';
        let mut key = Vec::new();
        crate::render::escape_into(&mut key, k.as_bytes(), Esc::Component);
        t.lit(&key);
        t.lit(b"=");
        t.template(&crate::render::template(v, names)?, Esc::Component);
    }
    let literal = |text: &str| {
        let mut p = Pieces::default();
        p.lit(text.as_bytes());
        p.finish()
    };
    let mut fields: Vec<(Box<[u8]>, Vec<Piece>)> = Vec::new();
    if !has("user-agent") {
        fields.push((
            b"User-Agent"[..].into(),
            literal(concat!("loadlab/", env!("CARGO_PKG_VERSION"))),
        ));
    }
    for (k, v) in headers {
        let mut p = Pieces::default();
        p.template(&crate::render::template(v, names)?, Esc::Header);
        fields.push((k.as_bytes().into(), p.finish()));
    }
    let body = match &r.body {
        Some(b) => {
            let (pieces, content_type) = crate::render::body(b, names)?;
            if !has("content-type") {
                fields.push((b"Content-Type"[..].into(), literal(content_type)));
            }
            Some(pieces)
        }
        None => None,
    };
    Ok(Program {
        target: t.finish(),
        headers: fields,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A relative path, of a request or of a WebSocket session, needs the target: without one
    /// the error names the step and the path.
    #[test]
    fn a_relative_path_without_a_target_names_its_step() {
        let cases = [
            ("{ name: page, get: /a }", "page", "/a"),
            (
                "{ name: chat, ws: { url: /ws/echo, steps: [ { send: hi } ] } }",
                "chat",
                "/ws/echo",
            ),
        ];
        for (step, name, path) in cases {
            let yaml = |target: &str| {
                format!(
                    "{target}load: {{ model: closed, vus: 1, duration: 1s }}\nflows:\n  - name: f\n    steps:\n      - {step}\n"
                )
            };
            let with = Scenario::parse(&yaml("target: http://127.0.0.1:9/\n"), "t.yaml").unwrap();
            assert!(PreparedScenario::new(&with).is_ok(), "{step}");
            let without = Scenario::parse(&yaml(""), "t.yaml").unwrap();
            match PreparedScenario::new(&without) {
                Err(PrepareError::NoTarget { step, path: p }) => {
                    assert_eq!((step.as_str(), p.as_str()), (name, path))
                }
                other => panic!("{step}: {:?}", other.err()),
            }
        }
    }
}
