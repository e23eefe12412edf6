//! The steps of one flow built from its operations: path parameters from earlier links (else
//! data variables), parameters and bodies from examples, security headers, status checks, and
//! captures at the steps whose links a later step uses.

use super::schema;
use super::security;
use super::spec::{
    capture_for, json_str, links, own_server, param_example, path_value, request_body,
    success_statuses, undeclared_path_names, Op,
};
use crate::lines::Lines;
use crate::names;
use crate::report::Report;
use crate::yaml::{Entry, Item, Node};
use serde_json::Value;

pub struct FlowBuilder<'a> {
    spec: &'a Value,
    /// The scenario's target and the document server's path.
    target: &'a str,
    base: &'a str,
    lines: &'a Lines<'a>,
    /// Data variables for path parameters no link gives, shared by all flows.
    data: &'a mut Vec<(String, Value)>,
    steps: Vec<Item>,
    /// Per step, the captures its links offer.
    captures: Vec<Vec<(String, Node)>>,
    /// `(operationId, parameter, variable)` offered by earlier steps' links.
    offered: Vec<(String, String, String)>,
    /// Variables a later step used: only their captures are written.
    used: Vec<String>,
    /// Security remarks are made once per flow, at the first step they concern.
    remarked: Vec<String>,
    pub links_used: usize,
    /// Steps sent to the server their operation (or path) names instead of the document's.
    pub own_servers: usize,
    /// The spec's sign-in and the property of its response that holds the bearer token.
    sign_in: Option<(&'a Op<'a>, &'a str)>,
    /// Whether this flow has signed in (captured `{{ token }}`) yet.
    signed_in: bool,
}

/// The variable a sign-in's bearer token is captured as.
const TOKEN_VAR: &str = "token";

