//! Artillery's `{{ ... }}` expressions in loadlab's words: its built-in functions become
//! loadlab's, environment reads become `env.NAME`, payload fields are read from their data set.

/// How a template is rewritten: the data set each payload field belongs to.
pub struct Rewriter {
    /// `(field, data set)`.
    pub fields: Vec<(String, String)>,
    /// `(variable, its text)` for `config.variables` whose value is itself a template
    /// (`apiKey: "{{ $env.API_KEY }}"`): each use is replaced by that text, rewritten.
    pub aliases: Vec<(String, String)>,
    /// Expressions with no loadlab equivalent, found while rewriting.
    pub unknown: Vec<String>,
    /// Environment variables read (`$env.X`, `$processEnvironment.X`).
    pub env: Vec<String>,
    /// How many times an expression of `unknown` was met: a step that met one is left out.
    pub unknown_uses: usize,
}

impl Rewriter {
    pub fn new(fields: Vec<(String, String)>) -> Self {
        Rewriter {
            fields,
            aliases: Vec::new(),
            unknown: Vec::new(),
            env: Vec::new(),
            unknown_uses: 0,
        }
    }

    /// Rewrites every `{{ ... }}` in `text`.
    pub fn text(&mut self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            // Artillery reads `{{{ x }}}` as `{{ x }}` (its pattern is `{{{?...}}}?`).
            let triple = rest[open..].starts_with("{{{");
            let (start, end) = if triple { (3, "}}}") } else { (2, "}}") };
            let Some(close) = rest[open..].find(end) else {
                break;
            };
            out.push_str(&rest[..open]);
            let expr = rest[open + start..open + close].trim();
            let alias = self.aliases.iter().find(|(v, _)| v == expr).cloned();
            match alias {
                // The alias's own text holds no alias of itself (`variables` keeps only
                // values without a bare variable), so this does not recurse further.
                Some((_, text)) => {
                    let text = self.text(&text);
                    out.push_str(&text);
                }
                None => out.push_str(&format!("{{{{ {} }}}}", self.expr(expr))),
            }
            rest = &rest[open + close + end.len()..];
        }
        out.push_str(rest);
        out
    }

    pub fn json(&mut self, v: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.json(x)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), self.json(x))).collect())
            }
            other => other.clone(),
        }
    }

    fn expr(&mut self, expr: &str) -> String {
        if let Some(var) = expr
            .strip_prefix("$env.")
            .or_else(|| expr.strip_prefix("$processEnvironment."))
        {
            if !self.env.iter().any(|e| e == var) {
                self.env.push(var.to_string());
            }
            return format!("env.{var}");
        }
        if let Some((func, args)) = call(expr) {
            let args: Vec<&str> = args.iter().map(|a| a.trim()).collect();
            match (func, args.as_slice()) {
                ("$randomNumber", [a, b]) => return format!("random_int({a}, {b})"),
                ("$randomString", [n]) => return format!("random_string({n})"),
                ("$randomString", []) => return "random_string(10)".into(),
                ("$uuid", []) => return "uuid()".into(),
                _ => {}
            }
        }
        if expr == "$uuid" {
            return "uuid()".into();
        }
        if let Some((_, set)) = self.fields.iter().find(|(f, _)| f == expr) {
            return format!("{set}.{expr}");
        }
        if expr.starts_with('$') {
            self.unknown_uses += 1;
            if !self.unknown.iter().any(|u| u == expr) {
                self.unknown.push(expr.to_string());
            }
        }
        expr.to_string()
    }
}

/// `$randomNumber(1, 50)` → `("$randomNumber", ["1", " 50"])`.
fn call(expr: &str) -> Option<(&str, Vec<&str>)> {
    let (name, rest) = expr.split_once('(')?;
    let args = rest.strip_suffix(')')?;
    let args = if args.trim().is_empty() {
        Vec::new()
    } else {
        args.split(',').collect()
    };
    Some((name.trim(), args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artillery_expressions_in_loadlab_words() {
        let mut r = Rewriter::new(vec![("username".into(), "users".into())]);
        let cases = [
            (
                "user{{ $randomNumber(1,50) }}",
                "user{{ random_int(1, 50) }}",
            ),
            ("{{$randomString( 8 )}}", "{{ random_string(8) }}"),
            ("artillery {{ $uuid }}", "artillery {{ uuid() }}"),
            ("{{ $env.API_KEY }}", "{{ env.API_KEY }}"),
            ("{{ $processEnvironment.HOST }}/x", "{{ env.HOST }}/x"),
            ("{{ username }}", "{{ users.username }}"),
            ("Bearer {{ token }}", "Bearer {{ token }}"),
            ("no template", "no template"),
            ("{{ $loopCount }}", "{{ $loopCount }}"),
            ("{{{ username }}}", "{{ users.username }}"),
            ("/{{{token}}}/x", "/{{ token }}/x"),
        ];
        for (from, want) in cases {
            assert_eq!(r.text(from), want, "{from}");
        }
        assert_eq!(r.unknown, ["$loopCount"]);
        assert_eq!(r.env, ["API_KEY", "HOST"]);
    }

    #[test]
    fn a_variable_holding_a_template_is_replaced_by_it() {
        let mut r = Rewriter::new(Vec::new());
        r.aliases = vec![
            ("apiKey".into(), "{{ $env.API_KEY }}".into()),
            (
                "auth".into(),
                "Bearer {{ $processEnvironment.TOKEN }}".into(),
            ),
        ];
        assert_eq!(r.text("{{ apiKey }}"), "{{ env.API_KEY }}");
        assert_eq!(
            r.text("x={{apiKey}}; {{ auth }}"),
            "x={{ env.API_KEY }}; Bearer {{ env.TOKEN }}"
        );
        assert_eq!(r.env, ["API_KEY", "TOKEN"]);
    }
}
