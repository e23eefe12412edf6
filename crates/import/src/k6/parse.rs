//! The k6 script parsed with oxc (a complete ECMAScript parser) and lowered to the small tree
//! of `js.rs`: the only file of the importer that knows oxc's AST.

use super::js::{Expr, Prop, Stmt, SPREAD};
use crate::error::ImportError;
use oxc_ast::ast;
use oxc_span::{GetSpan, SourceType, Span};

pub use oxc_allocator::Allocator;

/// `globalThis`: its properties are global variables, read by their bare names.
fn is_global(e: &ast::Expression) -> bool {
    matches!(e, ast::Expression::Identifier(i) if i.name == "globalThis")
}

/// The script's top-level statements; a syntax error names its line and column.
pub fn parse(allocator: &Allocator, source: &str, file: &str) -> Result<Vec<Stmt>, ImportError> {
    let source = source.trim_start_matches('\u{feff}');
    // TypeScript (a `.ts` file) parses as TypeScript; its types are read past.
    let typescript = [".ts", ".mts", ".cts"].iter().any(|x| file.ends_with(x));
    let kind = if typescript {
        SourceType::ts()
    } else {
        SourceType::mjs()
    };
    let ret = oxc_parser::Parser::new(allocator, source, kind).parse();
    let lines = LineIndex::new(source);
    if let Some(e) = ret.diagnostics.errors().next() {
        let at = e.labels.first().map(|l| l.offset()).unwrap_or(0);
        let (line, column) = lines.position(at);
        return Err(ImportError::invalid(
            file,
            format!(
                "{line}:{column}: not valid JavaScript ({}); give a k6 script (JavaScript, ES modules)",
                e.message
            ),
        ));
    }
    let l = Lower {
        source,
        lines,
        depth: std::cell::Cell::new(0),
    };
    Ok(l.statements(&ret.program.body))
}

/// Byte offsets to 1-based lines and columns.
struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    fn new(source: &str) -> Self {
        let mut starts = vec![0];
        for (i, b) in source.bytes().enumerate() {
            if b == b'\n' {
                starts.push(i as u32 + 1);
            }
        }
        LineIndex { starts }
    }

    fn position(&self, offset: u32) -> (usize, usize) {
        let line = self.starts.partition_point(|s| *s <= offset);
        let start = self.starts[line.saturating_sub(1)];
        (line.max(1), (offset - start) as usize + 1)
    }

    fn line(&self, offset: u32) -> usize {
        self.position(offset).0
    }
}

/// Deepest expression lowered: a flat chain (`1 + 1 + ...`, `a.b.c...`) the parser reads in a
/// loop is a deep tree, cut here into an unconverted part rather than a deep recursion.
const MAX_EXPR_DEPTH: usize = 256;

struct Lower<'s> {
    source: &'s str,
    lines: LineIndex,
    depth: std::cell::Cell<usize>,
}