impl<'a> FlowBuilder<'a> {
    pub fn new(
        spec: &'a Value,
        (target, base): (&'a str, &'a str),
        lines: &'a Lines<'a>,
        data: &'a mut Vec<(String, Value)>,
        sign_in: Option<(&'a Op<'a>, &'a str)>,
    ) -> Self {
        FlowBuilder {
            spec,
            target,
            base,
            lines,
            data,
            steps: Vec::new(),
            captures: Vec::new(),
            offered: Vec::new(),
            used: Vec::new(),
            remarked: Vec::new(),
            links_used: 0,
            own_servers: 0,
            sign_in,
            signed_in: false,
        }
    }

    /// The steps, with the captures later steps use.
    pub fn finish(mut self) -> Vec<Item> {
        for (item, caps) in self.steps.iter_mut().zip(self.captures) {
            let used: Vec<(String, Node)> = caps
                .into_iter()
                .filter(|(v, _)| self.used.contains(v))
                .collect();
            if !used.is_empty() {
                if let Node::Map(m) = &mut item.value {
                    m.push(Entry::new("capture", Node::map(used)));
                }
            }
        }
        self.steps
    }

    pub fn step(&mut self, o: &Op<'_>, report: &mut Report) {
        let spec = self.spec;
        let line = self.lines.find(&o.path, 1);
        let title = format!("{} {}", o.method.to_ascii_uppercase(), o.path);
        if o.path.contains("{{") {
            report.unsupported(line, format!("{title}: the path holds `{{{{`, which loadlab reads as a template (it has no escape); the operation is left out"));
            return;
        }
        let undeclared = undeclared_path_names(o);
        if !undeclared.is_empty() {
            for (name, why) in undeclared {
                report.unsupported(
                    line,
                    format!("{title}: the path's `{{{name}}}`: {why}; the operation is left out"),
                );
            }
            return;
        }
        let mut auth = security::auth_for(spec, o.op);
        self.sign_in_first(&mut auth, report);
        // Where the spec's example held `{{` and a generated value is sent instead.
        let mut defused: Vec<String> = Vec::new();
        let mut comments = Vec::new();
        if let Some(s) = o.op.get("summary").and_then(Value::as_str) {
            comments.push(match &o.id {
                Some(id) => format!("{id}: {s}"),
                None => s.to_string(),
            });
        }
        let url = self.path(o, &mut comments, &mut defused);
        let mut m = vec![
            Entry::new("name", Node::str(title.clone())),
            Entry::new(o.method, Node::str(url.clone())),
        ];
        let mut dropped = Vec::new();
        let (query, headers) = parameters(spec, o, &auth, &mut defused, &mut dropped);
        for what in dropped {
            let what = format!("{title}: {what}");
            comments.push(format!("decide: {what}"));
            report.unsupported(line, what);
        }
        for (var, why) in &auth.variables {
            report.variable(var, why.clone());
        }
        for c in &auth.comments {
            if !self.remarked.contains(c) {
                self.remarked.push(c.clone());
                comments.push(c.clone());
            }
        }
        let body = self.body(o, &title, line, &mut comments, &mut defused, report);
        if super::style::repeats(&query) {
            let in_path = format!("{url}?{}", super::style::in_path(&query));
            m[1] = Entry::new(o.method, Node::str(in_path));
        } else if !query.is_empty() {
            m.push(Entry::new(
                "query",
                Node::map(query.into_iter().map(|(k, v)| (k, Node::str(v)))),
            ));
        }
        let mut headers = headers;
        if let Some((_, Some(media))) = &body {
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
            headers.push(("Content-Type".into(), media.clone()));
        }
        if !headers.is_empty() {
            m.push(Entry::new(
                "headers",
                Node::map(headers.into_iter().map(|(k, v)| (k, Node::str(v)))),
            ));
        }
        m.extend(body.map(|(entry, _)| entry));
        if !defused.is_empty() {
            let what = format!(
                "{title}: the spec's example of {} holds `{{{{`, which loadlab reads as a template (it has no escape); a value generated from the schema is sent instead",
                defused.join(", ")
            );
            comments.push(format!("decide: {what}"));
            report.unsupported(line, what);
        }
        m.extend(status_check(o.op));
        let step_captures = self.link_captures(o, line, report);
        self.captures.push(step_captures);
        for e in &m {
            collect_env(&e.value, report);
        }
        self.steps.push(Item {
            comments,
            value: Node::Map(m),
        });
    }

    /// The step's body, with the media type to send as `Content-Type` when `json:`'s
    /// `application/json` is not it (`application/merge-patch+json`); what is not converted
    /// is said at the step and in the report.
    fn body(
        &self,
        o: &Op<'_>,
        title: &str,
        line: Option<usize>,
        comments: &mut Vec<String>,
        defused: &mut Vec<String>,
        report: &mut Report,
    ) -> Option<(Entry, Option<String>)> {
        let body = o.op.get("requestBody")?;
        let mut body_defused = false;
        let entry = request_body(
            self.spec,
            schema::resolve(self.spec, body),
            &mut body_defused,
        );
        if body_defused && matches!(entry, Ok(Some(_))) {
            defused.push("the request body".into());
        }
        match entry {
            Ok(found) => found,
            Err(what) => {
                let what = format!("{title}: {what}");
                comments.push(format!("not converted: {what}"));
                report.unsupported(line, what);
                None
            }
        }
    }

    /// When the operation needs the bearer token and the spec has a sign-in: the flow signs
    /// in first (once), and the token header sends `{{ token }}` instead of `{{ env.TOKEN }}`.
    fn sign_in_first(&mut self, auth: &mut security::Auth, report: &mut Report) {
        if let Some((sign_in, _)) = self.sign_in {
            if auth.headers.iter().any(|(_, v)| v == security::ENV_BEARER) {
                // The token of the flow's own sign-in, signed in first if it has not yet.
                if !self.signed_in {
                    self.step(sign_in, report);
                }
                if !self.used.iter().any(|u| u == TOKEN_VAR) {
                    self.used.push(TOKEN_VAR.to_string());
                }
                for (_, v) in &mut auth.headers {
                    if v == security::ENV_BEARER {
                        *v = format!("Bearer {{{{ {TOKEN_VAR} }}}}");
                    }
                }
                auth.variables.retain(|(v, _)| v != "TOKEN");
                auth.comments.retain(|c| !c.contains("set TOKEN"));
            }
        }
    }

    /// The captures this operation's response links offer (a later step's path parameter),
    /// and the sign-in's token; written by [`FlowBuilder::finish`] only if a later step uses them.
    fn link_captures(
        &mut self,
        o: &Op<'_>,
        line: Option<usize>,
        report: &mut Report,
    ) -> Vec<(String, Node)> {
        let spec = self.spec;
        // Links from this operation's responses: captured here if a later step uses them.
        let mut step_captures: Vec<(String, Node)> = Vec::new();
        for (target_id, param, expr) in links(spec, o.op) {
            let var = names::snake_case(&param);
            match capture_for(&expr) {
                Some(capture) => {
                    if !step_captures.iter().any(|(n, _)| *n == var) {
                        step_captures.push((var.clone(), capture));
                    }
                    self.offered.push((target_id, param, var));
                }
                None => report.unsupported(
                    line,
                    format!("link to `{target_id}`: the expression `{expr}` is not converted"),
                ),
            }
        }
        if let Some((sign_in, field)) = self.sign_in {
            if sign_in.path == o.path && sign_in.method == o.method && !self.signed_in {
                self.signed_in = true;
                // Written only if a later step of the flow sends the token.
                if let Some(capture) = capture_for(&format!("$response.body#/{field}")) {
                    step_captures.push((TOKEN_VAR.to_string(), capture));
                }
            }
        }
        step_captures
    }

    /// The URL with each path parameter as a template: a linked capture, else a data variable.
    fn path(
        &mut self,
        o: &Op<'_>,
        comments: &mut Vec<String>,
        defused: &mut Vec<String>,
    ) -> String {
        let prefix = match own_server(o, self.target) {
            Some((prefix, remark)) => {
                self.own_servers += 1;
                comments.extend(remark);
                prefix
            }
            None => self.base.to_string(),
        };
        let mut url = format!("{prefix}{}", o.path);
        for p in o
            .params
            .iter()
            .filter(|p| p.get("in") == Some(&json_str("path")))
        {
            let pname = p.get("name").and_then(Value::as_str).unwrap_or("");
            let linked = o.id.as_ref().and_then(|id| {
                self.offered
                    .iter()
                    .rev()
                    .find(|(oid, param, _)| oid == id && param == pname)
                    .map(|(_, _, var)| var.clone())
            });
            let var = match linked {
                Some(var) => {
                    self.links_used += 1;
                    if !self.used.contains(&var) {
                        self.used.push(var.clone());
                    }
                    var
                }
                None => {
                    let var = data_variable(&o.path, pname);
                    if !self.data.iter().any(|(n, _)| *n == var) {
                        let e = param_example(self.spec, p);
                        if e.defused {
                            defused.push(format!("path parameter `{pname}`"));
                        }
                        self.data.push((var.clone(), path_value(p, &e.value)));
                    }
                    comments.push(format!(
                        "decide: path parameter `{pname}` is the variable `{var}` (data:); no earlier response links it"
                    ));
                    var
                }
            };
            url = url.replace(&format!("{{{pname}}}"), &format!("{{{{ {var} }}}}"));
        }
        url
    }
}

/// The data variable of an unlinked path parameter: its name, or for a name that says nothing
/// of what it identifies (`id`, `key`, `slug`…) the resource before it as well, so that
/// `/addons/{id}` reads `addon_id` and `/abilities/{id}` `ability_id`, never one value for both.
fn data_variable(path: &str, pname: &str) -> String {
    let name = names::snake_case(pname);
    let generic = [
        "id",
        "uuid",
        "guid",
        "key",
        "slug",
        "name",
        "code",
        "number",
        "ref",
        "identifier",
    ];
    if !generic.contains(&name.as_str()) {
        return name;
    }
    let placeholder = format!("{{{pname}}}");
    let segments: Vec<&str> = path.split('/').collect();
    let resource = segments
        .iter()
        .position(|s| *s == placeholder)
        .and_then(|i| i.checked_sub(1))
        .map(|i| segments[i])
        .filter(|s| !s.is_empty() && !s.contains('{'));
    match resource.and_then(names::resource_name) {
        Some(owner) => format!("{owner}_{name}"),
        None => name,
    }
}

/// `(name, value)` pairs, in the order they are written.
type Pairs = Vec<(String, String)>;

/// The query and headers an operation sends: its required parameters and those with an
/// example (path parameters are in the URL), then its security's.
fn parameters(
    spec: &Value,
    o: &Op<'_>,
    auth: &security::Auth,
    defused: &mut Vec<String>,
    dropped: &mut Vec<String>,
) -> (Pairs, Pairs) {
    let mut query: Vec<(String, String)> = Vec::new();
    let mut headers: Vec<(String, String)> = auth.headers.clone();
    for p in &o.params {
        let place = p.get("in").and_then(Value::as_str).unwrap_or("");
        let pname = p
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let required = p.get("required") == Some(&Value::Bool(true));
        let has_example = p.get("example").is_some()
            || p.get("schema").is_some_and(|s| s.get("example").is_some());
        if !(required || has_example) || place == "path" {
            continue;
        }
        if pname.contains("{{") {
            defused.push(format!(
                "the name of {place} parameter `{pname}` (left out)"
            ));
            continue;
        }
        let e = param_example(spec, p);
        if e.defused {
            defused.push(format!("{place} parameter `{pname}`"));
        }
        match place {
            "query" => query.extend(super::style::pairs(p, &pname, &e.value)),
            "header" => headers.push((pname, super::style::single(p, &e.value))),
            // A cookie is `form` like a query; its pairs are joined by `; ` below.
            "cookie" => headers.extend(
                super::style::pairs(p, &pname, &e.value)
                    .into_iter()
                    .map(|(k, v)| ("Cookie".to_string(), format!("{k}={v}"))),
            ),
            _ => {}
        }
    }
    query.extend(auth.query.clone());
    (query, one_of_each(headers, dropped))
}

/// The headers with each sent once: every `Cookie` pair joined into one `Cookie: a=1; b=2`
/// (a request has one cookie header), and a parameter naming a header already set (by the
/// security scheme, which comes first) left out and said so.
fn one_of_each(headers: Pairs, notes: &mut Vec<String>) -> Pairs {
    let mut out: Pairs = Vec::new();
    for (k, v) in headers {
        match out.iter_mut().find(|(o, _)| o.eq_ignore_ascii_case(&k)) {
            Some((_, joined)) if k.eq_ignore_ascii_case("cookie") => {
                joined.push_str("; ");
                joined.push_str(&v);
            }
            Some(_) => notes.push(format!(
                "header parameter `{k}` is left out: the security scheme sets that header"
            )),
            None => out.push((k, v)),
        }
    }
    out
}

/// `check: {status: ...}`: the operation's documented 2xx statuses.
fn status_check(op: &Value) -> Option<Entry> {
    let statuses = success_statuses(op);
    match statuses.len() {
        0 => None,
        1 => Some(Entry::new(
            "check",
            Node::map([("status", Node::raw(statuses[0].to_string()))]),
        )),
        _ => Some(Entry::new(
            "check",
            Node::map([(
                "status",
                Node::seq(statuses.iter().map(|s| Node::raw(s.to_string()))),
            )]),
        )),
    }
}

/// Registers the `{{ env.NAME }}` a generated value reads (a `format: password` field).
fn collect_env(node: &Node, report: &mut Report) {
    match node {
        Node::Str(s) => {
            let mut rest = s.as_str();
            while let Some(i) = rest.find("{{ env.") {
                let tail = &rest[i + 7..];
                let end = tail.find(' ').unwrap_or(tail.len());
                let var = &tail[..end];
                if !report.variables.iter().any(|v| v.name == var) {
                    report.variable(var, "a generated field (format: password)");
                }
                rest = &tail[end..];
            }
        }
        Node::Raw(_) => {}
        Node::Map(m) => m.iter().for_each(|e| collect_env(&e.value, report)),
        Node::Seq(s) => s.iter().for_each(|i| collect_env(&i.value, report)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generic_path_parameter_is_named_after_its_resource() {
        let cases = [
            ("/abilities/{id}", "id", "ability_id"),
            ("/addons/{id}", "id", "addon_id"),
            (
                "/alert_grouping_settings/{id}",
                "id",
                "alert_grouping_setting_id",
            ),
            (
                "/services/{id}/integrations/{integration_id}",
                "id",
                "service_id",
            ),
            (
                "/services/{id}/integrations/{integration_id}",
                "integration_id",
                "integration_id",
            ),
            ("/teams/{teamId}", "teamId", "team_id"),
            ("/repos/{owner}/{name}", "name", "name"),
            ("/{id}", "id", "id"),
            ("/v2/{id}", "id", "id"),
            ("/files/{fileKey}/versions/{key}", "key", "version_key"),
        ];
        for (path, pname, want) in cases {
            assert_eq!(data_variable(path, pname), want, "{path} {pname}");
        }
    }
}
