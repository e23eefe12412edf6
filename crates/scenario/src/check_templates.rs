//! Compiles every template of a scenario once at load time, so that an unknown variable or a
//! capture used before it is set is reported with its `file:line:column`, never at run time.

use crate::error::ScenarioError;
use crate::model::{Body, DataSet, Defaults, Flow, Step};
use crate::template::{compile, has_template, Names};
use crate::validate::Ctx;

pub fn flows(
    flows: &[Flow],
    shorthand: bool,
    defaults: &Defaults,
    data: &[DataSet],
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    let mut all = Vec::new();
    for f in flows {
        crate::model::collect_requests(&f.steps, &mut all);
    }
    let mut captures: Vec<String> = Vec::new();
    for r in &all {
        for c in &r.captures {
            if !captures.contains(&c.name) {
                captures.push(c.name.clone());
            }
        }
    }
    let names = Names {
        data,
        captures: &captures,
        available: None,
    };
    for (k, v) in &defaults.headers {
        check(v, &names, &format!("defaults.headers.{k}"), ctx)?;
    }
    for (i, f) in flows.iter().enumerate() {
        let path = if shorthand {
            "steps".to_string()
        } else {
            format!("flows[{i}].steps")
        };
        let mut available = Vec::new();
        walk(&f.steps, &path, data, &captures, &mut available, ctx)?;
    }
    Ok(())
}

fn walk(
    steps: &[Step],
    path: &str,
    data: &[DataSet],
    captures: &[String],
    available: &mut Vec<String>,
    ctx: &Ctx,
) -> Result<(), ScenarioError> {
    for (i, step) in steps.iter().enumerate() {
        let field = format!("{path}[{i}]");
        match step {
            Step::Think(_) => {}
            Step::Loop { steps, .. } => walk(
                steps,
                &format!("{field}.loop.steps"),
                data,
                captures,
                available,
                ctx,
            )?,
            Step::Once(steps) => walk(
                steps,
                &format!("{field}.once"),
                data,
                captures,
                available,
                ctx,
            )?,
            Step::Request(r) => {
                let names = Names {
                    data,
                    captures,
                    available: Some(available),
                };
                let method = r.method.as_str().to_ascii_lowercase();
                let url_field = format!("{field}.{method}");
                if let Some(rest) = r.url.split_once("://").map(|(_, rest)| rest) {
                    let authority = rest.split('/').next().unwrap_or("");
                    if has_template(authority) {
                        return Err(ctx
                            .err(&url_field, "templates are not allowed in the host of a URL")
                            .with_hint("connections are opened before the run: put variables in the path or query"));
                    }
                }
                check(&r.url, &names, &url_field, ctx)?;
                for (k, v) in &r.headers {
                    check(v, &names, &format!("{field}.headers.{k}"), ctx)?;
                }
                for (k, v) in &r.query {
                    check(v, &names, &format!("{field}.query.{k}"), ctx)?;
                }
                match &r.body {
                    Some(Body::Text(t)) => check(t, &names, &format!("{field}.body"), ctx)?,
                    Some(Body::Form(f)) => {
                        for (k, v) in f {
                            check(v, &names, &format!("{field}.form.{k}"), ctx)?;
                        }
                    }
                    Some(Body::Json(v)) => json(v, &names, &format!("{field}.json"), ctx)?,
                    None => {}
                }
                for c in &r.captures {
                    if !available.contains(&c.name) {
                        available.push(c.name.clone());
                    }
                }
            }
        }
    }
    Ok(())
}

fn json(v: &serde_json::Value, names: &Names, field: &str, ctx: &Ctx) -> Result<(), ScenarioError> {
    match v {
        serde_json::Value::String(s) => check(s, names, field, ctx),
        serde_json::Value::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                json(item, names, &format!("{field}[{i}]"), ctx)?;
            }
            Ok(())
        }
        serde_json::Value::Object(m) => {
            for (k, item) in m {
                json(item, names, &format!("{field}.{k}"), ctx)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn check(text: &str, names: &Names, field: &str, ctx: &Ctx) -> Result<(), ScenarioError> {
    if !has_template(text) {
        return Ok(());
    }
    compile(text, names).map(|_| ()).map_err(|m| {
        let (message, hint) = match m.split_once(", did you mean ") {
            Some((msg, s)) => (msg.to_string(), Some(format!("did you mean {s}"))),
            None => (m, None),
        };
        let e = ctx.err(field, message);
        match hint {
            Some(h) => e.with_hint(h),
            None => e,
        }
    })
}
