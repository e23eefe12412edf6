//! Artillery's `auth: {user, pass}` on a request is HTTP Basic authentication. loadlab has no
//! base64 function in its templates, so the header's credential is read whole from the
//! environment (`Authorization: Basic {{ env.BASIC_AUTH }}`), never written from the script.

use crate::report::Report;
use crate::yaml::Node;
use serde_yaml_ng::Value;

/// The `(user, pass)` pairs met so far, as written: one environment variable for each.
#[derive(Default)]
pub struct BasicAuth {
    seen: Vec<(String, String)>,
}

impl BasicAuth {
    /// The `Authorization` header for a request's `auth:`, its variable asked for in the
    /// report; `None` when the request has no usable `auth` (reported when it has one).
    pub fn header(
        &mut self,
        auth: &Value,
        line: Option<usize>,
        report: &mut Report,
    ) -> Option<(String, Node)> {
        let text = |k: &str| auth.get(k).and_then(scalar);
        let (Some(user), Some(pass)) = (text("user"), text("pass")) else {
            report.unsupported(
                line,
                "`auth` without both `user` and `pass`: not converted (the request is sent without credentials)",
            );
            return None;
        };
        let index = match self
            .seen
            .iter()
            .position(|p| *p == (user.clone(), pass.clone()))
        {
            Some(i) => i,
            None => {
                self.seen.push((user.clone(), pass.clone()));
                self.seen.len() - 1
            }
        };
        let var = match index {
            0 => "BASIC_AUTH".to_string(),
            n => format!("BASIC_AUTH_{}", n + 1),
        };
        // A templated password (`{{ password }}`) is shown, as it names where the value lives.
        let pass = if pass.contains("{{") {
            pass.as_str()
        } else {
            "PASSWORD"
        };
        report.variable(
            &var,
            format!(
                "Basic auth of user `{user}` (Artillery's `auth`): the base64 of `{user}:{pass}`"
            ),
        );
        Some((
            "Authorization".into(),
            Node::str(format!("Basic {{{{ env.{var} }}}}")),
        ))
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_distinct_credential_gets_its_own_variable() {
        let mut auth = BasicAuth::default();
        let mut report = Report::default();
        let cases = [
            (
                "{user: leo, pass: secret}",
                Some("Basic {{ env.BASIC_AUTH }}"),
            ),
            (
                "{user: leo, pass: '{{ password }}'}",
                Some("Basic {{ env.BASIC_AUTH_2 }}"),
            ),
            (
                "{user: leo, pass: secret}",
                Some("Basic {{ env.BASIC_AUTH }}"),
            ),
            ("{user: leo}", None),
        ];
        for (yaml, want) in cases {
            let v: Value = serde_yaml_ng::from_str(yaml).unwrap();
            let got = auth.header(&v, Some(3), &mut report).map(|(_, n)| match n {
                Node::Str(s) => s,
                other => panic!("{other:?}"),
            });
            assert_eq!(got.as_deref(), want, "{yaml}");
        }
        let names: Vec<&str> = report.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["BASIC_AUTH", "BASIC_AUTH_2"]);
        assert_eq!(report.unsupported.len(), 1);
        assert!(!format!("{report}").contains("secret"));
    }
}
