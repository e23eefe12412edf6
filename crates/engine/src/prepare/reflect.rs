//! Message types asked of the server's reflection service (`grpc.reflection.v1`, else
//! `v1alpha`) before the run, for `grpc:` steps that name no `.proto`: the file holding the
//! service and every file it imports, as grpcurl and ghz do.

use crate::grpc::{frame_message, grpc_status, PREFIX};
use crate::http::connect::{open, TlsConnectors};
use crate::http::resolve::lookup;
use crate::origin::{host_header, split_url, Origin};
use bytes::Bytes;
use loadlab_metrics::GrpcCode;
use loadlab_scenario::grpc::GrpcCall;
use loadlab_scenario::{HttpVersion, Scenario, Step};
use prost_reflect::prost_types::FileDescriptorProto;
use prost_reflect::{DescriptorPool, MethodDescriptor};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// How long the whole exchange with one server may take.
const PATIENCE: Duration = Duration::from_secs(5);
/// Bound on what a reflection answer may hold.
const MAX_ANSWER: usize = 16 << 20;

#[derive(Debug, thiserror::Error)]
#[error("step `{step}`: cannot ask {url} for the types of `{call}` by reflection: {message}\n  hint: give the service's .proto file in the step (`grpc: {{ proto: path/to/file.proto, ... }}`), or turn on the server's reflection service")]
pub struct ReflectError {
    pub step: String,
    pub url: String,
    pub call: String,
    pub message: String,
    /// Nothing answered at the address (the run's usual "cannot connect", exit 3).
    pub unreachable: bool,
}

/// The scenario with every `grpc:` step's method found by reflection, or `None` when every
/// step already has its types (from its `.proto`).
pub fn fill_descriptors(scenario: &Scenario) -> Result<Option<Scenario>, ReflectError> {
    let mut wanted = Vec::new();
    visit(
        &scenario
            .flows
            .iter()
            .flat_map(|f| f.steps.iter())
            .collect::<Vec<_>>(),
        &mut |s| {
            if let Step::Request(r) = s {
                if let Some(call) = r.grpc.as_ref().filter(|c| c.descriptor.is_none()) {
                    wanted.push((r.name.clone(), absolute_url(scenario, &r.url), call.clone()));
                }
            }
        },
    );
    if wanted.is_empty() {
        return Ok(None);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ReflectError {
            step: wanted[0].0.clone(),
            url: wanted[0].1.clone(),
            call: wanted[0].2.full_name(),
            message: e.to_string(),
            unreachable: false,
        })?;
    let tls = TlsConnectors::new(scenario.insecure);
    // One exchange per server and service, however many steps call it.
    let mut found: BTreeMap<(String, String), MethodDescriptor> = BTreeMap::new();
    let mut pools: BTreeMap<(String, String), DescriptorPool> = BTreeMap::new();
    for (step, url, call) in &wanted {
        let fail = |(message, unreachable): (String, bool)| ReflectError {
            step: step.clone(),
            url: origin_text(url),
            call: call.full_name(),
            message,
            unreachable,
        };
        let key = (origin_text(url), call.service.clone());
        if !pools.contains_key(&key) {
            let origin = origin_of(url).map_err(|m| fail((m, false)))?;
            let pool = runtime
                .block_on(async {
                    tokio::time::timeout(PATIENCE, ask(&origin, &tls, &call.service))
                        .await
                        .unwrap_or_else(|_| Err(("no complete answer within 5 s".into(), false)))
                })
                .map_err(fail)?;
            pools.insert(key.clone(), pool);
        }
        let method = find_method(&pools[&key], call).map_err(|m| fail((m, false)))?;
        found.insert((url.clone(), call.full_name()), method);
    }
    let mut filled = scenario.clone();
    for flow in &mut filled.flows {
        fill(&mut flow.steps, scenario, &found);
    }
    Ok(Some(filled))
}

fn visit<'a>(steps: &[&'a Step], f: &mut impl FnMut(&'a Step)) {
    for s in steps {
        f(s);
        if let Step::Loop { steps, .. } | Step::Once(steps) = s {
            visit(&steps.iter().collect::<Vec<_>>(), f);
        }
    }
}

fn fill(
    steps: &mut [Step],
    scenario: &Scenario,
    found: &BTreeMap<(String, String), MethodDescriptor>,
) {
    for s in steps {
        match s {
            Step::Request(r) => {
                let url = absolute_url(scenario, &r.url);
                if let Some(call) = r.grpc.as_mut().filter(|c| c.descriptor.is_none()) {
                    let method = found.get(&(url, call.full_name())).cloned();
                    *call = Arc::new(GrpcCall {
                        descriptor: method,
                        ..GrpcCall::clone(call)
                    });
                }
            }
            Step::Loop { steps, .. } | Step::Once(steps) => fill(steps, scenario, found),
            _ => {}
        }
    }
}

