//! A `grpc:` step's `proto:` and `call:`: the `.proto` file compiled at load time (`protox`,
//! no `protoc`) and the method found in it, each mistake located at its field (and, for a
//! `.proto` that does not compile, at its own `line:column`).

use super::Ctx;
use crate::error::ScenarioError;
use crate::suggest::closest;
use prost_reflect::{DescriptorPool, MethodDescriptor};
use std::path::{Path, PathBuf};

/// `package.Service/Method` as written in `call:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CallName {
    pub service: String,
    pub method: String,
}

/// Reads `call:`: a service's full name (dotted, its package first), `/`, a method's name.
pub(super) fn call_name(call: &str, field: &str, ctx: &Ctx) -> Result<CallName, ScenarioError> {
    let ident = |s: &str| {
        s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let parsed = call
        .trim()
        .trim_start_matches('/')
        .split_once('/')
        .filter(|(s, m)| s.split('.').all(ident) && ident(m));
    match parsed {
        Some((service, method)) => Ok(CallName {
            service: service.to_string(),
            method: method.to_string(),
        }),
        None => Err(ctx
            .err(field, format!("`{call}` is not a method's full name: write `package.Service/Method`"))
            .with_hint("e.g. `call: permits.v1.Permits/Create` (the package, the service and the method, as the .proto declares them)")),
    }
}

/// The method `call` names in the `.proto` file `proto` (relative to the scenario file).
pub(super) fn method(
    proto: &str,
    call: &CallName,
    gfield: &str,
    ctx: &Ctx,
) -> Result<MethodDescriptor, ScenarioError> {
    let pfield = format!("{gfield}.proto");
    let pool = compile(proto, &pfield, ctx)?;
    let cfield = format!("{gfield}.call");
    let service = find_service(&pool, proto, call, &cfield, ctx)?;
    let Some(method) = service.methods().find(|m| m.name() == call.method) else {
        let names: Vec<String> = service.methods().map(|m| m.name().to_string()).collect();
        let err = ctx.err(
            &cfield,
            format!(
                "service `{}` has no method `{}`; its methods: {}",
                service.full_name(),
                call.method,
                names.join(", ")
            ),
        );
        return Err(
            match closest(&call.method, names.iter().map(String::as_str)) {
                Some(s) => err.with_hint(format!("did you mean `{}/{s}`?", service.full_name())),
                None => err,
            },
        );
    };
    if method.is_client_streaming() {
        let kind = if method.is_server_streaming() {
            "bidirectional streaming"
        } else {
            "client streaming"
        };
        return Err(ctx
            .err(
                &cfield,
                format!("`{}/{}` is a {kind} method: only unary and server-streaming calls are supported", service.full_name(), method.name()),
            )
            .with_hint("call a unary or server-streaming method (see docs/limits.md)"));
    }
    Ok(method)
}

fn find_service(
    pool: &DescriptorPool,
    proto: &str,
    call: &CallName,
    cfield: &str,
    ctx: &Ctx,
) -> Result<prost_reflect::ServiceDescriptor, ScenarioError> {
    if let Some(s) = pool.get_service_by_name(&call.service) {
        return Ok(s);
    }
    let names: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
    let listed = if names.is_empty() {
        "it declares no service".to_string()
    } else {
        format!("its services: {}", names.join(", "))
    };
    let err = ctx.err(
        cfield,
        format!("`{proto}` has no service `{}`; {listed}", call.service),
    );
    let short = pool
        .services()
        .find(|s| s.name() == call.service.rsplit('.').next().unwrap_or(""));
    Err(match short {
        Some(s) => err.with_hint(format!(
            "write the service's full name, its package first: `{}/{}`",
            s.full_name(),
            call.method
        )),
        None => match closest(&call.service, names.iter().map(String::as_str)) {
            Some(s) => err.with_hint(format!("did you mean `{s}/{}`?", call.method)),
            None => err,
        },
    })
}

/// Compiles `proto` with its imports; the import paths are its own directory and the
/// scenario file's.
fn compile(proto: &str, pfield: &str, ctx: &Ctx) -> Result<DescriptorPool, ScenarioError> {
    let base = scenario_dir(ctx);
    let tried = base.join(proto);
    let path = std::fs::canonicalize(&tried)
        .ok()
        .filter(|p| p.is_file())
        .ok_or_else(|| {
            ctx.err(
                pfield,
                format!("no .proto file at {} (from `{proto}`)", tried.display()),
            )
            .with_hint("`proto:` is relative to the scenario file's directory; leave it out to ask the server's reflection service for the types")
        })?;
    if let Some(pool) = ctx.compiled_protos.borrow().get(&path) {
        return Ok(pool.clone());
    }
    let mut includes = vec![path.parent().map(Path::to_path_buf).unwrap_or_default()];
    if let Ok(b) = std::fs::canonicalize(&base) {
        if !includes.contains(&b) {
            includes.push(b);
        }
    }
    let fail = |e: protox::Error| {
        ctx.err(pfield, format!("`{proto}` does not compile: {}", located(&e)))
            .with_hint("fix the .proto file (it is compiled as protoc would, imports from its own directory and the scenario's)")
    };
    let mut compiler = protox::Compiler::new(&includes).map_err(fail)?;
    compiler.include_imports(true);
    compiler.open_file(&path).map_err(fail)?;
    let pool = compiler.descriptor_pool();
    ctx.compiled_protos.borrow_mut().insert(path, pool.clone());
    Ok(pool)
}

/// The scenario file's directory (the current one for a bare file name).
fn scenario_dir(ctx: &Ctx) -> PathBuf {
    match Path::new(ctx.file).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// protox's message, after the `file:line:column` of its first label when it has one.
fn located(e: &protox::Error) -> String {
    use miette::Diagnostic;
    let place = e.source_code().and_then(|code| {
        let label = e.labels()?.next()?;
        let span = code.read_span(label.inner(), 0, 0).ok()?;
        let name = span
            .name()
            .map(str::to_string)
            .or_else(|| e.file().map(str::to_string))?;
        Some(format!(
            "{name}:{}:{}: ",
            span.line() + 1,
            span.column() + 1
        ))
    });
    format!("{}{e}", place.unwrap_or_default())
}
