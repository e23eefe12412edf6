//! The part of JavaScript the k6 importer reads, as a small tree: `parse.rs` lowers the
//! parser's AST into it, so the rest of the importer is plain Rust over a few enums (and its
//! tests need no parser).

/// An expression. What the importer never reads (`a ? b : c`, `await`, classes…) is `Other`,
/// kept with its source text and line so it can be reported.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
    /// `` `text ${expr} text` ``: `quasis.len() == exprs.len() + 1`.
    Template {
        quasis: Vec<String>,
        exprs: Vec<Expr>,
    },
    Ident(String),
    /// `a.b`, or `a['b']` with a literal key.
    Member {
        object: Box<Expr>,
        property: String,
    },
    /// `a[i]` with a computed key.
    Index {
        object: Box<Expr>,
        index: Box<Expr>,
    },
    Call {
        callee: Box<Expr>,
        args: Vec<Expr>,
        line: usize,
    },
    New {
        callee: Box<Expr>,
        args: Vec<Expr>,
        line: usize,
    },
    Object(Vec<Prop>),
    Array(Vec<Expr>),
    /// A function or arrow function; an arrow's expression body is one `Return`.
    Function {
        params: Vec<String>,
        body: Vec<Stmt>,
        line: usize,
    },
    /// Binary and logical operators (`+`, `===`, `||`, `&&`, `%`…), as written.
    Binary {
        op: String,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `!x`, `-x`, `typeof x`.
    Unary {
        op: String,
        arg: Box<Expr>,
    },
    Other {
        text: String,
        line: usize,
    },
}

/// A property of an object literal; a spread (`...base`) has the key `...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Prop {
    pub key: String,
    pub value: Expr,
    pub line: usize,
}

pub const SPREAD: &str = "...";

/// A statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `import x from 'm'`, `import { a as b } from 'm'`: `(local, imported)` with `default`
    /// or `*` for the default and namespace imports.
    Import {
        names: Vec<(String, String)>,
        source: String,
        line: usize,
    },
    /// `const`/`let`/`var` with one simple name (each declarator of a list is one `Var`).
    Var {
        name: String,
        value: Option<Expr>,
        exported: bool,
        line: usize,
    },
    /// `name = value;`
    Assign {
        name: String,
        value: Expr,
        line: usize,
    },
    Function {
        name: String,
        params: Vec<String>,
        body: Vec<Stmt>,
        exported: bool,
        default: bool,
        line: usize,
    },
    Expr {
        expr: Expr,
        line: usize,
    },
    If {
        test: Expr,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
        line: usize,
    },
    Return {
        value: Option<Expr>,
        line: usize,
    },
    /// `for (let i = 0; i < count; i++) { body }` with a literal count.
    Loop {
        count: u64,
        var: String,
        body: Vec<Stmt>,
        line: usize,
    },
    /// `for (const name of iterable) { body }`, as written; followed where the iterable is
    /// known (the responses of an `http.batch`), reported otherwise.
    ForOf {
        var: String,
        iterable: Expr,
        body: Vec<Stmt>,
        /// The statement's first source line, for the report when it is not followed.
        text: String,
        line: usize,
    },
    /// Anything else (loops, `try`, classes, destructuring…): its first source line.
    Other {
        text: String,
        line: usize,
    },
}

impl Stmt {
    pub fn line(&self) -> usize {
        match self {
            Stmt::Import { line, .. }
            | Stmt::Var { line, .. }
            | Stmt::Assign { line, .. }
            | Stmt::Function { line, .. }
            | Stmt::Expr { line, .. }
            | Stmt::If { line, .. }
            | Stmt::Return { line, .. }
            | Stmt::Loop { line, .. }
            | Stmt::ForOf { line, .. }
            | Stmt::Other { line, .. } => *line,
        }
    }
}

impl Expr {
    #[cfg(test)]
    pub fn ident(name: &str) -> Expr {
        Expr::Ident(name.to_string())
    }

    /// `a.b.c` as `["a", "b", "c"]` when the expression is a chain of names.
    pub fn path(&self) -> Option<Vec<&str>> {
        match self {
            Expr::Ident(n) => Some(vec![n.as_str()]),
            Expr::Member { object, property } => {
                let mut p = object.path()?;
                p.push(property.as_str());
                Some(p)
            }
            _ => None,
        }
    }

    /// The dotted name of a callee (`http.get`, `sleep`), when it is one.
    pub fn dotted(&self) -> Option<String> {
        self.path().map(|p| p.join("."))
    }

    /// `(callee name, args, line)` for a call of a named function.
    pub fn as_call(&self) -> Option<(String, &[Expr], usize)> {
        match self {
            Expr::Call { callee, args, line } => Some((callee.dotted()?, args.as_slice(), *line)),
            _ => None,
        }
    }

    /// The value of a property of an object literal.
    pub fn prop(&self, key: &str) -> Option<&Expr> {
        match self {
            Expr::Object(props) => props.iter().rev().find(|p| p.key == key).map(|p| &p.value),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Expr::Str(s) => Some(s),
            Expr::Template { quasis, exprs } if exprs.is_empty() => {
                quasis.first().map(String::as_str)
            }
            _ => None,
        }
    }

    pub fn as_num(&self) -> Option<f64> {
        match self {
            Expr::Num(n) => Some(*n),
            Expr::Unary { op, arg } if op == "-" => arg.as_num().map(|n| -n),
            _ => None,
        }
    }

    /// The expression a function returns when its body is one `return` (an arrow's
    /// expression body included).
    pub fn returned(&self) -> Option<&Expr> {
        match self {
            Expr::Function { body, .. } => match body.as_slice() {
                [Stmt::Return { value: Some(v), .. }] => Some(v),
                _ => None,
            },
            _ => None,
        }
    }

    /// A short text for messages: the source text, or a sketch of the expression.
    pub fn sketch(&self) -> String {
        match self {
            Expr::Str(s) => format!("'{s}'"),
            Expr::Num(n) => crate::scaffold::fmt_num(*n),
            Expr::Bool(b) => b.to_string(),
            Expr::Null => "null".into(),
            Expr::Template { .. } => "`…`".into(),
            Expr::Ident(name) => name.clone(),
            // `res.json().token`: no dotted path, but still worth naming in a message.
            Expr::Member { object, property } => self
                .dotted()
                .unwrap_or_else(|| format!("{}.{property}", object.sketch())),
            Expr::Index { object, .. } => format!("{}[…]", object.sketch()),
            Expr::Call { callee, .. } => format!("{}(…)", callee.sketch()),
            Expr::New { callee, .. } => format!("new {}(…)", callee.sketch()),
            Expr::Object(_) => "{…}".into(),
            Expr::Array(_) => "[…]".into(),
            Expr::Function { .. } => "a function".into(),
            Expr::Binary { op, left, right } => {
                format!("{} {op} {}", left.sketch(), right.sketch())
            }
            Expr::Unary { op, arg } => format!("{op}{}", arg.sketch()),
            Expr::Other { text, .. } => text.clone(),
        }
    }
}
