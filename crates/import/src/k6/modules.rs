//! A k6 project split into files (`import { login } from './auth.js'`, as grafana's own
//! WooCommerce example is): the local modules a script imports are read and their top-level
//! declarations put before the script's own, as a bundler would, so that their functions and
//! constants convert where the script uses them.

use super::js::Stmt;
use super::parse::{self, Allocator};
use crate::error::ImportError;
use crate::report::Report;
use std::path::{Path, PathBuf};

/// How deep modules may import modules: past it the rest stay `not converted`.
const MAX_DEPTH: usize = 8;

/// `program` with the declarations of the local modules it imports (and those they import)
/// before its own statements; an import that was read is dropped, one that could not be read
/// stays (reported as not converted, with why).
pub fn with_local_modules(
    program: Vec<Stmt>,
    file: &str,
    allocator: &Allocator,
    report: &mut Report,
) -> Result<Vec<Stmt>, ImportError> {
    let mut bundle = Bundle {
        allocator,
        read: Vec::new(),
        unreadable: Vec::new(),
        out: Vec::new(),
    };
    let own = bundle.resolve(program, Path::new(file), 0)?;
    for (module, why) in &bundle.unreadable {
        report.did(format!(
            "the local module `{module}` could not be read ({why}): what the script takes from it is not converted"
        ));
    }
    if !bundle.read.is_empty() {
        let names: Vec<String> = bundle
            .read
            .iter()
            .map(|p| format!("`{}`", p.display()))
            .collect();
        report.did(format!(
            "read the local module(s) {}: their functions convert where the script calls them (a line named in a not-converted note inside one is that module's line)",
            names.join(", ")
        ));
    }
    bundle.out.extend(own);
    Ok(bundle.out)
}

struct Bundle<'a> {
    allocator: &'a Allocator,
    /// Modules read, in the order their declarations were added (each once).
    read: Vec<PathBuf>,
    unreadable: Vec<(String, String)>,
    /// The modules' declarations, dependencies before what uses them.
    out: Vec<Stmt>,
}

impl Bundle<'_> {
    /// `program` without the local imports that were read, after adding those modules'
    /// declarations to `out`.
    fn resolve(
        &mut self,
        program: Vec<Stmt>,
        file: &Path,
        depth: usize,
    ) -> Result<Vec<Stmt>, ImportError> {
        let dir = file.parent().unwrap_or(Path::new(""));
        let mut kept = Vec::with_capacity(program.len());
        for stmt in program {
            let Stmt::Import { names, source, .. } = &stmt else {
                kept.push(stmt);
                continue;
            };
            if !is_local(source) || depth >= MAX_DEPTH {
                kept.push(stmt);
                continue;
            }
            let path = dir.join(source);
            if self.read.contains(&path) {
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    self.read.push(path.clone());
                    let shown = path.display().to_string();
                    let module = parse::parse(self.allocator, &text, &shown)?;
                    let module = self.resolve(module, &path, depth + 1)?;
                    self.out.extend(declarations(module, names));
                }
                Err(e) => {
                    self.unreadable.push((source.clone(), e.to_string()));
                    kept.push(stmt);
                }
            }
        }
        Ok(kept)
    }
}

/// `./lib/x.js`, `../common.js`: a file of the project, not a k6 module or a URL.
fn is_local(source: &str) -> bool {
    source.starts_with("./") || source.starts_with("../")
}

/// What a module contributes: its top-level statements less its `options` (a module's own
/// options do not apply) and its default function, which joins under the name the script
/// imports it by (`import login from './login.js'`) or not at all.
fn declarations(module: Vec<Stmt>, names: &[(String, String)]) -> Vec<Stmt> {
    let default_as = names
        .iter()
        .find(|(_, imported)| imported == "default")
        .map(|(local, _)| local.clone());
    module
        .into_iter()
        .filter_map(|stmt| match stmt {
            Stmt::Function {
                default: true,
                params,
                body,
                line,
                ..
            } => default_as.clone().map(|name| Stmt::Function {
                name,
                params,
                body,
                exported: false,
                default: false,
                line,
            }),
            Stmt::Var { ref name, .. } if name == "options" => None,
            other => Some(renamed(other, names)),
        })
        .collect()
}

/// A declaration imported under another name (`import { login as signIn }`) takes that name.
fn renamed(stmt: Stmt, names: &[(String, String)]) -> Stmt {
    let local_for = |name: &str| {
        names
            .iter()
            .find(|(local, imported)| imported == name && local != name)
            .map(|(local, _)| local.clone())
    };
    match stmt {
        Stmt::Function {
            name,
            params,
            body,
            exported,
            default,
            line,
        } => Stmt::Function {
            name: local_for(&name).unwrap_or(name),
            params,
            body,
            exported,
            default,
            line,
        },
        Stmt::Var {
            name,
            value,
            exported,
            line,
        } => Stmt::Var {
            name: local_for(&name).unwrap_or(name),
            value,
            exported,
            line,
        },
        other => other,
    }
}