impl Lower<'_> {
    fn line(&self, span: Span) -> usize {
        self.lines.line(span.start)
    }

    /// The first line of a node's source text, shortened.
    fn text(&self, span: Span) -> String {
        let t = self
            .source
            .get(span.start as usize..span.end as usize)
            .unwrap_or("");
        let first = t.lines().next().unwrap_or("").trim();
        if first.chars().count() > 60 {
            format!("{}…", first.chars().take(60).collect::<String>())
        } else if t.lines().nth(1).is_some() {
            format!("{first} …")
        } else {
            first.to_string()
        }
    }

    fn statements(&self, body: &[ast::Statement]) -> Vec<Stmt> {
        body.iter().flat_map(|s| self.statement(s)).collect()
    }

    fn other(&self, span: Span) -> Vec<Stmt> {
        vec![Stmt::Other {
            text: self.text(span),
            line: self.line(span),
        }]
    }

    fn statement(&self, s: &ast::Statement) -> Vec<Stmt> {
        use ast::Statement as S;
        let line = self.line(s.span());
        match s {
            S::ImportDeclaration(d) => vec![self.import(d, line)],
            S::ExportDeclaration(d) => match &d.declaration {
                ast::Declaration::VariableDeclaration(v) => self.variables(v, true),
                ast::Declaration::FunctionDeclaration(f) => {
                    vec![self.function_decl(f, true, false)]
                }
                _ => self.other(s.span()),
            },
            S::ExportDefaultDeclaration(d) => self.export_default(d),
            S::VariableDeclaration(v) => self.variables(v, false),
            S::FunctionDeclaration(f) => vec![self.function_decl(f, false, false)],
            S::ExpressionStatement(e) => self.expression_statement(e, line),
            S::IfStatement(i) => vec![Stmt::If {
                test: self.expr(&i.test),
                then: self.block(&i.consequent),
                otherwise: i
                    .alternate
                    .as_ref()
                    .map(|a| self.block(a))
                    .unwrap_or_default(),
                line,
            }],
            S::BlockStatement(b) => self.statements(&b.body),
            S::ReturnStatement(r) => vec![Stmt::Return {
                value: r.argument.as_ref().map(|a| self.expr(a)),
                line,
            }],
            S::EmptyStatement(_) => Vec::new(),
            // TypeScript declarations of types only: nothing to run.
            S::TSTypeAliasDeclaration(_) | S::TSInterfaceDeclaration(_) => Vec::new(),
            S::ForStatement(f) => match self.counted(f) {
                Some((var, count)) => vec![Stmt::Loop {
                    count,
                    var,
                    body: self.block(&f.body),
                    line,
                }],
                None => self.other(s.span()),
            },
            S::ForOfStatement(f) => self.for_of(f, line),
            _ => self.other(s.span()),
        }
    }

    /// The local names an import binds, each with what it imports (`default`; `*` for a
    /// namespace).
    fn import(&self, d: &ast::ImportDeclaration, line: usize) -> Stmt {
        let mut names = Vec::new();
        for spec in d.specifiers.iter().flatten() {
            match spec {
                ast::ImportDeclarationSpecifier::ImportSpecifier(x) => {
                    names.push((x.local.name.to_string(), x.imported.name().to_string()))
                }
                ast::ImportDeclarationSpecifier::ImportDefaultSpecifier(x) => {
                    names.push((x.local.name.to_string(), "default".into()))
                }
                ast::ImportDeclarationSpecifier::ImportNamespaceSpecifier(x) => {
                    names.push((x.local.name.to_string(), "*".into()))
                }
            }
        }
        Stmt::Import {
            names,
            source: d.source.value.to_string(),
            line,
        }
    }

    /// `export default function () {...}`, or a function expression given as the default.
    fn export_default(&self, d: &ast::ExportDefaultDeclaration) -> Vec<Stmt> {
        match &d.declaration {
            ast::ExportDefaultDeclarationKind::FunctionDeclaration(f) => {
                vec![self.function_decl(f, true, true)]
            }
            other => match other.as_expression().map(|e| self.expr(e)) {
                Some(Expr::Function { params, body, line }) => vec![Stmt::Function {
                    name: "default".into(),
                    params,
                    body,
                    exported: true,
                    default: true,
                    line,
                }],
                _ => self.other(d.span),
            },
        }
    }

    /// An expression as a statement; of assignments, only `name = value` converts, and
    /// `globalThis.name = value` (a global, which bare `name` reads) as the same.
    fn expression_statement(&self, e: &ast::ExpressionStatement, line: usize) -> Vec<Stmt> {
        if let ast::Expression::AssignmentExpression(a) = &e.expression {
            let name = match (&a.left, a.operator.as_str()) {
                (ast::AssignmentTarget::AssignmentTargetIdentifier(id), "=") => {
                    Some(id.name.to_string())
                }
                (ast::AssignmentTarget::StaticMemberExpression(m), "=") if is_global(&m.object) => {
                    Some(m.property.name.to_string())
                }
                _ => None,
            };
            if let Some(name) = name {
                return vec![Stmt::Assign {
                    name,
                    value: self.expr(&a.right),
                    line,
                }];
            }
            return self.other(e.span);
        }
        vec![Stmt::Expr {
            expr: self.expr(&e.expression),
            line,
        }]
    }

    /// `for (const x of …)`, its source text kept for the report when it does not convert.
    fn for_of(&self, f: &ast::ForOfStatement, line: usize) -> Vec<Stmt> {
        let Some(var) = self.for_of_name(&f.left) else {
            return self.other(f.span);
        };
        let Stmt::Other { text, .. } = self.other(f.span).remove(0) else {
            return self.other(f.span);
        };
        vec![Stmt::ForOf {
            var,
            iterable: self.expr(&f.right),
            body: self.block(&f.body),
            text,
            line,
        }]
    }

    /// `const res` of `for (const res of …)`: its one simple name.
    fn for_of_name(&self, left: &ast::ForStatementLeft) -> Option<String> {
        let ast::ForStatementLeft::VariableDeclaration(d) = left else {
            return None;
        };
        let [decl] = d.declarations.as_slice() else {
            return None;
        };
        Some(decl.id.get_identifier_name()?.to_string())
    }

    /// `for (let i = A; i < N; i++)` (`<=`; or down, `i > N; i--`) with literal bounds:
    /// `(i, times the body runs)`.
    fn counted(&self, f: &ast::ForStatement) -> Option<(String, u64)> {
        let Some(ast::ForStatementInit::VariableDeclaration(init)) = &f.init else {
            return None;
        };
        let [decl] = init.declarations.as_slice() else {
            return None;
        };
        let var = decl.id.get_identifier_name()?.to_string();
        let a = decl.init.as_ref().map(|e| self.expr(e))?.as_num()?;
        let Expr::Binary { op, left, right } = self.expr(f.test.as_ref()?) else {
            return None;
        };
        let n = right.as_num()?;
        if *left != Expr::Ident(var.clone()) || a.fract() != 0.0 || n.fract() != 0.0 {
            return None;
        }
        let update: String = self
            .text(f.update.as_ref()?.span())
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let up = [format!("{var}++"), format!("++{var}"), format!("{var}+=1")].contains(&update);
        let down = [format!("{var}--"), format!("--{var}"), format!("{var}-=1")].contains(&update);
        let count = match (op.as_str(), up, down) {
            ("<", true, _) => n - a,
            ("<=", true, _) => n - a + 1.0,
            (">", _, true) => a - n,
            (">=", _, true) => a - n + 1.0,
            _ => return None,
        };
        (count >= 1.0).then_some((var, count as u64))
    }

    fn block(&self, s: &ast::Statement) -> Vec<Stmt> {
        match s {
            ast::Statement::BlockStatement(b) => self.statements(&b.body),
            other => self.statement(other),
        }
    }

    fn variables(&self, v: &ast::VariableDeclaration, exported: bool) -> Vec<Stmt> {
        v.declarations
            .iter()
            .map(|d| match d.id.get_identifier_name() {
                Some(name) => Stmt::Var {
                    name: name.to_string(),
                    value: d.init.as_ref().map(|e| self.expr(e)),
                    exported,
                    line: self.line(d.span),
                },
                None => Stmt::Other {
                    text: self.text(d.span),
                    line: self.line(d.span),
                },
            })
            .collect()
    }

    fn params(&self, params: &ast::FormalParameters) -> Vec<String> {
        params
            .items
            .iter()
            .map(|p| {
                p.pattern
                    .get_identifier_name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "_".into())
            })
            .collect()
    }

    fn function_decl(&self, f: &ast::Function, exported: bool, default: bool) -> Stmt {
        Stmt::Function {
            name: f
                .id
                .as_ref()
                .map(|i| i.name.to_string())
                .unwrap_or_else(|| "default".into()),
            params: self.params(&f.params),
            body: self.function_body(f),
            exported,
            default,
            line: self.line(f.span),
        }
    }

    /// A function's statements; none for a declaration without a body.
    fn function_body(&self, f: &ast::Function) -> Vec<Stmt> {
        f.body
            .as_ref()
            .map(|b| self.statements(&b.statements))
            .unwrap_or_default()
    }

    fn args(&self, args: &[ast::Argument]) -> Vec<Expr> {
        args.iter()
            .map(|a| match a.as_expression() {
                Some(e) => self.expr(e),
                None => Expr::Other {
                    text: self.text(a.span()),
                    line: self.line(a.span()),
                },
            })
            .collect()
    }

    fn expr(&self, e: &ast::Expression) -> Expr {
        if self.depth.get() >= MAX_EXPR_DEPTH {
            return Expr::Other {
                text: format!("an expression nested deeper than {MAX_EXPR_DEPTH} levels"),
                line: self.line(e.span()),
            };
        }
        self.depth.set(self.depth.get() + 1);
        let lowered = self.expr_within(e);
        self.depth.set(self.depth.get() - 1);
        lowered
    }

    fn expr_within(&self, e: &ast::Expression) -> Expr {
        use ast::Expression as E;
        let span = e.span();
        let line = self.line(span);
        match e {
            // TypeScript: `x as T`, `x!`, `x satisfies T`, `<T>x` are `x`.
            E::TSAsExpression(t) => self.expr(&t.expression),
            E::TSSatisfiesExpression(t) => self.expr(&t.expression),
            E::TSNonNullExpression(t) => self.expr(&t.expression),
            E::TSTypeAssertion(t) => self.expr(&t.expression),
            E::StringLiteral(s) => Expr::Str(s.value.to_string()),
            E::NumericLiteral(n) => Expr::Num(n.value),
            E::BooleanLiteral(b) => Expr::Bool(b.value),
            E::NullLiteral(_) => Expr::Null,
            E::TemplateLiteral(t) => self.template(t),
            E::Identifier(i) => Expr::Ident(i.name.to_string()),
            E::StaticMemberExpression(m) if is_global(&m.object) => {
                Expr::Ident(m.property.name.to_string())
            }
            E::StaticMemberExpression(m) => Expr::Member {
                object: Box::new(self.expr(&m.object)),
                property: m.property.name.to_string(),
            },
            E::ComputedMemberExpression(m) => {
                let object = Box::new(self.expr(&m.object));
                match self.expr(&m.expression) {
                    Expr::Str(property) => Expr::Member { object, property },
                    index => Expr::Index {
                        object,
                        index: Box::new(index),
                    },
                }
            }
            E::CallExpression(c) => Expr::Call {
                callee: Box::new(self.expr(&c.callee)),
                args: self.args(&c.arguments),
                line,
            },
            E::NewExpression(c) => Expr::New {
                callee: Box::new(self.expr(&c.callee)),
                args: self.args(&c.arguments),
                line,
            },
            E::ObjectExpression(o) => self.object(o),
            E::ArrayExpression(a) => self.array(a),
            E::ArrowFunctionExpression(f) => self.arrow_function(f, line),
            E::FunctionExpression(f) => Expr::Function {
                params: self.params(&f.params),
                body: self.function_body(f),
                line,
            },
            E::BinaryExpression(b) => Expr::Binary {
                op: b.operator.as_str().to_string(),
                left: Box::new(self.expr(&b.left)),
                right: Box::new(self.expr(&b.right)),
            },
            E::LogicalExpression(b) => Expr::Binary {
                op: b.operator.as_str().to_string(),
                left: Box::new(self.expr(&b.left)),
                right: Box::new(self.expr(&b.right)),
            },
            E::UnaryExpression(u) => Expr::Unary {
                op: u.operator.as_str().to_string(),
                arg: Box::new(self.expr(&u.argument)),
            },
            E::ParenthesizedExpression(p) => self.expr(&p.expression),
            _ => Expr::Other {
                text: self.text(span),
                line,
            },
        }
    }

    /// A template literal: its text parts (cooked, as the script means them) and expressions.
    fn template(&self, t: &ast::TemplateLiteral) -> Expr {
        Expr::Template {
            quasis: t
                .quasis
                .iter()
                .map(|q| {
                    q.value
                        .cooked
                        .as_ref()
                        .map(|c| c.to_string())
                        .unwrap_or_else(|| q.value.raw.to_string())
                })
                .collect(),
            exprs: t.expressions.iter().map(|x| self.expr(x)).collect(),
        }
    }

    /// An object literal's properties in order; a spread is a property keyed [`SPREAD`].
    fn object(&self, o: &ast::ObjectExpression) -> Expr {
        Expr::Object(
            o.properties
                .iter()
                .map(|p| match p {
                    ast::ObjectPropertyKind::ObjectProperty(p) => Prop {
                        key: p
                            .key
                            .static_name()
                            .map(|k| k.to_string())
                            .unwrap_or_else(|| self.text(p.key.span())),
                        value: self.expr(&p.value),
                        line: self.line(p.span),
                    },
                    ast::ObjectPropertyKind::SpreadProperty(s) => Prop {
                        key: SPREAD.into(),
                        value: self.expr(&s.argument),
                        line: self.line(s.span),
                    },
                })
                .collect(),
        )
    }

    /// An array literal; a hole or spread element is kept as its text.
    fn array(&self, a: &ast::ArrayExpression) -> Expr {
        Expr::Array(
            a.elements
                .iter()
                .map(|x| match x.as_expression() {
                    Some(e) => self.expr(e),
                    None => Expr::Other {
                        text: self.text(x.span()),
                        line: self.line(x.span()),
                    },
                })
                .collect(),
        )
    }

    /// An arrow function; an expression body is a `return` of it.
    fn arrow_function(&self, f: &ast::ArrowFunctionExpression, line: usize) -> Expr {
        let body = match &f.body {
            ast::ArrowFunctionBody::FunctionBody(b) => self.statements(&b.statements),
            other => match other.as_expression() {
                Some(e) => vec![Stmt::Return {
                    value: Some(self.expr(e)),
                    line: self.line(e.span()),
                }],
                None => Vec::new(),
            },
        };
        Expr::Function {
            params: self.params(&f.params),
            body,
            line,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_from_offsets() {
        let l = LineIndex::new("ab\ncd\n\nx");
        assert_eq!(l.position(0), (1, 1));
        assert_eq!(l.position(1), (1, 2));
        assert_eq!(l.position(3), (2, 1));
        assert_eq!(l.position(6), (3, 1));
        assert_eq!(l.position(7), (4, 1));
    }

    #[test]
    fn a_script_lowers_to_the_small_tree() {
        let a = Allocator::default();
        let src = "import http from 'k6/http';\nexport const options = { vus: 2, 'a-b': `x${y}z` };\nexport default function () {\n  const r = http.get(BASE + '/a', { headers: { ...H, X: 1 } });\n  if (__ITER === 0) { t = r.json('t'); }\n  for (;;) {}\n}\n";
        let s = parse(&a, src, "t.js").unwrap();
        assert!(
            matches!(&s[0], Stmt::Import { source, names, line: 1 } if source == "k6/http" && names == &[("http".to_string(), "default".to_string())])
        );
        let Stmt::Var {
            name,
            value: Some(Expr::Object(props)),
            exported: true,
            line: 2,
        } = &s[1]
        else {
            panic!("{:?}", s[1])
        };
        assert_eq!(name, "options");
        assert_eq!(props[1].key, "a-b");
        assert_eq!(
            props[1].value,
            Expr::Template {
                quasis: vec!["x".into(), "z".into()],
                exprs: vec![Expr::ident("y")]
            }
        );
        let Stmt::Function {
            body,
            default: true,
            ..
        } = &s[2]
        else {
            panic!("{:?}", s[2])
        };
        assert_eq!(body.len(), 3);
        assert!(
            matches!(&body[1], Stmt::If { then, line: 5, .. } if matches!(&then[0], Stmt::Assign { name, .. } if name == "t"))
        );
        assert!(matches!(&body[2], Stmt::Other { text, line: 6 } if text.starts_with("for (;;)")));
        let err = parse(&a, "export default function ( {", "bad.js")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("bad.js: 1:"), "{err}");
    }
}
