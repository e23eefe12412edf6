//! Artillery's `config.variables` as loadlab data sets or aliases: kept apart from the rest of
//! `config:` because a variable named like a credential (`password: ["secret"]`) must never be
//! written out as a data set of literal values — it is read from the environment instead.

use crate::credentials;
use crate::names;
use crate::report::Report;
use crate::yaml::{Entry, Node};
use serde_yaml_ng::Value;

/// `config.variables`: each a data set of its values, picked at random; a single value that
/// is a template (`"{{ $env.API_KEY }}"`) is returned as an alias instead, since a data set's
/// values are sent as written. A variable named like a credential is an alias of
/// `{{ $env.NAME }}`, whatever its values.
pub fn variables(
    vars: Option<&Value>,
    report: &mut Report,
    data: &mut Vec<Entry>,
) -> Vec<(String, String)> {
    let mut aliases = Vec::new();
    let Some(vars) = vars.and_then(Value::as_mapping) else {
        return aliases;
    };
    for (k, v) in vars {
        let Some(name) = k.as_str() else { continue };
        if let Some(text) = v.as_str().filter(|t| is_expression_only(t)) {
            report.did(format!(
                "config.variables.{name} is `{text}`: each `{{{{ {name} }}}}` became it"
            ));
            aliases.push((name.to_string(), text.to_string()));
            continue;
        }
        let values = match v {
            Value::Sequence(s) => s.clone(),
            other => vec![other.clone()],
        };
        if credentials::is_credential_name(name) {
            aliases.push((name.to_string(), credential(name, values.len(), report)));
            continue;
        }
        let values: Vec<serde_json::Value> = values
            .iter()
            .filter_map(|x| serde_json::to_value(x).ok())
            .collect();
        data.push(Entry::new(
            name,
            Node::map([
                ("values", Node::json(&serde_json::Value::Array(values))),
                ("pick", Node::raw("random")),
            ]),
        ));
        report.did(format!(
            "config.variables.{name} became the data set `{name}` (a random value per iteration)"
        ));
    }
    aliases
}

/// The alias text of a credential-named variable (`{{ $env.PASSWORD }}`), its environment
/// variable asked for in the report: the first reason recorded is the one printed.
fn credential(name: &str, count: usize, report: &mut Report) -> String {
    let var = names::env_name(name);
    let why = if count > 1 {
        format!("config.variables.{name} listed {count} literal credentials; one value is read from the environment for every user")
    } else {
        format!("config.variables.{name} held a literal credential")
    };
    report.variable(&var, why);
    report.did(format!(
        "config.variables.{name} is named like a credential: each `{{{{ {name} }}}}` became `{{{{ env.{var} }}}}`"
    ));
    format!("{{{{ $env.{var} }}}}")
}

/// Text whose templates are all Artillery expressions (`$env.X`, `$randomNumber(…)`), none a
/// bare variable that could name another alias.
fn is_expression_only(text: &str) -> bool {
    let mut rest = text;
    let mut any = false;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            return false;
        };
        if !rest[open + 2..open + close].trim().starts_with('$') {
            return false;
        }
        any = true;
        rest = &rest[open + close + 2..];
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_credential_named_variable_is_read_from_the_environment() {
        let vars: Value = serde_yaml_ng::from_str(
            "password: [secret, hunter2]\napiKey: k-123\ncity: [Paris, Rome]",
        )
        .unwrap();
        let mut report = Report::default();
        let mut data = Vec::new();
        let aliases = variables(Some(&vars), &mut report, &mut data);
        assert_eq!(
            aliases,
            [
                ("password".to_string(), "{{ $env.PASSWORD }}".to_string()),
                ("apiKey".to_string(), "{{ $env.API_KEY }}".to_string()),
            ]
        );
        let sets: Vec<&str> = data.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(sets, ["city"]);
        let names: Vec<&str> = report.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["PASSWORD", "API_KEY"]);
        assert!(report.variables[0].why.contains("2 literal credentials"));
    }
}