fn absolute_url(scenario: &Scenario, url: &str) -> String {
    if url.contains("://") {
        url.to_string()
    } else {
        format!(
            "{}{url}",
            scenario
                .target
                .as_deref()
                .unwrap_or("")
                .trim_end_matches('/')
        )
    }
}

/// `scheme://host:port` of a URL, for messages and as a key.
fn origin_text(url: &str) -> String {
    match url
        .find("://")
        .and_then(|i| url[i + 3..].find('/').map(|j| i + 3 + j))
    {
        Some(end) => url[..end].to_string(),
        None => url.to_string(),
    }
}

fn origin_of(url: &str) -> Result<Origin, String> {
    let (tls, host, port, _) = split_url(url)?;
    Ok(Origin {
        tls,
        host_header: host_header(&host, port, tls),
        host,
        port,
        version: HttpVersion::Http2,
        shared: None,
    })
}

fn find_method(pool: &DescriptorPool, call: &GrpcCall) -> Result<MethodDescriptor, String> {
    let service = pool.get_service_by_name(&call.service).ok_or_else(|| {
        let names: Vec<_> = pool.services().map(|s| s.full_name().to_string()).collect();
        format!(
            "the server has no service `{}` (it has: {})",
            call.service,
            names.join(", ")
        )
    })?;
    let method = service
        .methods()
        .find(|m| m.name() == call.method)
        .ok_or_else(|| {
            let names: Vec<_> = service.methods().map(|m| m.name().to_string()).collect();
            format!(
                "service `{}` has no method `{}` (it has: {})",
                call.service,
                call.method,
                names.join(", ")
            )
        })?;
    if method.is_client_streaming() {
        return Err(format!(
            "`{}` is a client-streaming method: only unary and server-streaming calls are supported",
            call.full_name()
        ));
    }
    Ok(method)
}

/// The reflection service's messages (grpc/reflection/v1/reflection.proto; v1alpha has the
/// same fields).
mod wire {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Request {
        #[prost(string, tag = "1")]
        pub host: String,
        #[prost(oneof = "Asked", tags = "3, 4, 7")]
        pub asked: Option<Asked>,
    }

    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Asked {
        #[prost(string, tag = "3")]
        FileByFilename(String),
        #[prost(string, tag = "4")]
        FileContainingSymbol(String),
        #[prost(string, tag = "7")]
        ListServices(String),
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Response {
        #[prost(oneof = "Answer", tags = "4, 7")]
        pub answer: Option<Answer>,
    }

    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Answer {
        #[prost(message, tag = "4")]
        Files(Files),
        #[prost(message, tag = "7")]
        Error(Error),
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Files {
        #[prost(bytes = "vec", repeated, tag = "1")]
        pub file_descriptor_proto: Vec<Vec<u8>>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Error {
        #[prost(int32, tag = "1")]
        pub error_code: i32,
        #[prost(string, tag = "2")]
        pub error_message: String,
    }
}

/// Asks one server for the file defining `service` and, file by file, whatever it imports.
/// Errors say whether the server could not be reached at all.
async fn ask(
    origin: &Origin,
    tls: &TlsConnectors,
    service: &str,
) -> Result<DescriptorPool, (String, bool)> {
    let addr = match origin.host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, origin.port),
        Err(_) => lookup(&origin.host, origin.port)
            .await
            .map_err(|m| (m, true))?,
    };
    let tls = origin.tls.then_some(tls);
    let (stream, _, _) = open(origin, addr, None, tls, None)
        .await
        .map_err(|f| (f.message, true))?;
    ask_on(stream, origin, service)
        .await
        .map_err(|m| (m, false))
}

async fn ask_on(
    stream: crate::http::stream::Stream,
    origin: &Origin,
    service: &str,
) -> Result<DescriptorPool, String> {
    let (mut send, connection) = h2::client::handshake(stream)
        .await
        .map_err(|e| format!("HTTP/2 handshake: {e}"))?;
    tokio::spawn(connection);
    let mut files: BTreeMap<String, FileDescriptorProto> = BTreeMap::new();
    let mut asked = wire::Asked::FileContainingSymbol(service.to_string());
    let mut version = None;
    loop {
        let (answer, v) = exchange(&mut send, origin, version, &asked).await?;
        version = Some(v);
        match answer {
            wire::Answer::Files(f) => {
                for bytes in f.file_descriptor_proto {
                    let file = <FileDescriptorProto as prost::Message>::decode(&bytes[..])
                        .map_err(|e| format!("a file descriptor that does not decode: {e}"))?;
                    files.insert(file.name().to_string(), file);
                }
            }
            wire::Answer::Error(e) => {
                return Err(format!(
                    "the reflection service answered error {}: {}",
                    e.error_code, e.error_message
                ))
            }
        }
        let missing = files
            .values()
            .flat_map(|f| f.dependency.iter())
            .find(|d| !files.contains_key(*d))
            .cloned();
        match missing {
            Some(name) => asked = wire::Asked::FileByFilename(name),
            None => break,
        }
    }
    let mut pool = DescriptorPool::new();
    pool.add_file_descriptor_protos(files.into_values())
        .map_err(|e| format!("the server's descriptors do not build: {e}"))?;
    Ok(pool)
}

/// One `ServerReflectionInfo` call asking one thing: `v1` first (unless `version` says which
/// the server speaks), `v1alpha` when the server does not implement `v1`.
async fn exchange(
    send: &mut h2::client::SendRequest<Bytes>,
    origin: &Origin,
    version: Option<&'static str>,
    asked: &wire::Asked,
) -> Result<(wire::Answer, &'static str), String> {
    let versions: &[&'static str] = match version {
        Some(v) => &[v][..],
        None => &["v1", "v1alpha"],
    };
    let mut last = String::new();
    for v in versions.iter().copied() {
        match call(send, origin, v, asked).await? {
            Ok(answer) => return Ok((answer, v)),
            Err(status) => last = status,
        }
    }
    Err(last)
}

/// `Ok(Err(..))`: this version is not served (try the next).
async fn call(
    send: &mut h2::client::SendRequest<Bytes>,
    origin: &Origin,
    version: &str,
    asked: &wire::Asked,
) -> Result<Result<wire::Answer, String>, String> {
    let uri = format!(
        "{}://{}/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
        if origin.tls { "https" } else { "http" },
        origin.host_header
    );
    let head = http::Request::post(uri)
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(())
        .map_err(|e| e.to_string())?;
    let mut body = Vec::new();
    frame_message(
        &wire::Request {
            host: String::new(),
            asked: Some(asked.clone()),
        },
        &mut body,
    );
    let mut ready = send.clone().ready().await.map_err(|e| e.to_string())?;
    let (response, mut stream) = ready.send_request(head, false).map_err(|e| e.to_string())?;
    stream
        .send_data(Bytes::from(body), true)
        .map_err(|e| e.to_string())?;
    *send = ready;
    let response = response.await.map_err(|e| e.to_string())?;
    if response.status() == http::StatusCode::NOT_FOUND {
        return Ok(Err(format!("no reflection service ({version}: HTTP 404)")));
    }
    if response.status() != http::StatusCode::OK {
        return Err(format!(
            "HTTP status {} from the reflection service",
            response.status()
        ));
    }
    let only_status = grpc_status(response.headers());
    let mut body = response.into_body();
    let mut data = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        let _ = body.flow_control().release_capacity(chunk.len());
        data.extend_from_slice(&chunk);
        if data.len() > MAX_ANSWER {
            return Err(format!("a reflection answer above {MAX_ANSWER} bytes"));
        }
    }
    let trailers = body.trailers().await.map_err(|e| e.to_string())?;
    let status = only_status.or_else(|| trailers.as_ref().and_then(grpc_status));
    match status {
        Some((GrpcCode::Ok, _)) => {}
        Some((GrpcCode::Unimplemented, m)) => {
            return Ok(Err(format!("no reflection service (UNIMPLEMENTED: {m})")))
        }
        Some((code, m)) => return Err(format!("the reflection call ended {code}: {m}")),
        None => return Err("the reflection call ended without a grpc-status".into()),
    }
    if data.len() < PREFIX {
        return Err("the reflection service answered no message".into());
    }
    let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
    let payload = data
        .get(PREFIX..PREFIX + len)
        .ok_or("a truncated reflection answer")?;
    let answer = <wire::Response as prost::Message>::decode(payload)
        .map_err(|e| format!("a reflection answer that does not decode: {e}"))?;
    answer
        .answer
        .map(Ok)
        .ok_or_else(|| "a reflection answer with neither files nor an error".to_string())
}
